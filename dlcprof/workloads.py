"""The workload contract: what a user's file looks like, and how dlcprof finds and loads it.

A workload is a Python file (or ``module:function``) written without importing
dlcprof::

    \"\"\"One-line description of what it demonstrates.\"\"\"

    def build(device, dtype, size="default"):  # `size` is optional: "small" | "default"
        return model_or_function, example_args_tuple

    def inputs_for(n, device, dtype):  # optional: args at another size n (shape sweeps)
        ...

    SIZES = [8, 16, 32, 64]  # optional: default sweep sizes
    SMALL_SIZES = [4, 8]  # optional: sweep sizes for --size small

Targets: a bundled name (``pointwise-chain``), ``path/to/file.py``,
``path/to/file.py:func`` (``func`` plays the role of ``build``) and
``package.module:func``.

``list_bundled()`` and ``resolve()`` never import torch or run the user's code
(they read files with ``ast``): the UI calls them. Executing the module is the
worker's job (``dlcprof.worker.load``).
"""

from __future__ import annotations

import ast
import difflib
import importlib
import importlib.machinery
import importlib.resources
import importlib.util
import inspect
import os
import re
import sys
import traceback as traceback_mod
from pathlib import Path
from typing import Any

from dlcprof.data import data

DEFAULT_WORKLOAD = "pointwise-chain"
BUNDLED_PACKAGE = "dlcprof.bundled"

# Teaching order for `dlcprof list`: fusion wins first, then the cases where
# compiling gains little, then shapes, graph breaks and training. Bundled
# files not named here follow alphabetically.
TEACHING_ORDER = (
    "pointwise-chain",
    "pointwise-epilogue",
    "layernorm-residual",
    "attention",
    "gelu-mlp",
    "conv-bn-relu",
    "transformer-block",
    "tiny-ops",
    "variable-length",
    "graph-breaks",
    "training-step",
)

TARGET_HINT = "give a path to a .py file, a bundled name from 'dlcprof list', or module:function"


