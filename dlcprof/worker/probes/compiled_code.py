"""The compiled code itself, for the profiling stage: the loaded wrapper module of
a compiled graph, its launches instrumented in place, and printed FX graphs made
runnable node by node.

What it relies on (torch 2.13; docs/torch-notes.md §10):

- ``torch._inductor.codecache.PyCodeCache.modules``: every wrapper module loaded
  in this process, ``__file__`` being the ``filename`` of the graph's
  ``inductor_output_code`` record (on FX-cache hits too).
- The module's ``call`` (a function, or the bound ``Runner.call``) is the very
  function ``CompiledFxGraph.current_callable`` holds: giving it an instrumented
  ``__code__`` instruments the code torch runs, with no recompile and no new
  cache key; the original code is put back afterwards. With graph partitioning
  (on by default in torch 2.11 and 2.13, used under CUDA graphs) the launches torch can
  capture sit in module-level ``partition_N(args)`` functions that
  ``Runner.call`` calls as ``self.partitions[N](...)``: they are instrumented
  the same way, each launch numbered in the order the call runs it.
- FX's printed graphs (``print_readable``; the ``dynamo_output_graph`` payload):
  ``def forward(self, <placeholders>):`` then one ``name: "annotation" = expr``
  statement per node, named as the node.

The parts that only read text (``instrument_source``, ``timed_forward_source``)
are pure, so they are tested on recorded payloads.
"""

from __future__ import annotations

import ast
import math
import operator
import re
import textwrap
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

from dlcprof.data import data
from dlcprof.trace_records.kernels import launch_target

PROBE = "kernels.profile"
HOOK = "_dlcprof_hook"  # the recorder's name inside the instrumented code
_T = "_dlcprof_t"


class CodeUnavailable(Exception):
    """The compiled code cannot be profiled this way: the message says why."""


# --- the wrapper's call(): pure source transforms -------------------------------------


@data
class Launch:
    line: int  # in the wrapper's source
    target: str  # what is called: "cpp_fused_sin_0", "extern_kernels.mm", "triton_x.run"
    name: str  # the kernel (".run" dropped) or the extern target
    extern: bool


def _hooked(node: ast.Call, i: int) -> None:
    """``f(*a, **kw)`` becomes ``HOOK.launch(i, f, *a, **kw)``, in place: only the
    launches change, so neither a transformer nor ``fix_missing_locations`` walks
    the whole call() (thousands of nodes in a large graph's backward, each walk
    paid on the program's own thread)."""
    hook = ast.Attribute(ast.Name(HOOK, ast.Load()), "launch", ast.Load())
    index = ast.Constant(i)
    for new in (hook, hook.value, index):
        ast.copy_location(new, node)
    node.args = [index, node.func, *node.args]
    node.func = hook


def _func_text(f: ast.expr) -> str:
    """What a call calls, as ``ast.unparse`` writes it (a dotted name read directly)."""
    if isinstance(f, ast.Name):
        return f.id
    if isinstance(f, ast.Attribute) and isinstance(f.value, (ast.Name, ast.Attribute)):
        return f"{_func_text(f.value)}.{f.attr}"
    return ast.unparse(f)


def _call_def(tree: ast.Module) -> ast.FunctionDef:
    """The module's ``call()``, or ``Runner.call`` (graph partitioning)."""
    for node in tree.body:
        inner = node.body if isinstance(node, ast.ClassDef) else [node]
        for fdef in inner:
            if isinstance(fdef, ast.FunctionDef) and fdef.name == "call":
                return fdef
    raise CodeUnavailable("the wrapper module has no call() (cpp_wrapper or AOT code?)")


def _partition_index(node: ast.Call) -> int | None:
    """N for a ``self.partitions[N](...)`` call (graph partitioning), else None."""
    f = node.func
    if (
        isinstance(f, ast.Subscript)
        and isinstance(f.value, ast.Attribute)
        and f.value.attr == "partitions"
        and isinstance(f.slice, ast.Constant)
        and isinstance(f.slice.value, int)
    ):
        return f.slice.value
    return None


