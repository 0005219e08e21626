"""Compile seconds by the user's code (worker/probes/compile_cost.py).

- Dynamo: each function it traced or inlined, how many times, its own tracing
  seconds (callees excluded, so the rows add up) and with its callees; with
  the ``build_guards`` phase, checked against Dynamo's own total, torch's
  ``entire_frame_compile`` minus ``backend_compile``.
- Inductor: lowering seconds per FX node, grouped by the module the node came
  from (``nn_module_stack``); checked against the ``GraphLowering.run`` phase.
- ``repeated(cost)``: module classes with several instances in one graph, and
  what lowering them cost: where regional compilation applies.

The rows name the user's code: the functions in the program's own files, and
the functions of libraries (torch, transformers, ...) together, one row per
line of the program whose call reached them (``LibraryCost``): a program that
only drives a trainer still sees which of its calls paid for the compile.
"""

from __future__ import annotations

from dataclasses import field

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import runs as fruns
from dlcprof.session import Compile, Run

LOWERING_PHASE = "GraphLowering.run"
GUARDS_PHASE = "build_guards"
TOP_LEVEL = "(top level)"


@data(frozen=True)
class FunctionCost:
    function: str  # "Block.forward"
    location: str  # "file:line" of its def
    traced: int  # times Dynamo traced it (each inlined call counts)
    self_s: float
    total_s: float  # with the functions it called


@data(frozen=True)
class LibraryCost:
    """The library functions Dynamo traced in the compiles one line of the
    program reached: their own tracing seconds together."""

    called_at: str  # the program's "file:line"; "" where no line of its was on the stack
    packages: tuple[str, ...]  # costliest first: "transformers", "torch", "python" (stdlib)
    functions: int
    traced: int
    self_s: float


@data(frozen=True)
class ModuleCost:
    module: str  # "blocks.0.ln1"; "" for the top-level function
    cls: str
    stack: tuple[tuple[str, str], ...]  # (path, class), outermost first
    location: str
    nodes: int
    self_s: float

    @property
    def name(self) -> str:
        return f"{self.module} ({self.cls})" if self.module else TOP_LEVEL


@data(frozen=True)
class CompileCost:
    functions: list[FunctionCost]  # largest own time first
    modules: list[ModuleCost]
    dynamo_s: float | None  # torch's own account of Dynamo, None where not recorded
    lowering_s: float | None  # the GraphLowering.run phases
    own_s: float  # the probe's bookkeeping
    guards_s: float = 0.0  # Dynamo building guards (the build_guards phases)
    # The libraries' functions by the user's call that reached them, costliest first.
    libraries: list[LibraryCost] = field(default_factory=list)

    @property
    def traced_s(self) -> float:
        return sum(f.self_s for f in self.functions)

    @property
    def lowered_s(self) -> float:
        return sum(m.self_s for m in self.modules)


@data
class ModuleNode:
    """One module in the lowering tree: its own nodes' lowering and its submodules'."""

    path: str  # "transformer.h.0"; "" for the top level
    cls: str
    self_s: float = 0.0
    nodes: int = 0
    children: dict[str, ModuleNode] = field(default_factory=dict)

    @property
    def total_s(self) -> float:
        return self.self_s + sum(c.total_s for c in self.children.values())

    def sorted_children(self) -> list[ModuleNode]:
        return sorted(self.children.values(), key=lambda c: -c.total_s)


def module_tree(cost: CompileCost) -> ModuleNode:
    """Inductor's lowering by module, nested as ``nn_module_stack`` nests them."""
    root = ModuleNode("", "")
    for m in cost.modules:
        node = root
        for path, cls in m.stack:
            if not path:
                root.cls = root.cls or cls
                continue
            node = node.children.setdefault(path, ModuleNode(path, cls))
        if m.module and node.path != m.module:  # a stack without its own module's entry
            node = node.children.setdefault(m.module, ModuleNode(m.module, m.cls))
        node.self_s += m.self_s
        node.nodes += m.nodes
    return root


@data(frozen=True)
class Repeated:
    """A module class with several instances in one compiled graph."""

    cls: str
    instances: list[str]  # their paths
    forward: FunctionCost | None  # its forward as Dynamo traced it (all instances)
    lowering_s: float  # Inductor's lowering of the nodes under its instances
    nodes: int
    location: str  # where its forward is (file:line), for the snippet


def _compiles(run: Run) -> list[Compile]:
    return [c for c in run.compiles.values() if c.cost is not None]


def why_none(run: Run) -> str | None:
    """Why a run that compiled has no compile cost by the user's code (the probe
    unavailable, an attached process's never sent); None when it has one, or
    compiled nothing, or is a recording from before the probe."""
    if _compiles(run) or not any(c.record is not None for c in run.compiles.values()):
        return None
    if "compile_cost" in run.unavailable:
        return run.unavailable["compile_cost"]
    return _WHY_NONE.get(fruns.kind(run))