class WorkloadError(Exception):
    """A workload that cannot be found or loaded.

    ``str()`` is one line naming what to fix; ``traceback`` keeps the full
    traceback (user frames only) when the user's code raised.
    """

    def __init__(self, message: str, traceback: str = "", bad_input: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.traceback = traceback
        # The target breaks the contract (exit 2), rather than the user's code
        # raising while it ran (a failed run, exit 1).
        self.bad_input = bad_input

    def __str__(self) -> str:
        return self.message


@data
class WorkloadInfo:
    """A bundled workload as `dlcprof list` shows it (read with ast, not run)."""

    name: str
    description: str
    path: str
    sizes: list[int]
    small_sizes: list[int]
    has_inputs_for: bool = False


@data
class WorkloadSpec:
    """A resolved target: where the code is and which function builds it.

    Exactly one of ``path`` (an absolute file path) or ``module`` (a dotted
    module name) is set.
    """

    name: str  # display name: bundled name, file stem (stem:func) or module:func
    target: str  # as the user gave it
    path: str | None = None
    module: str | None = None
    function: str = "build"
    bundled: bool = False
    # What the source shows without running it: None where the module builds
    # its namespace at run time (lazy exports, star imports) and the worker decides.
    has_inputs_for: bool | None = None
    has_sizes: bool | None = None

    @property
    def source(self) -> str:
        """How messages name the code: the path as typed, the module, or the bundled name."""
        if self.bundled:
            return self.name
        if self.module is not None:
            return self.module
        return _split_target(self.target)[0]


# --- bundled workloads ------------------------------------------------------------


def _bundled_dir() -> Path | None:
    """The folder holding the bundled workloads, installed or in a source checkout."""
    try:
        root = importlib.resources.files(BUNDLED_PACKAGE)
    except (ModuleNotFoundError, ImportError):
        root = None
    if root is not None:
        # Not on a file system (zip): not supported.
        path = Path(root) if isinstance(root, os.PathLike) else None
        if path is not None and path.is_dir():
            return path
    # A source checkout run without installing: the top-level workloads/ folder.
    here = Path(__file__).resolve().parent.parent / "workloads"
    return here if here.is_dir() else None


def _bundled_files() -> dict[str, Path]:
    folder = _bundled_dir()
    if folder is None:
        return {}
    files = {}
    for p in folder.iterdir():
        if p.suffix == ".py" and not p.name.startswith("_") and p.is_file():
            files[p.stem.replace("_", "-")] = p
    return files


def _order_key(name: str) -> tuple[int, str]:
    try:
        return (TEACHING_ORDER.index(name), name)
    except ValueError:
        return (len(TEACHING_ORDER), name)


def bundled_names() -> list[str]:
    return sorted(_bundled_files(), key=_order_key)


def list_bundled() -> list[WorkloadInfo]:
    """The bundled workloads in teaching order, read with ast (nothing runs)."""
    infos = []
    for name, path in sorted(_bundled_files().items(), key=lambda kv: _order_key(kv[0])):
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        except (OSError, SyntaxError, ValueError):
            continue
        facts = _module_facts(tree)
        infos.append(
            WorkloadInfo(
                name=name,
                description=first_line(ast.get_docstring(tree)),
                path=str(path),
                sizes=facts.sizes or [],
                small_sizes=(
                    facts.small_sizes
                    if facts.small_sizes is not None
                    else sorted(facts.sizes or [])[:3]
                ),
                has_inputs_for="inputs_for" in facts.functions,
            )
        )
    return infos


# --- resolve: find the code without running it -------------------------------------


def _split_target(target: str) -> tuple[str, str | None]:
    """'a/b.py:fn' -> ('a/b.py', 'fn'); a Windows drive colon is not a separator."""
    head, sep, tail = target.rpartition(":")
    if not sep or not tail or "/" in tail or "\\" in tail or not head:
        return target, None
    if re.fullmatch(r"[A-Za-z]", head):  # C:foo -> a drive, not module:function
        return target, None
    return head, tail


def _looks_like_path(text: str) -> bool:
    return (
        text.endswith(".py")
        or "/" in text
        or "\\" in text
        or text.startswith(".")
        or text.startswith("~")
    )


def resolve(target: str) -> WorkloadSpec:
    """Turn a target string into a WorkloadSpec; one-line WorkloadError when it is not there."""
    target = target.strip()
    if not target:
        raise WorkloadError(f"no workload given: {TARGET_HINT}")
    where, function = _split_target(target)
    if function is not None and not function.isidentifier():
        raise WorkloadError(f"invalid function name {function!r} in {target!r}: {TARGET_HINT}")

    bundled = _bundled_files()
    key = where.replace("_", "-")
    if not _looks_like_path(where) and key in bundled:
        path = bundled[key]
        func = function or "build"
        facts = _check_source(path, func, explicit=function is not None, shown=key)
        name = key if func == "build" else f"{key}:{func}"
        return _with_facts(
            WorkloadSpec(name, target, path=str(path), function=func, bundled=True), facts
        )

    if _looks_like_path(where) or (function is None and os.path.exists(where)):
        return _resolve_file(target, where, function)

    if function is None:
        raise WorkloadError(_unknown_name(where))
    return _resolve_module(target, where, function)


def _unknown_name(where: str) -> str:
    names = bundled_names()
    near = difflib.get_close_matches(where.replace("_", "-"), names, n=3, cutoff=0.6)
    if near:
        return (
            f"unknown workload {where!r}: did you mean {' or '.join(near)}? "
            "('dlcprof list' shows every bundled one)"
        )
    return (
        f"unknown workload {where!r}: bundled ones are {', '.join(names) or '(none installed)'} "
        "(or give a path to a .py file, or module:function)"
    )


def _resolve_file(target: str, where: str, function: str | None) -> WorkloadSpec:
    path = os.path.abspath(os.path.expanduser(where))
    if os.path.isdir(path):
        raise WorkloadError(f"workload path is a folder: {where} (give a .py file inside it)")
    if not os.path.isfile(path):
        raise WorkloadError(f"workload file not found: {where} ({TARGET_HINT})")
    func = function or "build"
    facts = _check_source(Path(path), func, explicit=function is not None, shown=where)
    stem = Path(path).stem
    name = stem if func == "build" else f"{stem}:{func}"
    return _with_facts(WorkloadSpec(name, target, path=path, function=func), facts)


def _resolve_module(target: str, module: str, function: str) -> WorkloadSpec:
    if not all(part.isidentifier() for part in module.split(".")):
        raise WorkloadError(f"workload file not found: {module} ({TARGET_HINT})")
    spec = find_module_spec(module)
    if spec is None:
        raise WorkloadError(
            f"no module named {module!r} (for {target}: check the name, and run from the "
            "folder that holds it or add that folder to PYTHONPATH)"
        )
    origin = getattr(spec, "origin", None)
    facts = None
    if origin and origin.endswith(".py") and os.path.isfile(origin):
        # A package may export lazily (transformers does): a name the source does
        # not show is the worker's to look up after importing it.
        facts = _check_source(Path(origin), function, explicit=True, shown=module, strict=False)
    return _with_facts(
        WorkloadSpec(f"{module}:{function}", target, module=module, function=function), facts
    )


def _with_facts(spec: WorkloadSpec, facts: _Facts | None) -> WorkloadSpec:
    if facts is not None and not facts.dynamic and spec.function == "build":
        spec.has_inputs_for = "inputs_for" in facts.names
        spec.has_sizes = bool({"SIZES", "SMALL_SIZES"} & facts.names)
    return spec


def check_sweep(spec: WorkloadSpec, shapes: list[int] | None) -> None:
    """Say now, before torch is imported, what a shape sweep lacks where the source shows it."""
    if spec.function != "build":  # inputs_for makes build()'s args, no other function's
        raise WorkloadError(
            f"workload {spec.source}: a shape sweep runs on build() only, not on "
            f"{spec.function}() (inputs_for(size, device, dtype) makes build()'s args)"
        )
    if spec.has_inputs_for is False:
        raise WorkloadError(
            f"workload {spec.source} has no inputs_for(size, device, dtype): cannot sweep "
            "shapes (add one that returns the args at another size)"
        )
    if not shapes and spec.has_sizes is False:
        raise WorkloadError(
            f"workload {spec.source} declares no SIZES: give the sizes with --shapes 16,32,64"
        )


def find_module_spec(module: str) -> Any:
    """find_spec without running package __init__ files where possible (so no torch)."""
    parts = module.split(".")
    search = _search_path()
    try:
        spec = importlib.machinery.PathFinder.find_spec(parts[0], search)
        for i in range(1, len(parts)):
            if spec is None or not spec.submodule_search_locations:
                spec = None
                break
            spec = importlib.machinery.PathFinder.find_spec(
                ".".join(parts[: i + 1]), list(spec.submodule_search_locations)
            )
    except (ImportError, ValueError):
        spec = None
    if spec is not None:
        return spec
    # Installed finders (editable installs, namespace tricks): the standard way,
    # which may import the parent packages.
    old = list(sys.path)
    try:
        sys.path[:] = search
        return importlib.util.find_spec(module)
    except Exception:
        return None
    finally:
        sys.path[:] = old


def _search_path() -> list[str]:
    """sys.path with the current folder first, as `python -m` would have it."""
    cwd = os.getcwd()
    rest = [p for p in sys.path if p not in ("", cwd)]
    return [cwd, *rest]


@data
class _Facts:
    functions: list[str]
    names: set[str]  # every top-level name bound (defs, assignments, imports)
    dynamic: bool  # names appear at run time: star imports, __getattr__, sys.modules[...] =
    sizes: list[int] | None
    small_sizes: list[int] | None
    signatures: dict[str, inspect.Signature]  # of the top-level functions
    literals: dict[str, Any]  # top-level names bound to a literal


def _module_facts(tree: ast.Module) -> _Facts:
    functions: list[str] = []
    names: set[str] = set()
    star = False
    values: dict[str, Any] = {}
    signatures: dict[str, inspect.Signature] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(node.name)
            names.add(node.name)
            signatures[node.name] = _signature(node.args)
        elif isinstance(node, ast.ClassDef):
            names.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            for t in targets:
                for n in ast.walk(t):
                    if isinstance(n, ast.Name):
                        names.add(n.id)
                if isinstance(t, ast.Name) and node.value is not None:
                    try:
                        values[t.id] = ast.literal_eval(node.value)
                    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
                        pass
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                if alias.name == "*":
                    star = True
                else:
                    names.add((alias.asname or alias.name).split(".")[0])
        else:
            # if/try blocks at top level may define things too: count their names.
            for n in ast.walk(node):
                if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    names.add(n.name)
                elif isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store):
                    names.add(n.id)
    return _Facts(
        functions=functions,
        names=names,
        dynamic=star or "__getattr__" in names or _rebinds_namespace(tree),
        sizes=int_list(values.get("SIZES")),
        small_sizes=int_list(values.get("SMALL_SIZES")),
        signatures=signatures,
        literals=values,
    )