def _first_launches(
    fdef: ast.FunctionDef, definitions: dict[str, Any], partitions: dict[int, ast.FunctionDef]
) -> list[tuple[ast.FunctionDef, ast.Call, tuple[str, bool]]]:
    """The launches of ``fdef`` in order (the first on each line, as the kernel probe
    reads the wrapper), a partition's spliced in where ``call`` calls it."""
    first: dict[int, tuple[int, ast.Call, tuple[str, bool] | int]] = {}
    for node in ast.walk(fdef):
        if not isinstance(node, ast.Call):
            continue
        part = _partition_index(node)
        target = launch_target(_func_text(node.func), definitions) if part is None else part
        if target is None or (part is not None and part not in partitions):
            continue
        best = first.get(node.lineno)
        if best is None or node.col_offset < best[0]:
            first[node.lineno] = (node.col_offset, node, target)
    out: list[tuple[ast.FunctionDef, ast.Call, tuple[str, bool]]] = []
    for line in sorted(first):
        _, node, target = first[line]
        if isinstance(target, int):
            out += _first_launches(partitions.pop(target), definitions, partitions)
        else:
            out.append((fdef, node, target))
    return out


def instrument_source(source: str, definitions: dict[str, Any]) -> tuple[ast.Module, list[Launch]]:
    """``call()`` of a wrapper module and the ``partition_N()`` functions it calls
    (graph partitioning), rewritten so every launch goes through the hook, with
    ``HOOK.enter(args)`` first in ``call()``; and the launches in order."""
    tree = ast.parse(source)
    fdef = _call_def(tree)
    if not fdef.args.args:
        raise CodeUnavailable("call() takes no arguments")
    partitions = {
        int(node.name.removeprefix("partition_")): node
        for node in tree.body
        if isinstance(node, ast.FunctionDef) and re.fullmatch(r"partition_\d+", node.name)
    }
    functions: list[ast.stmt] = [fdef, *partitions.values()]
    order = _first_launches(fdef, definitions, dict(partitions))
    launches: list[Launch] = []
    for i, (_, node, (name, extern)) in enumerate(order):
        launches.append(Launch(node.lineno, _func_text(node.func), name, extern))
        _hooked(node, i)
    args_name = fdef.args.args[-1].arg
    enter = ast.parse(f"{HOOK}.enter({args_name})").body  # located at line 1: compile takes it
    fdef.body = [*enter, *fdef.body]
    return ast.Module(body=functions, type_ignores=[]), launches


# --- printed FX graphs: pure source transforms ------------------------------------------


@data
class Placeholder:
    name: str
    annotation: str  # "f32[4, 1024][1024, 1]cpu", "Sym(s0)", or ""


def _forward_block(text: str) -> str:
    """The first ``def forward(...)`` of a printed graph module, dedented."""
    start = text.find("def forward(")
    if start < 0:
        raise CodeUnavailable("the printed graph has no forward()")
    indent = start - (text.rfind("\n", 0, start) + 1)
    lines = text[start:].splitlines()
    keep = [" " * indent + lines[0]]
    for line in lines[1:]:
        if line.strip() and len(line) - len(line.lstrip(" ")) <= indent:
            break  # back at the class body: another method or a submodule
        keep.append(line)
    return textwrap.dedent("\n".join(keep))


def timed_forward_source(text: str) -> tuple[ast.Module, list[str], list[Placeholder]]:
    """The graph's forward with every node timed: ``t = HOOK.begin()`` before each
    ``name: "..." = expr`` statement and ``HOOK.end(i, t)`` after it and the
    statements that follow it (``x = None``: freeing a multi-MB output costs
    an unmap, and the eager call pays it too); the node names in order and the
    placeholders."""
    try:
        tree = ast.parse(_forward_block(text))
    except SyntaxError as e:
        raise CodeUnavailable(f"the printed graph does not parse: {e.msg}") from e
    fdef = tree.body[0]
    assert isinstance(fdef, ast.FunctionDef)
    placeholders = []
    for a in fdef.args.args[1:]:  # after self
        ann = a.annotation
        text_ann = ann.value if isinstance(ann, ast.Constant) and isinstance(ann.value, str) else ""
        placeholders.append(Placeholder(a.arg, text_ann))
    nodes: list[str] = []
    body: list[ast.stmt] = []
    node: int | None = None  # the node being timed
    for stmt in fdef.body:
        target = stmt.target if isinstance(stmt, ast.AnnAssign) else None
        starts = target.id if isinstance(target, ast.Name) else None  # the node it starts
        if node is not None and (starts or isinstance(stmt, ast.Return)):
            body += ast.parse(f"{HOOK}.end({node}, {_T})").body
            node = None
        if starts:
            node = len(nodes)
            nodes.append(starts)
            body += ast.parse(f"{_T} = {HOOK}.begin()").body
        body.append(stmt)
    if node is not None:
        body += ast.parse(f"{HOOK}.end({node}, {_T})").body
    fdef.body = body
    ast.fix_missing_locations(tree)
    return tree, nodes, placeholders