# Why a program's process has none, by whose it is (a workload's: the probe says).
_WHY_NONE = {
    fruns.TEST: "the pytest plugin does not measure it",
    fruns.IMPORTED: fruns.NOT_IN_LOG,
    fruns.ATTACHED: (
        "an attached process sends it at its end: this one ended without its exit hook "
        "(os._exit, a signal), or was recorded by a dlcprof that did not measure it there"
    ),
}


def compile_cost(run: Run) -> CompileCost | None:
    """The run's compiles together; None where the probe measured none."""
    compiles = _compiles(run)
    if not compiles:
        return None
    fns: dict[tuple[str, str], list[float]] = {}
    mods: dict[str, list] = {}
    libs: dict[str, _Library] = {}
    for c in compiles:
        assert c.cost is not None
        for f in c.cost.functions:
            key = (str(f["function"]), f"{f['file']}:{f['line']}")
            acc = fns.setdefault(key, [0, 0.0, 0.0])
            acc[0] += int(f["traced"])
            acc[1] += float(f["self_s"])
            acc[2] += float(f.get("total_s", f["self_s"]))
            package = library(str(f["file"]))
            if package is not None:
                libs.setdefault(c.cost.called_at, _Library()).add(key, package, f)
        for m in c.cost.modules:
            acc2 = mods.setdefault(str(m["module"]), [m, 0, 0.0])
            acc2[1] += int(m["nodes"])
            acc2[2] += float(m["self_s"])
    functions = sorted(
        (FunctionCost(name, where, int(n), s, t) for (name, where), (n, s, t) in fns.items()),
        key=lambda f: -f.self_s,
    )
    modules = sorted(
        (
            ModuleCost(
                path,
                str(m.get("cls", "")),
                tuple((str(p), str(k)) for p, k in m.get("stack") or ()),
                str(m.get("location", "")),
                n,
                s,
            )
            for path, (m, n, s) in mods.items()
        ),
        key=lambda m: -m.self_s,
    )
    guards = sum(p.duration_s for c in compiles for p in c.phases if p.name == GUARDS_PHASE)
    return CompileCost(
        functions,
        modules,
        _dynamo_s(compiles),
        _lowering_s(compiles),
        sum(c.cost.own_s for c in compiles if c.cost),
        guards,
        sorted(
            (lib.cost(called_at) for called_at, lib in libs.items()), key=lambda lib: -lib.self_s
        ),
    )


def library(file: str) -> str | None:
    """The library a traced function's file is in: its installed package's name,
    "python" for the standard library or code Python made (``<string>``); None
    for the program's own file."""
    if text.users_code(file) and not file.startswith("<"):
        return None
    return (text.in_package(file) or "python").split("/", 1)[0]


@data
class _Library:
    functions: set[tuple[str, str]] = field(default_factory=set)
    by_package: dict[str, float] = field(default_factory=dict)
    traced: int = 0
    self_s: float = 0.0

    def add(self, key: tuple[str, str], package: str, f: dict) -> None:
        self.functions.add(key)
        self.by_package[package] = self.by_package.get(package, 0.0) + float(f["self_s"])
        self.traced += int(f["traced"])
        self.self_s += float(f["self_s"])

    def cost(self, called_at: str) -> LibraryCost:
        packages = sorted(self.by_package, key=lambda p: -self.by_package[p])
        return LibraryCost(
            called_at, tuple(packages), len(self.functions), self.traced, self.self_s
        )


def _dynamo_s(compiles: list[Compile]) -> float | None:
    total = 0.0
    for c in compiles:
        m = c.record.metrics if c.record else {}
        frame, backend = m.get("entire_frame_compile_time_s"), m.get("backend_compile_time_s")
        if c.is_backward or c.record is None:
            continue
        if frame is None:
            return None
        total += float(frame) - float(backend or 0.0)
    return total


def _lowering_s(compiles: list[Compile]) -> float | None:
    phases = [p.duration_s for c in compiles for p in c.phases if p.name == LOWERING_PHASE]
    return sum(phases) if phases else None


def repeated(cost: CompileCost) -> list[Repeated]:
    """Module classes with two or more instances, the costliest first."""
    under: dict[str, dict[str, list[float]]] = {}  # class -> path -> [nodes, seconds]
    for m in cost.modules:
        for path, cls in m.stack:
            acc = under.setdefault(cls, {}).setdefault(path, [0, 0.0])
            acc[0] += m.nodes
            acc[1] += m.self_s
    out = []
    for cls, paths in under.items():
        if len(paths) < 2:
            continue
        forward = next((f for f in cost.functions if f.function == f"{cls}.forward"), None)
        if forward is not None and forward.traced < len(paths):
            forward = None  # a same-named class elsewhere
        out.append(
            Repeated(
                cls,
                sorted(paths),
                forward,
                sum(s for _, s in paths.values()),
                int(sum(n for n, _ in paths.values())),
                forward.location if forward else "",
            )
        )
    # An outer class repeated (Block) before the classes repeated inside it (Linear).
    return sorted(out, key=lambda r: (-r.lowering_s, r.cls))