def _rebinds_namespace(tree: ast.Module) -> bool:
    """``sys.modules[__name__] = LazyModule(...)`` or ``globals()[...]``: the lazy
    export patterns whose names no parse can see."""
    for n in ast.walk(tree):
        if isinstance(n, ast.Subscript) and isinstance(n.ctx, ast.Store):
            v = n.value
            if isinstance(v, ast.Attribute) and v.attr == "modules":
                return True
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Name) and n.func.id == "globals":
            return True
    return False


def _signature(a: ast.arguments) -> inspect.Signature:
    """The parameters of a function as the source declares them (defaults elided)."""
    P = inspect.Parameter
    params: list[inspect.Parameter] = []
    positional = [*a.posonlyargs, *a.args]
    first_default = len(positional) - len(a.defaults)
    for i, arg in enumerate(positional):
        kind = P.POSITIONAL_ONLY if i < len(a.posonlyargs) else P.POSITIONAL_OR_KEYWORD
        default = ... if i >= first_default else P.empty
        params.append(P(arg.arg, kind, default=default))
    if a.vararg is not None:
        params.append(P(a.vararg.arg, P.VAR_POSITIONAL))
    for arg, d in zip(a.kwonlyargs, a.kw_defaults, strict=True):
        params.append(P(arg.arg, P.KEYWORD_ONLY, default=P.empty if d is None else ...))
    if a.kwarg is not None:
        params.append(P(a.kwarg.arg, P.VAR_KEYWORD))
    return inspect.Signature(params)


