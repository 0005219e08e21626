"""Session: the one place events become state.

The TUI, the headless CLI and the report writers all fold the same event
stream through ``Session.apply``; a saved report is that stream plus a
summary, so replaying it rebuilds exactly the state seen live. Pure Python:
no torch, no Textual, no I/O.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from dlcprof import events as ev

# The compile phases users ask about, in pipeline order: (label, torch's event
# name). Torch emits many more; these are the stable, meaningful ones.
KEY_PHASES: list[tuple[str, str]] = [
    ("Dynamo: trace bytecode", "bytecode_tracing"),
    ("Dynamo: build guards", "build_guards"),
    ("AOTAutograd", "create_aot_dispatcher_function"),
    ("Inductor (total)", "inductor_compile"),
    ("Inductor: lowering", "GraphLowering.run"),
    ("Inductor: fusion", "Scheduler.__init__"),
    ("Inductor: codegen", "Scheduler.codegen"),
    ("Inductor: wrapper", "PythonWrapperCodegen.generate"),
    ("C++/Triton compile", "compile_file"),
    ("Wait for kernel compiles", "async_compile.wait"),
    ("Load compiled module", "PyCodeCache.load_by_key_path"),
]


@dataclass
class Phase:
    name: str
    start_t: float
    duration_s: float
    thread: int
    compile_id: str | None
    cache_state: str | None = None

    @property
    def end_t(self) -> float:
        return self.start_t + self.duration_s


@dataclass
class OpenPhase:
    name: str
    start_t: float
    thread: int
    compile_id: str | None


@dataclass
class Kernel:
    compile_id: str
    name: str
    kind: str
    fused_ops: list[str]
    source: str
    source_lines: list[str]
    order: int
    graph: str | None = None  # "inference" | "forward" | "backward"


@dataclass
class GraphBreak:
    compile_id: str | None
    reason: str
    location: str
    hints: list[str]
    t: float


@dataclass
class Recompile:
    compile_id: str | None
    reason: str
    t: float
    cost_s: float | None = None  # wall time of the compile it triggered, once known


@dataclass
class Compile:
    compile_id: str
    phases: list[Phase] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    recompile_reason: str | None = None
    finished: bool = False
    wall_s: float | None = None
    start_t: float | None = None
    is_backward: bool = False
    cache: str | None = None
    fail_type: str | None = None
    fail_reason: str | None = None
    graph_op_count: int | None = None
    guard_count: int | None = None
    metrics: dict[str, Any] = field(default_factory=dict)

    def phase_seconds(self, name: str) -> float | None:
        """Total seconds in phases called ``name`` (several g++ calls add up);
        None when the compile never entered it."""
        durations = [p.duration_s for p in self.phases if p.name == name]
        return sum(durations) if durations else None

    def phase_count(self, name: str) -> int:
        return sum(1 for p in self.phases if p.name == name)


@dataclass
class Benchmark:
    eager_ms: float
    compiled_ms: float
    eager_spread_ms: float
    compiled_spread_ms: float
    compile_s: float
    reps: int
    iters: int
    warmup: int
    threads: int
    load_avg: list[float]
    timer: str

    @property
    def speedup(self) -> float | None:
        return self.eager_ms / self.compiled_ms if self.compiled_ms > 0 else None

    @property
    def break_even_iters(self) -> float | None:
        """Runs needed for the compile to pay for itself; None = never."""
        return break_even(self.compile_s, self.eager_ms, self.compiled_ms)


def break_even(compile_s: float, eager_ms: float, compiled_ms: float) -> float | None:
    """compile seconds / per-call saving; None when compiled is not faster."""
    saved_s = (eager_ms - compiled_ms) / 1000.0
    if saved_s <= 0:
        return None
    return compile_s / saved_s


@dataclass
class ShapeStep:
    size: int
    recompiled: bool
    transition_s: float
    latency_ms: float
    reason: str | None
    ran_eager: bool


@dataclass
class Run:
    run_id: str
    target: str = ""
    workload: str = ""
    description: str = ""
    settings: dict[str, Any] = field(default_factory=dict)  # RunStarted fields
    status: str = "pending"  # pending | running | ok | error | cancelled | crashed
    started_t: float | None = None
    finished_t: float | None = None
    wall_s: float | None = None
    compiles: dict[str, Compile] = field(default_factory=dict)
    open_phases: dict[tuple[int, str], OpenPhase] = field(default_factory=dict)
    recompiles: list[Recompile] = field(default_factory=list)
    graph_breaks: list[GraphBreak] = field(default_factory=list)
    dynamic_dims: list[str] = field(default_factory=list)
    recompile_limit: ev.RecompileLimitHit | None = None
    benchmark: Benchmark | None = None
    sweep: list[ShapeStep] = field(default_factory=list)
    sweep_total_s: float | None = None
    errors: list[ev.ErrorRaised] = field(default_factory=list)
    logs: list[ev.LogEmitted] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)  # probe -> reason
    last_compile_id: str | None = None

    @property
    def label(self) -> str:
        s = self.settings
        if not s:
            return self.workload or self.run_id
        return (
            f"{self.workload} · {s.get('mode')} · dynamic={s.get('dynamic')} · {s.get('backend')}"
        )

    @property
    def kernels(self) -> list[Kernel]:
        return [k for c in self.compiles.values() for k in c.kernels]

    @property
    def compile_wall_s(self) -> float:
        """Sum of torch's per-frame compile wall times (forward and backward)."""
        return sum(c.wall_s or 0.0 for c in self.compiles.values())

    @property
    def running_phase(self) -> OpenPhase | None:
        """The innermost phase still open (latest started)."""
        if not self.open_phases:
            return None
        return max(self.open_phases.values(), key=lambda p: p.start_t)

    @property
    def cumulative_transition_s(self) -> list[float]:
        out, total = [], 0.0
        for step in self.sweep:
            total += step.transition_s
            out.append(total)
        return out

    @property
    def activity_spans(self) -> list[tuple[str, float, float]]:
        """(name, start, end) on the event clock: each compile, then everything
        after the last compile (benchmark, sweep) until the run finished."""
        spans = [
            ("compile", c.start_t, c.start_t + c.wall_s)
            for c in self.compiles.values()
            if c.start_t is not None and c.wall_s is not None
        ]
        if spans and self.finished_t is not None:
            spans.append(("after compile", max(end for _, _, end in spans), self.finished_t))
        return spans

    def compile(self, compile_id: str) -> Compile:
        c = self.compiles.get(compile_id)
        if c is None:
            c = self.compiles[compile_id] = Compile(compile_id)
        self.last_compile_id = compile_id
        return c