def adds_up(part: float, whole: float | None) -> float | None:
    """part / whole: how much of torch's own total the rows account for."""
    return part / whole if whole else None


# --- words -------------------------------------------------------------------------


def dynamo_line(cost: CompileCost) -> str:
    """ "Dynamo traced 6 functions (75 traces) in 6.31 s and built guards in 378 ms:
    97% of its 6.86 s"."""
    traces = sum(f.traced for f in cost.functions)
    share = adds_up(cost.traced_s + cost.guards_s, cost.dynamo_s)
    of = f": {text.pct(share)} of its {text.secs(cost.dynamo_s)}" if share is not None else ""
    return (
        f"Dynamo traced {text.plural(len(cost.functions), 'function')} "
        f"({text.plural(traces, 'trace')}) in {text.secs(cost.traced_s)} and built guards "
        f"in {text.secs(cost.guards_s)}{of}"
    )


def lowering_line(cost: CompileCost) -> str:
    if not cost.modules:
        return (
            "Inductor lowered no FX node: no Inductor lowering ran (another backend, "
            "or every graph loaded from the cache)"
        )
    share = adds_up(cost.lowered_s, cost.lowering_s)
    of = f" of {text.secs(cost.lowering_s)} ({text.pct(share)})" if share is not None else ""
    nodes = sum(m.nodes for m in cost.modules)
    modules = text.plural(len(cost.modules), "module")
    return (
        f"Inductor lowered {text.plural(nodes, 'FX node')} from {modules} in "
        f"{text.secs(cost.lowered_s)}{of}"
    )


def probe_line(cost: CompileCost) -> str:
    return f"measuring this took {text.secs(cost.own_s)} of the compile"


def tree_label(node: ModuleNode, parent: ModuleNode | None) -> str:
    """A node's line, as "h.0 (GPT2Block)  1.20 s": the path below its parent's, the
    time with its submodules'; "(own 240 ms, 36 nodes)" where it lowered nodes too."""
    if parent is None:
        name = f"{TOP_LEVEL} ({node.cls})" if node.cls else TOP_LEVEL
    else:
        below = node.path.removeprefix(parent.path + ".") if parent.path else node.path
        name = f"{below} ({node.cls})"
    nodes = text.plural(node.nodes, "node")
    if not node.nodes:
        own = ""
    elif node.children:
        own = f" (own {text.secs(node.self_s)}, {nodes})"
    else:
        own = f" ({nodes})"
    return f"{name}  {text.secs(node.total_s)}{own}"


FUNCTION_COLUMNS = ("function", "where", "traced", "own", "with callees")
MODULE_COLUMNS = ("module", "where", "nodes", "lowering")


def function_rows(cost: CompileCost, limit: int = 12) -> list[tuple[str, ...]]:
    """The program's own functions, and the libraries' together under the line
    of the program whose call reached them, costliest first."""
    rows: list[tuple[float, tuple[str, ...]]] = [
        (
            f.self_s,
            (
                f.function,
                text.short_path(f.location),
                f"{f.traced}x",
                text.secs(f.self_s),
                text.secs(f.total_s),
            ),
        )
        for f in cost.functions
        if library(f.location.rpartition(":")[0]) is None
    ]
    rows += [(lib.self_s, library_row(lib)) for lib in cost.libraries]
    return [row for _, row in sorted(rows, key=lambda r: -r[0])[:limit]]


def library_row(lib: LibraryCost) -> tuple[str, ...]:
    """ "library code: transformers, trl, torch (41 functions)", "reached from
    trl_sft.py:63"; their own seconds ("with callees" is a function's: "—")."""
    shown = ", ".join(lib.packages[:3]) + (", …" if len(lib.packages) > 3 else "")
    where = (
        f"reached from {text.short_path(lib.called_at)}"
        if lib.called_at
        else "n/a (no line of the program seen)"
    )
    return (
        f"library code: {shown} ({text.plural(lib.functions, 'function')})",
        where,
        f"{lib.traced}x",
        text.secs(lib.self_s),
        "—",
    )


def module_rows(cost: CompileCost, limit: int = 12) -> list[tuple[str, ...]]:
    return [
        (m.name, text.short_path(m.location), str(m.nodes), text.secs(m.self_s))
        for m in cost.modules[:limit]
    ]