def accepts_size(sig: inspect.Signature) -> bool:
    """Does a build function with this signature take ``size=``?"""
    p = sig.parameters.get("size")
    if p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
        return True
    return any(q.kind is q.VAR_KEYWORD for q in sig.parameters.values())


def check_build_signature(sig: inspect.Signature, function: str, shown: str) -> None:
    """A build function is called as ``f(device, dtype)``, plus ``size=`` when it
    takes one: one-line WorkloadError naming the fix when ``sig`` cannot be."""
    try:
        sig.bind(None, None, **({"size": "default"} if accepts_size(sig) else {}))
    except TypeError:
        shown_sig = str(sig).replace("=Ellipsis", "=...")
        raise WorkloadError(
            f"{function}{shown_sig} in {shown} is not a build function: it must accept "
            f'(device, dtype), optionally size="default", and return (fn, args)'
        ) from None


def int_list(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
    ):
        return list(value)
    return None


def _check_source(
    path: Path, function: str, *, explicit: bool, shown: str, strict: bool = True
) -> _Facts:
    """Parse the file and check what the source shows: no syntax error, `function`
    defined and callable as a build function, SIZES a list of positive integers.
    ``strict`` False: a name the source does not show is left to the worker."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"cannot read workload {shown}: {e}") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise WorkloadError(
            syntax_message(shown, e), "".join(traceback_mod.format_exception_only(e))
        ) from None
    except (ValueError, RecursionError, MemoryError) as e:  # null bytes, absurd nesting
        raise WorkloadError(f"cannot parse workload {shown}: {type(e).__name__}: {e}") from None
    facts = _module_facts(tree)
    if function in facts.signatures:
        check_build_signature(facts.signatures[function], function, shown)
    elif function not in facts.names and not facts.dynamic and strict:
        raise missing_function(shown, function, explicit, facts.functions)
    for attr in ("SIZES", "SMALL_SIZES"):
        if attr in facts.literals and int_list(facts.literals[attr]) is None:
            raise WorkloadError(
                f"{attr} in {shown} must be a list of positive integers, "
                f"got {facts.literals[attr]!r}"
            )
    return facts


def missing_function(shown: str, function: str, explicit: bool, defined: list[str]) -> Exception:
    if not explicit:
        # Most often a training script: say how to make it a workload, or run it as is.
        return WorkloadError(
            f"{shown} defines no build(device, dtype) function: a script is not a workload. "
            "Add a build() that returns one step and its inputs (a training step: "
            "docs/training-step.md), name the function to use "
            f"({shown}:my_function), or profile the script as it runs: "
            f"dlcprof -- python {shown}"
        )
    listing = f"it defines: {', '.join(defined)}" if defined else "it defines no functions"
    return WorkloadError(f"no function {function!r} in {shown} ({listing})")


def syntax_message(shown: str, e: SyntaxError) -> str:
    line = f" (line {e.lineno})" if e.lineno else ""
    return f"workload {shown} has a syntax error: {e.msg}{line}"


def first_line(text: str | None) -> str:
    if not text:
        return ""
    for line in str(text).strip().splitlines():
        if line.strip():
            return line.strip()
    return ""