# --- torch-facing ------------------------------------------------------------------------


def loaded_modules(path: str) -> list[types.ModuleType]:
    """Every loaded wrapper module whose file is ``path`` (a module with constants
    attached is loaded once per graph that uses it)."""
    try:
        from torch._inductor.codecache import PyCodeCache

        found = list(PyCodeCache.modules) + list(PyCodeCache.modules_no_attr.values())
    except Exception as e:  # noqa: BLE001 - moved or renamed in another torch
        raise CodeUnavailable(
            f"torch._inductor.codecache.PyCodeCache is not readable: {type(e).__name__}: {e}"
        ) from e
    seen: dict[int, types.ModuleType] = {}
    for m in found:
        if getattr(m, "__file__", None) == path and hasattr(m, "call"):
            seen.setdefault(id(m), m)
    return list(seen.values())


def call_function(module: types.ModuleType) -> types.FunctionType:
    fn = getattr(module, "call", None)
    fn = getattr(fn, "__func__", fn)  # Runner.call, bound
    if not isinstance(fn, types.FunctionType):
        raise CodeUnavailable(f"{module.__name__}.call is a {type(fn).__name__}, not a function")
    return fn


def compile_instrumented(module: types.ModuleType, tree: ast.Module) -> dict[str, types.CodeType]:
    """The code objects of the rewritten call() and partition functions, by name,
    to be swapped into the loaded ones."""
    ns: dict[str, Any] = {}
    exec(compile(tree, module.__file__ or "<inductor wrapper>", "exec"), ns)  # noqa: S102
    codes = {}
    for node in tree.body:
        assert isinstance(node, ast.FunctionDef)
        code = ns[node.name].__code__
        if code.co_freevars != _loaded(module, node.name).__code__.co_freevars:
            raise CodeUnavailable(f"{node.name}() closes over variables: no code swap")
        codes[node.name] = code
    return codes


def _loaded(module: types.ModuleType, name: str) -> types.FunctionType:
    """The loaded ``call`` or ``partition_N`` (torch's Runner holds the same function)."""
    if name == "call":
        return call_function(module)
    fn = getattr(module, name, None)
    if not isinstance(fn, types.FunctionType):
        raise CodeUnavailable(f"{module.__name__}.{name} is a {type(fn).__name__}, not a function")
    return fn


@contextmanager
def instrumented(
    module: types.ModuleType, codes: dict[str, types.CodeType], hook: Any
) -> Iterator[None]:
    """The loaded call() and partitions run ``codes`` (with ``hook`` in their
    globals) inside the block. Under CUDA graphs a partition runs only while
    torch records it: its replays launch nothing in Python."""
    fns = {name: _loaded(module, name) for name in codes}
    originals = {name: fn.__code__ for name, fn in fns.items()}
    module.__dict__[HOOK] = hook
    for name, fn in fns.items():
        fn.__code__ = codes[name]
    try:
        yield
    finally:
        for name, fn in fns.items():
            fn.__code__ = originals[name]
        module.__dict__.pop(HOOK, None)


def runnable_forward(tree: ast.Module, hook: Any) -> Callable[..., Any]:
    """The timed forward as a function of the placeholders (``self`` is bound to
    an object with no attributes: a graph reading ``self.X`` cannot be replayed)."""
    import torch

    ns: dict[str, Any] = {
        "torch": torch,
        "device": torch.device,
        "inf": math.inf,
        "nan": math.nan,
        "math": math,
        "operator": operator,
        HOOK: hook,
    }
    exec(compile(tree, "<printed graph>", "exec"), ns)  # noqa: S102
    forward = ns["forward"]
    empty = types.SimpleNamespace()
    return lambda *args: forward(empty, *args)
