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
(they read files with ``ast``): the UI calls them. ``load()`` executes the
module and belongs in the worker.
"""

from __future__ import annotations

import ast
import importlib
import importlib.machinery
import importlib.resources
import importlib.util
import inspect
import itertools
import os
import re
import sys
import traceback as traceback_mod
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

DEFAULT_WORKLOAD = "pointwise-chain"
BUNDLED_PACKAGE = "dlcprof.bundled"

# Teaching order for `dlcprof list`: fusion wins first, then the cases where
# compiling gains little, then shapes, graph breaks and training. Bundled
# files not named here follow alphabetically.
TEACHING_ORDER = (
    "pointwise-chain",
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

_TARGET_HINT = "give a path to a .py file, a bundled name from 'dlcprof list', or module:function"


class WorkloadError(Exception):
    """A workload that cannot be found or loaded.

    ``str()`` is one line naming what to fix; ``traceback`` keeps the full
    traceback (user frames only) when the user's code raised.
    """

    def __init__(self, message: str, traceback: str = "") -> None:
        super().__init__(message)
        self.message = message
        self.traceback = traceback

    def __str__(self) -> str:
        return self.message


@dataclass
class WorkloadInfo:
    """A bundled workload as `dlcprof list` shows it (read with ast, not run)."""

    name: str
    description: str
    path: str
    sizes: list[int]
    small_sizes: list[int]
    has_inputs_for: bool = False


@dataclass
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

    @property
    def source(self) -> str:
        """How messages name the code: the path as typed, the module, or the bundled name."""
        if self.bundled:
            return self.name
        if self.module is not None:
            return self.module
        return _split_target(self.target)[0]


@dataclass
class LoadedWorkload:
    """An imported workload (worker only)."""

    name: str
    description: str
    spec: WorkloadSpec
    build_fn: Callable[..., Any]
    inputs_for_fn: Callable[..., Any] | None = None
    declared_sizes: list[int] = field(default_factory=list)
    declared_small_sizes: list[int] | None = None
    module: Any = None

    def build(self, device: Any, dtype: Any, size: str = "default") -> tuple[Any, tuple]:
        """``(fn, args)``; ``size`` is passed only when the build function accepts it."""
        kwargs = {"size": size} if _accepts_kw(self.build_fn, "size") else {}
        where = f"{self.spec.function}()"
        result = self._call(self.build_fn, where, device, dtype, **kwargs)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise WorkloadError(
                f"{where} in {self.spec.source} must return (fn, args), got {_describe(result)}"
            )
        fn, args = result
        if not callable(fn):
            raise WorkloadError(
                f"{where} in {self.spec.source} must return (fn, args) with a callable fn, "
                f"got {_describe(fn)}"
            )
        return fn, self._as_args(args, where)

    @property
    def inputs_for(self) -> Callable[[int, Any, Any], tuple] | None:
        """``inputs_for(n, device, dtype) -> args``, or None when the workload has none."""
        if self.inputs_for_fn is None:
            return None

        def inputs_for(n: int, device: Any, dtype: Any) -> tuple:
            args = self._call(self.inputs_for_fn, "inputs_for()", n, device, dtype)
            return self._as_args(args, "inputs_for()")

        return inputs_for

    def sizes(self, size: str = "default") -> list[int]:
        """Sweep sizes for a preset: SIZES, or SMALL_SIZES for "small" (else the 3 smallest)."""
        if size == "small":
            if self.declared_small_sizes is not None:
                return list(self.declared_small_sizes)
            return sorted(self.declared_sizes)[:3]
        return list(self.declared_sizes)

    def _call(self, fn: Callable[..., Any], where: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise _user_error(e, self.spec, where) from e

    def _as_args(self, args: Any, where: str) -> tuple:
        if isinstance(args, tuple):
            return args
        if isinstance(args, list):
            return tuple(args)
        if isinstance(args, dict):
            raise WorkloadError(
                f"{where} in {self.spec.source} returned a dict of args: "
                "return a tuple of positional args instead"
            )
        return (args,)  # a single tensor: the one positional arg


# --- bundled workloads ------------------------------------------------------------


def _bundled_dir() -> Path | None:
    """The folder holding the bundled workloads, installed or in a source checkout."""
    try:
        root = importlib.resources.files(BUNDLED_PACKAGE)
    except (ModuleNotFoundError, ImportError):
        root = None
    if root is not None:
        try:
            path = Path(os.fspath(root))  # type: ignore[arg-type]
        except TypeError:
            path = None  # not on a file system (zip): not supported
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
                description=_first_line(ast.get_docstring(tree)),
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
        raise WorkloadError(f"no workload given: {_TARGET_HINT}")
    where, function = _split_target(target)
    if function is not None and not function.isidentifier():
        raise WorkloadError(f"invalid function name {function!r} in {target!r}: {_TARGET_HINT}")

    bundled = _bundled_files()
    key = where.replace("_", "-")
    if not _looks_like_path(where) and key in bundled:
        path = bundled[key]
        func = function or "build"
        _check_source(path, func, explicit=function is not None, shown=key)
        name = key if func == "build" else f"{key}:{func}"
        return WorkloadSpec(name, target, path=str(path), function=func, bundled=True)

    if _looks_like_path(where) or (function is None and os.path.exists(where)):
        return _resolve_file(target, where, function)

    if function is None:
        names = ", ".join(bundled_names()) or "(none installed)"
        raise WorkloadError(
            f"unknown workload {where!r}: bundled ones are {names} "
            "(or give a path to a .py file, or module:function)"
        )
    return _resolve_module(target, where, function)


def _resolve_file(target: str, where: str, function: str | None) -> WorkloadSpec:
    path = os.path.abspath(os.path.expanduser(where))
    if os.path.isdir(path):
        raise WorkloadError(f"workload path is a folder: {where} (give a .py file inside it)")
    if not os.path.isfile(path):
        raise WorkloadError(f"workload file not found: {where} ({_TARGET_HINT})")
    func = function or "build"
    _check_source(Path(path), func, explicit=function is not None, shown=where)
    stem = Path(path).stem
    name = stem if func == "build" else f"{stem}:{func}"
    return WorkloadSpec(name, target, path=path, function=func)


def _resolve_module(target: str, module: str, function: str) -> WorkloadSpec:
    if not all(part.isidentifier() for part in module.split(".")):
        raise WorkloadError(f"workload file not found: {module} ({_TARGET_HINT})")
    spec = _find_module_spec(module)
    if spec is None:
        raise WorkloadError(
            f"no module named {module!r} (for {target}: check the name, and run from the "
            "folder that holds it or add that folder to PYTHONPATH)"
        )
    origin = getattr(spec, "origin", None)
    if origin and origin.endswith(".py") and os.path.isfile(origin):
        _check_source(Path(origin), function, explicit=True, shown=module)
    return WorkloadSpec(f"{module}:{function}", target, module=module, function=function)


def _find_module_spec(module: str) -> Any:
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


@dataclass
class _Facts:
    functions: list[str]
    names: set[str]  # every top-level name bound (defs, assignments, imports)
    star_import: bool
    sizes: list[int] | None
    small_sizes: list[int] | None


def _module_facts(tree: ast.Module) -> _Facts:
    functions: list[str] = []
    names: set[str] = set()
    star = False
    values: dict[str, Any] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            functions.append(node.name)
            names.add(node.name)
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
        star_import=star,
        sizes=_int_list(values.get("SIZES")),
        small_sizes=_int_list(values.get("SMALL_SIZES")),
    )


def _int_list(value: Any) -> list[int] | None:
    if isinstance(value, (list, tuple)) and all(
        isinstance(v, int) and not isinstance(v, bool) and v > 0 for v in value
    ):
        return list(value)
    return None


def _check_source(path: Path, function: str, *, explicit: bool, shown: str) -> None:
    """Parse the file and check that it defines `function` (a syntax error is reported now)."""
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as e:
        raise WorkloadError(f"cannot read workload {shown}: {e}") from None
    try:
        tree = ast.parse(text, filename=str(path))
    except SyntaxError as e:
        raise WorkloadError(
            _syntax_message(shown, e), "".join(traceback_mod.format_exception_only(e))
        ) from None
    facts = _module_facts(tree)
    if function in facts.names or facts.star_import or "__getattr__" in facts.names:
        return
    raise _missing_function(shown, function, explicit, facts.functions)


def _missing_function(shown: str, function: str, explicit: bool, defined: list[str]) -> Exception:
    if not explicit:
        return WorkloadError(
            f"{shown} defines no build(device, dtype) function "
            f"(add one, or name the function to use: {shown}:my_function)"
        )
    listing = f"it defines: {', '.join(defined)}" if defined else "it defines no functions"
    return WorkloadError(f"no function {function!r} in {shown} ({listing})")


def _syntax_message(shown: str, e: SyntaxError) -> str:
    line = f" (line {e.lineno})" if e.lineno else ""
    return f"workload {shown} has a syntax error: {e.msg}{line}"


# --- load: execute the module (worker only) ----------------------------------------

_counter = itertools.count(1)


def load(spec: WorkloadSpec) -> LoadedWorkload:
    """Import the workload's module and pick out its contract (runs the user's code)."""
    if spec.path is not None:
        module = _exec_file(spec)
    elif spec.module is not None:
        module = _import_module(spec)
    else:
        raise WorkloadError(f"workload {spec.target!r} names neither a file nor a module")

    build_fn = getattr(module, spec.function, None)
    if build_fn is None:
        defined = [
            k
            for k, v in vars(module).items()
            if inspect.isfunction(v) and getattr(v, "__module__", None) == module.__name__
        ]
        raise _missing_function(spec.source, spec.function, spec.function != "build", defined)
    if not callable(build_fn):
        raise WorkloadError(
            f"{spec.function} in {spec.source} is a {type(build_fn).__name__}, not a function"
        )
    _check_build_signature(build_fn, spec)

    inputs_for = getattr(module, "inputs_for", None) if spec.function == "build" else None
    if inputs_for is not None and not callable(inputs_for):
        inputs_for = None
    sizes = _declared_sizes(module, "SIZES", spec) or []
    small = _declared_sizes(module, "SMALL_SIZES", spec)

    description = ""
    if spec.function != "build":
        description = _first_line(inspect.getdoc(build_fn))
    description = description or _first_line(getattr(module, "__doc__", None))
    if not description and spec.function == "build":
        description = _first_line(inspect.getdoc(build_fn))

    return LoadedWorkload(
        name=spec.name,
        description=description,
        spec=spec,
        build_fn=build_fn,
        inputs_for_fn=inputs_for,
        declared_sizes=sizes,
        declared_small_sizes=small,
        module=module,
    )


def _exec_file(spec: WorkloadSpec) -> Any:
    assert spec.path is not None
    path = spec.path
    if not os.path.isfile(path):
        raise WorkloadError(f"workload file not found: {spec.source} ({_TARGET_HINT})")
    stem = re.sub(r"\W", "_", Path(path).stem)
    prefix = "dlcprof_bundled" if spec.bundled else "dlcprof_workload"
    mod_name = f"{prefix}_{stem}_{next(_counter)}"
    loader = importlib.machinery.SourceFileLoader(mod_name, path)
    mspec = importlib.util.spec_from_file_location(mod_name, path, loader=loader)
    if mspec is None:
        raise WorkloadError(f"cannot load workload {spec.source}: not a Python file")
    module = importlib.util.module_from_spec(mspec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its siblings
    sys.modules[mod_name] = module  # dataclasses, pickling and typing look it up
    try:
        loader.exec_module(module)
    except BaseException as e:
        sys.modules.pop(mod_name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise _user_error(e, spec, None) from e
    return module


def _import_module(spec: WorkloadSpec) -> Any:
    assert spec.module is not None
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(spec.module)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        if isinstance(e, ModuleNotFoundError) and e.name and spec.module.startswith(e.name):
            raise WorkloadError(
                f"no module named {spec.module!r} (for {spec.target}: check the name, and run "
                "from the folder that holds it or add that folder to PYTHONPATH)"
            ) from e
        raise _user_error(e, spec, None) from e


def _check_build_signature(fn: Any, spec: WorkloadSpec) -> None:
    try:
        sig = inspect.signature(fn)
    except (TypeError, ValueError):
        return  # builtins, C callables: just call them
    try:
        sig.bind(None, None, **({"size": "default"} if _accepts_kw(fn, "size") else {}))
    except TypeError:
        raise WorkloadError(
            f"{spec.function}{sig} in {spec.source} must accept (device, dtype) "
            f'and optionally size="default"'
        ) from None


def _accepts_kw(fn: Any, name: str) -> bool:
    try:
        params = inspect.signature(fn).parameters
    except (TypeError, ValueError):
        return False
    p = params.get(name)
    if p is not None and p.kind in (p.POSITIONAL_OR_KEYWORD, p.KEYWORD_ONLY):
        return True
    return any(q.kind is q.VAR_KEYWORD for q in params.values())


def _declared_sizes(module: Any, attr: str, spec: WorkloadSpec) -> list[int] | None:
    value = getattr(module, attr, None)
    if value is None:
        return None
    sizes = _int_list(value)
    if sizes is None:
        raise WorkloadError(
            f"{attr} in {spec.source} must be a list of positive integers, got {value!r}"
        )
    return sizes


def _user_files(spec: WorkloadSpec) -> set[str]:
    files = set()
    if spec.path:
        files.add(os.path.abspath(spec.path))
    elif spec.module:
        mod = sys.modules.get(spec.module)
        origin = getattr(mod, "__file__", None)
        if origin is None:
            found = _find_module_spec(spec.module)
            origin = getattr(found, "origin", None)
        if origin:
            files.add(os.path.abspath(origin))
    return files


def _user_error(e: BaseException, spec: WorkloadSpec, where: str | None) -> WorkloadError:
    """A one-line WorkloadError for an exception raised by the user's code.

    The message names the line in the user's file; ``traceback`` holds the full
    traceback with dlcprof's and importlib's own frames trimmed off the top.
    """
    files = _user_files(spec)
    if isinstance(e, SyntaxError) and e.filename and os.path.abspath(e.filename) in files:
        tb_text = "".join(traceback_mod.format_exception_only(e))
        return WorkloadError(_syntax_message(spec.source, e), tb_text)

    tb = e.__traceback__
    # Drop the frames of this module and of importlib's bootstrap.
    while tb is not None and _is_plumbing(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    tb_text = "".join(traceback_mod.format_exception(type(e), e, tb))

    line, func = None, None
    t = tb
    while t is not None:
        if os.path.abspath(t.tb_frame.f_code.co_filename) in files:
            line, func = t.tb_lineno, t.tb_frame.f_code.co_name
        t = t.tb_next
    detail = _first_line(str(e))
    what = type(e).__name__ + (f": {detail}" if detail else "")
    where_txt = ""
    if line is not None:
        where_txt = f" (line {line}" + (f", in {func}" if func and func != "<module>" else "") + ")"
    elif where:
        where_txt = f" (in {where})"
    return WorkloadError(f"workload {spec.source} raised {what}{where_txt}", tb_text)


def _is_plumbing(filename: str) -> bool:
    return filename.startswith("<frozen importlib") or os.path.abspath(filename) == os.path.abspath(
        __file__
    )


def _first_line(text: str | None) -> str:
    if not text:
        return ""
    for line in str(text).strip().splitlines():
        if line.strip():
            return line.strip()
    return ""


def _describe(value: Any) -> str:
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    if isinstance(value, (tuple, list)):
        return f"{article} {kind} of {len(value)}"
    return f"{article} {kind}"
