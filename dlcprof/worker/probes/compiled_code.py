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
  cache key; the original code is put back afterwards.
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
import textwrap
import types
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from dlcprof.worker.probes.kernels import launch_target

PROBE = "kernels.profile"
HOOK = "_dlcprof_hook"  # the recorder's name inside the instrumented code
_T = "_dlcprof_t"


class CodeUnavailable(Exception):
    """The compiled code cannot be profiled this way: the message says why."""


# --- the wrapper's call(): pure source transforms -------------------------------------


@dataclass
class Launch:
    line: int  # in the wrapper's source
    target: str  # what is called: "cpp_fused_sin_0", "extern_kernels.mm", "triton_x.run"
    name: str  # the kernel (".run" dropped) or the extern target
    extern: bool


class _Launches(ast.NodeTransformer):
    """Replaces each launch ``f(*a, **kw)`` by ``HOOK.launch(i, f, *a, **kw)``."""

    def __init__(self, chosen: dict[int, int]) -> None:
        self.chosen = chosen  # id(Call node) -> launch index

    def visit_Call(self, node: ast.Call) -> ast.AST:
        i = self.chosen.get(id(node))
        self.generic_visit(node)
        if i is None:
            return node
        hook = ast.Attribute(ast.Name(HOOK, ast.Load()), "launch", ast.Load())
        call = ast.Call(hook, [ast.Constant(i), node.func, *node.args], node.keywords)
        return ast.copy_location(call, node)


def _call_def(tree: ast.Module) -> ast.FunctionDef:
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef) and node.name == "call":
            return node
    raise CodeUnavailable("the wrapper module has no call() (cpp_wrapper or AOT code?)")


def instrument_source(source: str, definitions: dict[str, Any]) -> tuple[ast.Module, list[Launch]]:
    """``call()`` of a wrapper module, rewritten so every launch goes through the
    hook (the first launch on a line, as the kernel probe reads the wrapper), with
    ``HOOK.enter(args)`` first; and the launches in order."""
    tree = ast.parse(source)
    fdef = _call_def(tree)
    if not fdef.args.args:
        raise CodeUnavailable("call() takes no arguments")
    first: dict[int, tuple[int, ast.Call, tuple[str, bool]]] = {}
    for node in ast.walk(fdef):
        if isinstance(node, ast.Call):
            target = launch_target(ast.unparse(node.func), definitions)
            if target is None:
                continue
            best = first.get(node.lineno)
            if best is None or node.col_offset < best[0]:
                first[node.lineno] = (node.col_offset, node, target)
    launches: list[Launch] = []
    chosen: dict[int, int] = {}
    for line in sorted(first):
        _, node, (name, extern) = first[line]
        chosen[id(node)] = len(launches)
        launches.append(Launch(line, ast.unparse(node.func), name, extern))
    fdef = _Launches(chosen).visit(fdef)
    args_name = fdef.args.args[-1].arg
    enter = ast.parse(f"{HOOK}.enter({args_name})").body
    fdef.body = [*enter, *fdef.body]
    module = ast.Module(body=[fdef], type_ignores=[])
    ast.fix_missing_locations(module)
    return module, launches


# --- printed FX graphs: pure source transforms ------------------------------------------


@dataclass
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
        starts = isinstance(stmt, ast.AnnAssign) and isinstance(stmt.target, ast.Name)
        if node is not None and (starts or isinstance(stmt, ast.Return)):
            body += ast.parse(f"{HOOK}.end({node}, {_T})").body
            node = None
        if starts:
            node = len(nodes)
            nodes.append(stmt.target.id)  # type: ignore[union-attr]
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


def compile_instrumented(module: types.ModuleType, tree: ast.Module) -> types.CodeType:
    """The code object of the rewritten call(), to be swapped into the loaded one."""
    fn = call_function(module)
    ns: dict[str, Any] = {}
    exec(compile(tree, module.__file__ or "<inductor wrapper>", "exec"), ns)  # noqa: S102
    code = ns["call"].__code__
    if code.co_freevars != fn.__code__.co_freevars:
        raise CodeUnavailable("call() closes over variables: its code cannot be swapped")
    return code


@contextmanager
def instrumented(module: types.ModuleType, code: types.CodeType, hook: Any) -> Iterator[None]:
    """The loaded call() runs ``code`` (with ``hook`` in its globals) inside the block."""
    fn = call_function(module)
    original = fn.__code__
    module.__dict__[HOOK] = hook
    fn.__code__ = code
    try:
        yield
    finally:
        fn.__code__ = original
        module.__dict__.pop(HOOK, None)


def runnable_forward(tree: ast.Module, hook: Any) -> Callable[..., Any]:
    """The timed forward as a function of the placeholders (``self`` is bound to
    an object with no attributes: a graph reading ``self.X`` cannot be replayed)."""
    import torch

    ns: dict[str, Any] = {
        "torch": torch, "device": torch.device, "inf": math.inf, "nan": math.nan,
        "math": math, "operator": operator, HOOK: hook,
    }  # fmt: skip
    exec(compile(tree, "<printed graph>", "exec"), ns)  # noqa: S102
    forward = ns["forward"]
    empty = types.SimpleNamespace()
    return lambda *args: forward(empty, *args)