@dataclass
class WorkerInfo:
    pid: int
    torch_version: str
    python_version: str
    cuda_available: bool
    device_name: str
    cpu_count: int


class Session:
    """Folds events into state. ``apply`` never raises on a well-typed event."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self.runs: dict[str, Run] = {}
        self.worker: WorkerInfo | None = None
        self.worker_exits: list[ev.WorkerExited] = []
        self.device_samples: list[ev.DeviceSampled] = []
        self.monitors: dict[str, ev.MonitorStatus] = {}
        self.hot_frames: ev.HotFramesSampled | None = None
        self.errors: list[ev.ErrorRaised] = []  # session-level (no run)
        self.logs: list[ev.LogEmitted] = []  # session-level (no run)

    # --- folding -----------------------------------------------------------------

    @classmethod
    def from_events(cls, events: list[ev.Event]) -> Session:
        s = cls()
        for e in events:
            s.apply(e)
        return s

    def apply(self, e: ev.Event) -> None:
        self.events.append(e)
        handler = getattr(self, f"_on_{type(e).__name__}", None)
        if handler is not None:
            handler(e)

    def run(self, run_id: str) -> Run:
        r = self.runs.get(run_id)
        if r is None:
            r = self.runs[run_id] = Run(run_id)
        return r

    @property
    def latest_run(self) -> Run | None:
        return next(reversed(self.runs.values()), None) if self.runs else None

    def _on_WorkerReady(self, e: ev.WorkerReady) -> None:
        self.worker = WorkerInfo(
            e.pid, e.torch_version, e.python_version, e.cuda_available, e.device_name, e.cpu_count
        )

    def _on_RunStarted(self, e: ev.RunStarted) -> None:
        r = self.run(e.run_id)
        r.target, r.workload = e.target, e.workload
        r.settings = {k: v for k, v in ev.to_dict(e).items() if k not in ("t", "type", "run_id")}
        r.status, r.started_t = "running", e.t

    def _on_WorkloadLoaded(self, e: ev.WorkloadLoaded) -> None:
        r = self.run(e.run_id)
        r.workload, r.description = e.name, e.description

    def _on_RunFinished(self, e: ev.RunFinished) -> None:
        r = self.run(e.run_id)
        r.status, r.finished_t, r.wall_s = e.status, e.t, e.wall_s
        r.open_phases.clear()

    def _on_WorkerExited(self, e: ev.WorkerExited) -> None:
        self.worker_exits.append(e)
        # A run the worker never finished ended with the process.
        for r in self.runs.values():
            if r.status in ("pending", "running"):
                r.status = "cancelled" if e.cancelled else "crashed"
                r.finished_t = e.t
                r.open_phases.clear()

    def _on_ErrorRaised(self, e: ev.ErrorRaised) -> None:
        (self.run(e.run_id).errors if e.run_id else self.errors).append(e)

    def _on_LogEmitted(self, e: ev.LogEmitted) -> None:
        (self.run(e.run_id).logs if e.run_id else self.logs).append(e)

    def _on_ProbeUnavailable(self, e: ev.ProbeUnavailable) -> None:
        if e.run_id:
            self.run(e.run_id).unavailable[e.probe] = e.reason

    def _on_PhaseStarted(self, e: ev.PhaseStarted) -> None:
        self.run(e.run_id).open_phases[(e.thread, e.name)] = OpenPhase(
            e.name, e.t, e.thread, e.compile_id
        )

    def _on_PhaseEnded(self, e: ev.PhaseEnded) -> None:
        r = self.run(e.run_id)
        r.open_phases.pop((e.thread, e.name), None)
        # Pool-thread phases (g++ compiles) carry no compile id: they belong
        # to the compile in progress.
        cid = e.compile_id or r.last_compile_id or "?"
        c = r.compile(cid)
        c.phases.append(
            Phase(e.name, e.start_t, e.duration_s, e.thread, e.compile_id, e.cache_state)
        )
        if e.cache_state and c.cache is None:
            c.cache = e.cache_state

    def _on_CompileFinished(self, e: ev.CompileFinished) -> None:
        r = self.run(e.run_id)
        key = f"{e.compile_id} (bwd)" if e.is_backward else e.compile_id
        c = r.compiles.get(key) or r.compile(key)
        c.finished, c.wall_s, c.start_t = True, e.wall_s, e.start_t
        c.is_backward, c.recompile_reason = e.is_backward, e.recompile_reason
        c.fail_type, c.fail_reason = e.fail_type, e.fail_reason
        c.graph_op_count, c.guard_count = e.graph_op_count, e.guard_count
        c.cache = e.cache or c.cache
        c.metrics = e.metrics
        # The recompile that led here now has a price.
        for rc in reversed(r.recompiles):
            if rc.cost_s is None and rc.compile_id in (None, e.compile_id):
                rc.cost_s = e.wall_s
                break

    def _on_KernelGenerated(self, e: ev.KernelGenerated) -> None:
        c = self.run(e.run_id).compile(e.compile_id)
        c.kernels.append(
            Kernel(
                e.compile_id,
                e.name,
                e.kind,
                e.fused_ops,
                e.source,
                e.source_lines,
                e.order,
                e.graph,
            )  # fmt: skip
        )

    def _on_RecompileTriggered(self, e: ev.RecompileTriggered) -> None:
        self.run(e.run_id).recompiles.append(Recompile(e.compile_id, e.reason, e.t))

    def _on_RecompileLimitHit(self, e: ev.RecompileLimitHit) -> None:
        self.run(e.run_id).recompile_limit = e

    def _on_DimMadeDynamic(self, e: ev.DimMadeDynamic) -> None:
        self.run(e.run_id).dynamic_dims.append(f"{e.symbol} = {e.source}")

    def _on_GraphBroken(self, e: ev.GraphBroken) -> None:
        r = self.run(e.run_id)
        gb = GraphBreak(e.compile_id, e.reason, e.location, e.hints, e.t)
        r.graph_breaks.append(gb)
        if e.compile_id:
            r.compile(e.compile_id).graph_breaks.append(gb)

    def _on_BenchmarkMeasured(self, e: ev.BenchmarkMeasured) -> None:
        self.run(e.run_id).benchmark = Benchmark(
            e.eager_ms, e.compiled_ms, e.eager_spread_ms, e.compiled_spread_ms, e.compile_s,
            e.reps, e.iters, e.warmup, e.threads, e.load_avg, e.timer,
        )  # fmt: skip

    def _on_ShapeStepMeasured(self, e: ev.ShapeStepMeasured) -> None:
        self.run(e.run_id).sweep.append(
            ShapeStep(e.size, e.recompiled, e.transition_s, e.latency_ms, e.reason, e.ran_eager)
        )

    def _on_SweepFinished(self, e: ev.SweepFinished) -> None:
        self.run(e.run_id).sweep_total_s = e.cumulative_transition_s

    def _on_DeviceSampled(self, e: ev.DeviceSampled) -> None:
        self.device_samples.append(e)

    def _on_MonitorStatus(self, e: ev.MonitorStatus) -> None:
        self.monitors[e.monitor] = e

    def _on_HotFramesSampled(self, e: ev.HotFramesSampled) -> None:
        self.hot_frames = e


def nest_phases(phases: list[Phase]) -> list[tuple[Phase, int]]:
    """Phases in start order, each with its depth: how many phases of the same
    thread enclose it. Phases on other threads (g++ pool) start at depth 0."""
    out: list[tuple[Phase, int]] = []
    stacks: dict[int, list[Phase]] = {}
    for p in sorted(phases, key=lambda p: (p.start_t, -p.duration_s)):
        stack = stacks.setdefault(p.thread, [])
        while stack and stack[-1].end_t < p.end_t - 1e-9:
            stack.pop()
        out.append((p, len(stack)))
        stack.append(p)
    return out
