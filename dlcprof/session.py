"""Session: the one place events become state.

The TUI, the headless CLI and the report writers all fold the same event
stream through ``Session.apply``; a saved report is that stream plus a
summary, so replaying it rebuilds exactly the state seen live. State keeps
the events themselves where a copy would add nothing (a kernel is its
``KernelGenerated``, a benchmark its ``BenchmarkMeasured``); what is derived
from them lives in ``dlcprof.figures``. Pure Python: no torch, no Textual, no I/O.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from dataclasses import field
from typing import Any

from dlcprof import events as ev
from dlcprof.data import data

# Events the Session reads nothing from: kept in ``events`` (and so in every
# saved report), folded into no state.
IGNORED: frozenset[type[ev.Event]] = frozenset()


@data
class Recompile:
    compile_id: str | None
    reason: str
    t: float
    cost_s: float | None = None  # wall time of the compile it triggered, once known
    called_at: str = ""  # the program's file:line whose call reached it ("" unknown)
    through: str = ""  # the library's file:line that made the call, when not the program
    call: str = ""  # the program's call at called_at, its source (events.RecompileTriggered)


@data
class Compile:
    compile_id: str
    phases: list[ev.PhaseEnded] = field(default_factory=list)
    kernels: list[ev.KernelGenerated] = field(default_factory=list)
    graph_breaks: list[ev.GraphBroken] = field(default_factory=list)
    record: ev.CompileFinished | None = None  # torch's compilation_metrics, once finished
    # Every record of this id: more than one when DDPOptimizer split the graph
    # (each piece's backward compiles on its own, under the frame's id).
    records: list[ev.CompileFinished] = field(default_factory=list)
    cost: ev.CompileCostMeasured | None = None  # seconds by the user's functions and modules
    cpu: ev.CompileCpuMeasured | None = None  # its CPU seconds, once known
    cache_state: str | None = None  # from the phases, before the record arrives

    @property
    def cpu_s(self) -> float | None:
        """CPU seconds of the compile: the process's and its compiler subprocesses'."""
        return self.cpu.cpu_s if self.cpu is not None else None

    @property
    def finished(self) -> bool:
        return self.record is not None

    @property
    def wall_s(self) -> float | None:
        return sum(r.wall_s for r in self.records) if self.record else None

    @property
    def start_t(self) -> float | None:
        return self.record.start_t if self.record else None

    @property
    def is_backward(self) -> bool:
        return bool(self.record and self.record.is_backward)

    @property
    def cache(self) -> str | None:
        return (self.record.cache if self.record else None) or self.cache_state


@data
class Run:
    run_id: str
    settings: ev.RunStarted | None = None  # what the worker resolved and ran with
    loaded: ev.WorkloadLoaded | None = None
    # pending | running | ok | error | cancelled | crashed | ended (an attached
    # process that ended without its exit hook: os._exit, a signal)
    status: str = "pending"
    finished_t: float | None = None
    wall_s: float | None = None
    compiles: dict[str, Compile] = field(default_factory=dict)
    open_phases: dict[tuple[int, str], ev.PhaseStarted] = field(default_factory=dict)
    recompiles: list[Recompile] = field(default_factory=list)
    graph_breaks: list[ev.GraphBroken] = field(default_factory=list)
    dynamic_dims: list[ev.DimMadeDynamic] = field(default_factory=list)
    recompile_limit: ev.RecompileLimitHit | None = None
    nothing_compiled: ev.NothingCompiled | None = None  # no graph: every call ran eager
    compile_raised: ev.CompileRaised | None = None  # the first compile that raised into the program
    header_built: ev.HeaderPrecompiled | None = None  # the first compile built Inductor's PCH
    cache_lookups: list[ev.CacheLookedUp] = field(default_factory=list)  # every cache layer's
    eager_calls: int | None = None  # calls that ran eager after the limit hit
    eager_call_s: list[float] = field(default_factory=list)  # the wall of the ones timed
    eager_untimed: str | None = None  # why none was timed
    benchmark: ev.BenchmarkMeasured | None = None
    steady: ev.SteadyAllocatorMeasured | None = None  # the benchmark with the allocator pinned
    # What the mode did: each autotuned op, each graph's CUDA-graph decision.
    autotuned: list[ev.OpAutotuned] = field(default_factory=list)
    cudagraphs: list[ev.CudagraphDecided] = field(default_factory=list)
    cudagraph_skips: list[ev.CudagraphSkipped] = field(default_factory=list)
    cudagraph_counts: ev.CudagraphsCounted | None = None
    profiling: ev.ProfilingStarted | None = None
    kernel_profile: ev.KernelsProfiled | None = None
    sweep: list[ev.ShapeStepMeasured] = field(default_factory=list)
    sweep_done: ev.SweepFinished | None = None
    errors: list[ev.ErrorRaised] = field(default_factory=list)
    logs: list[ev.LogEmitted] = field(default_factory=list)
    unavailable: dict[str, str] = field(default_factory=dict)  # probe -> reason
    last_compile_id: str | None = None
    # What the monitors saw of this run's worker.
    device_samples: list[ev.DeviceSampled] = field(default_factory=list)
    monitors: dict[str, ev.MonitorStatus] = field(default_factory=dict)
    hot_frames: ev.HotFramesSampled | None = None
    profile: ev.ProfileSaved | None = None
    raw_trace: ev.TraceSaved | None = None  # torch's structured trace, for tlparse
    monitor_costs: dict[str, ev.MonitorCostMeasured] = field(default_factory=dict)
    # Timed repetitions: the one being timed now, and those done.
    timing: ev.TimingStarted | None = None
    timed: list[ev.TimingEnded] = field(default_factory=list)
    # A process of an attached program (dlcprof -- CMD): who it is, and the
    # calls of its compiled graphs so far.
    process: ev.ProcessAttached | None = None
    graph_calls: ev.GraphCallsTimed | None = None
    joined: ev.ProcessGroupJoined | None = None  # its init_process_group returned
    # DDP (figures/job/ddp.py): the settings read at the first compile, each split.
    compile_settings: ev.CompileSettingsRead | None = None
    compile_calls: list[ev.CompileCalled] = field(default_factory=list)  # its torch.compile calls
    modules_ran: set[int] = field(default_factory=set)  # CompileCalled.module_call that ran
    compile_threads: ev.CompileThreadsRead | None = None  # Inductor's build workers, at its end
    steps: list[ev.StepsTimed] = field(default_factory=list)  # its compiled callables' calls
    ddp_splits: list[ev.GraphSplitForDDP] = field(default_factory=list)

    @property
    def target(self) -> str:
        return self.settings.target if self.settings else ""

    @property
    def workload(self) -> str:
        if self.loaded is not None:
            return self.loaded.name
        return self.settings.workload if self.settings else ""

    @property
    def description(self) -> str:
        return self.loaded.description if self.loaded else ""

    @property
    def started_t(self) -> float | None:
        if self.process is not None:
            return self.process.t
        return self.settings.t if self.settings else None

    @property
    def name(self) -> str:
        """The workload, else the target, else the process, else the run id:
        what a view calls the run."""
        return self.workload or self.target or process_label(self.process) or self.run_id

    @property
    def live(self) -> bool:
        return self.status in ("pending", "running")

    @property
    def kernels(self) -> list[ev.KernelGenerated]:
        return [k for c in self.compiles.values() for k in c.kernels]

    @property
    def compile_wall_s(self) -> float:
        """Sum of torch's per-frame compile wall times (forward and backward)."""
        return sum(c.wall_s or 0.0 for c in self.compiles.values())

    @property
    def running_phase(self) -> ev.PhaseStarted | None:
        """The innermost phase still open (latest started)."""
        if not self.open_phases:
            return None
        return max(self.open_phases.values(), key=lambda p: p.t)

    def compile(self, compile_id: str) -> Compile:
        c = self.compiles.get(compile_id)
        if c is None:
            c = self.compiles[compile_id] = Compile(compile_id)
        self.last_compile_id = compile_id
        return c


@data
class Node:
    """One node of a job, in a session ``dlcprof merge`` joined: where it came
    from and how its own program started and ended."""

    merged: ev.NodeMerged
    program: ev.ProgramStarted | None = None
    program_exit: ev.ProgramExited | None = None


def script_name(p: ev.ProcessAttached) -> str:
    """The script an attached process runs: "train.py"."""
    script = next((a for a in p.argv if a and not a.startswith("-")), "") or "python"
    return script.rsplit("/", 1)[-1]


def process_label(p: ev.ProcessAttached | None) -> str:
    """An attached process as people know it: "train.py (pid 4242, rank 1)"."""
    if p is None:
        return ""
    if p.test:  # a pytest plugin's test: its node id, the process is every test's
        return p.run_id
    rank = f", rank {p.rank}" if p.rank is not None else ""
    return f"{script_name(p)} (pid {p.pid}{rank})"


class Session:
    """Folds events into state. ``apply`` never raises on a well-typed event."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self.runs: dict[str, Run] = {}
        self.worker: ev.WorkerReady | None = None
        self.worker_exits: list[ev.WorkerExited] = []
        self.errors: list[ev.ErrorRaised] = []  # session-level (no run)
        self.logs: list[ev.LogEmitted] = []  # session-level (no run)
        # Monitor events that belong to no run (none was running).
        self.device_samples: list[ev.DeviceSampled] = []
        self.monitors: dict[str, ev.MonitorStatus] = {}
        self.paper: ev.PaperPlanned | None = None  # the latest `dlcprof paper` in the session
        # What the report this session was loaded from said about where and when
        # it was recorded (environment, created, extra, dlcprof_version): the
        # events do not carry it, and re-saving a loaded session on another
        # machine must not claim that machine recorded it. None: recorded here.
        self.provenance: dict[str, Any] | None = None
        self.tried: list[ev.AdviceTried] = []  # `dlcprof try`: advice measured
        # An attached program (dlcprof -- CMD): its runs are its processes, by run id.
        self.program: ev.ProgramStarted | None = None
        self.program_exit: ev.ProgramExited | None = None
        # --eager-baseline: the same command again with torch.compile forced eager.
        self.eager_program: ev.ProgramStarted | None = None
        self.eager_exit: ev.ProgramExited | None = None
        # Its processes are no runs of the program: only their timed steps are kept.
        self.eager_run_ids: set[str] = set()
        self.eager_steps: list[ev.StepsTimed] = []
        # A session `dlcprof merge` joined: its nodes, each one's events after
        # its NodeMerged. ``program`` is then the first node's (it holds rank 0).
        self.nodes: list[Node] = []
        # A session `dlcprof import` read from TORCH_TRACE logs: how, and every
        # rank's summary by rank (the ranks whose events it holds are runs too).
        self.imported: ev.TraceImported | None = None
        self.rank_summaries: dict[int, ev.RankSummarized] = {}
        # Where each event folded is also written while dlcprof records (journal.py).
        self.journal: ev.Sink | None = None

    # --- folding -----------------------------------------------------------------

    @classmethod
    def from_events(cls, events: list[ev.Event]) -> Session:
        s = cls()
        for e in events:
            s.apply(e)
        return s

    def apply(self, e: ev.Event) -> None:
        self.events.append(e)
        if self.journal is not None:
            self.journal.emit(e)
        if self._of_eager_baseline(e):
            return
        handler = _handler(type(e).__name__)
        if handler is not None:
            handler(self, e)

    def _of_eager_baseline(self, e: ev.Event) -> bool:
        """An event of a process of --eager-baseline's run (it runs after the
        program's, so a process new while it runs is one): its steps kept."""
        run_id = getattr(e, "run_id", None)
        if run_id is None:
            return False
        if isinstance(e, ev.ProcessAttached) and run_id not in self.runs:
            if self.eager_program is not None and self.eager_exit is None:
                self.eager_run_ids.add(run_id)
        if run_id not in self.eager_run_ids:
            return False
        if isinstance(e, ev.StepsTimed):
            self.eager_steps.append(e)
        return True

    def run(self, run_id: str) -> Run:
        r = self.runs.get(run_id)
        if r is None:
            r = self.runs[run_id] = Run(run_id)
        return r

    @property
    def latest_run(self) -> Run | None:
        return next(reversed(self.runs.values()), None) if self.runs else None

    def all_device_samples(self) -> list[ev.DeviceSampled]:
        """Every device sample of the session, in time order."""
        samples = [s for r in self.runs.values() for s in r.device_samples]
        return sorted([*samples, *self.device_samples], key=lambda s: s.t)

    def _monitored(
        self,
        e: ev.DeviceSampled
        | ev.MonitorStatus
        | ev.HotFramesSampled
        | ev.ProfileSaved
        | ev.MonitorCostMeasured,
    ) -> Run | None:
        """The run a monitor event belongs to: its run id, else (older reports)
        the latest run started by then."""
        if e.run_id is not None:
            return self.run(e.run_id)
        started = [r for r in self.runs.values() if r.started_t is not None and r.started_t <= e.t]
        return started[-1] if started else None

    def _on_WorkerReady(self, e: ev.WorkerReady) -> None:
        self.worker = e

    def _on_RunStarted(self, e: ev.RunStarted) -> None:
        r = self.run(e.run_id)
        r.settings, r.status = e, "running"

    def _on_WorkloadLoaded(self, e: ev.WorkloadLoaded) -> None:
        self.run(e.run_id).loaded = e

    def _on_RunFinished(self, e: ev.RunFinished) -> None:
        r = self.run(e.run_id)
        r.status, r.finished_t, r.wall_s = e.status, e.t, e.wall_s
        r.open_phases.clear()
        r.timing = None

    def _on_WorkerExited(self, e: ev.WorkerExited) -> None:
        self.worker_exits.append(e)
        # A run the worker never finished ended with the process.
        for r in self.runs.values():
            if r.live:
                r.status = "cancelled" if e.cancelled else "crashed"
                r.finished_t = e.t
                r.open_phases.clear()
                r.timing = None

    def _on_ErrorRaised(self, e: ev.ErrorRaised) -> None:
        (self.run(e.run_id).errors if e.run_id else self.errors).append(e)

    def _on_LogEmitted(self, e: ev.LogEmitted) -> None:
        (self.run(e.run_id).logs if e.run_id else self.logs).append(e)

    def _on_ProbeUnavailable(self, e: ev.ProbeUnavailable) -> None:
        if e.run_id:
            self.run(e.run_id).unavailable[e.probe] = e.reason

    def _on_PhaseStarted(self, e: ev.PhaseStarted) -> None:
        self.run(e.run_id).open_phases[(e.thread, e.name)] = e

    def _on_PhaseEnded(self, e: ev.PhaseEnded) -> None:
        r = self.run(e.run_id)
        r.open_phases.pop((e.thread, e.name), None)
        # Pool-thread phases (g++ compiles) carry no compile id: they belong
        # to the compile in progress.
        c = r.compile(e.compile_id or r.last_compile_id or "?")
        c.phases.append(e)
        if e.cache_state and c.cache_state is None:
            c.cache_state = e.cache_state

    def _on_CompileFinished(self, e: ev.CompileFinished) -> None:
        r = self.run(e.run_id)
        key = ev.backward_id(e.compile_id) if e.is_backward else e.compile_id
        c = r.compiles.get(key) or r.compile(key)
        c.record = e
        c.records.append(e)
        # The recompile that led here now has a price.
        for rc in reversed(r.recompiles):
            if rc.cost_s is None and rc.compile_id in (None, e.compile_id):
                rc.cost_s = e.wall_s
                break

    def _on_CompileCostMeasured(self, e: ev.CompileCostMeasured) -> None:
        # It arrives after the compile (an attached process sends it at its end):
        # an id torch recorded no compile for is no compile of its own (a backward
        # lowered inside its forward's compile, as a recompile with dynamic shapes
        # does: the trace gives it no id, the cost probe "0/1 (bwd)").
        c = self.run(e.run_id).compiles.get(e.compile_id)
        if c is not None:
            c.cost = e

    def _on_CompileCpuMeasured(self, e: ev.CompileCpuMeasured) -> None:
        r = self.run(e.run_id)  # not r.compile(): it arrives after the compile, not in it
        c = r.compiles.setdefault(e.compile_id, Compile(e.compile_id))
        # A second measure of one id: torch._dynamo.reset() in the program restarted
        # its compile ids. The compile's records add up, and so do its seconds.
        if c.cpu is not None:
            e = ev.CompileCpuMeasured(
                run_id=e.run_id,
                compile_id=e.compile_id,
                cpu_s=c.cpu.cpu_s + e.cpu_s,
                compilers_s=_add(c.cpu.compilers_s, e.compilers_s),
                workers_s=_add(c.cpu.workers_s, e.workers_s),
                t=e.t,
            )
        c.cpu = e

    def _on_KernelGenerated(self, e: ev.KernelGenerated) -> None:
        self.run(e.run_id).compile(e.compile_id).kernels.append(e)

    def _on_RecompileTriggered(self, e: ev.RecompileTriggered) -> None:
        self.run(e.run_id).recompiles.append(
            Recompile(
                e.compile_id, e.reason, e.t, called_at=e.called_at, through=e.through, call=e.call
            )
        )

    def _on_RecompileLimitHit(self, e: ev.RecompileLimitHit) -> None:
        self.run(e.run_id).recompile_limit = e

    def _on_CacheLookedUp(self, e: ev.CacheLookedUp) -> None:
        self.run(e.run_id).cache_lookups.append(e)

    def _on_HeaderPrecompiled(self, e: ev.HeaderPrecompiled) -> None:
        self.run(e.run_id).header_built = e

    def _on_CompileRaised(self, e: ev.CompileRaised) -> None:
        run = self.run(e.run_id)
        run.compile_raised = run.compile_raised or e

    def _on_NothingCompiled(self, e: ev.NothingCompiled) -> None:
        self.run(e.run_id).nothing_compiled = e

    def _on_EagerCallsCounted(self, e: ev.EagerCallsCounted) -> None:
        run = self.run(e.run_id)
        run.eager_calls, run.eager_call_s, run.eager_untimed = e.calls, e.call_s, e.untimed

    def _on_DimMadeDynamic(self, e: ev.DimMadeDynamic) -> None:
        self.run(e.run_id).dynamic_dims.append(e)

    def _on_GraphBroken(self, e: ev.GraphBroken) -> None:
        r = self.run(e.run_id)
        r.graph_breaks.append(e)
        if e.compile_id:
            r.compile(e.compile_id).graph_breaks.append(e)

    def _on_BenchmarkMeasured(self, e: ev.BenchmarkMeasured) -> None:
        self.run(e.run_id).benchmark = e

    def _on_SteadyAllocatorMeasured(self, e: ev.SteadyAllocatorMeasured) -> None:
        self.run(e.run_id).steady = e

    def _on_OpAutotuned(self, e: ev.OpAutotuned) -> None:
        self.run(e.run_id).autotuned.append(e)

    def _on_CudagraphDecided(self, e: ev.CudagraphDecided) -> None:
        self.run(e.run_id).cudagraphs.append(e)

    def _on_CudagraphSkipped(self, e: ev.CudagraphSkipped) -> None:
        self.run(e.run_id).cudagraph_skips.append(e)

    def _on_CudagraphsCounted(self, e: ev.CudagraphsCounted) -> None:
        self.run(e.run_id).cudagraph_counts = e

    def _on_ProfilingStarted(self, e: ev.ProfilingStarted) -> None:
        self.run(e.run_id).profiling = e

    def _on_KernelsProfiled(self, e: ev.KernelsProfiled) -> None:
        self.run(e.run_id).kernel_profile = e

    def _on_TimingStarted(self, e: ev.TimingStarted) -> None:
        self.run(e.run_id).timing = e

    def _on_TimingEnded(self, e: ev.TimingEnded) -> None:
        r = self.run(e.run_id)
        r.timing = None
        r.timed.append(e)

    def _on_MonitorCostMeasured(self, e: ev.MonitorCostMeasured) -> None:
        r = self._monitored(e)
        if r is not None:
            r.monitor_costs[e.monitor] = e

    def _on_ShapeStepMeasured(self, e: ev.ShapeStepMeasured) -> None:
        self.run(e.run_id).sweep.append(e)

    def _on_SweepFinished(self, e: ev.SweepFinished) -> None:
        self.run(e.run_id).sweep_done = e

    def _on_DeviceSampled(self, e: ev.DeviceSampled) -> None:
        r = self._monitored(e)
        (r.device_samples if r is not None else self.device_samples).append(e)

    def _on_MonitorStatus(self, e: ev.MonitorStatus) -> None:
        r = self._monitored(e)
        (r.monitors if r is not None else self.monitors)[e.monitor] = e

    def _on_HotFramesSampled(self, e: ev.HotFramesSampled) -> None:
        r = self._monitored(e)
        if r is not None:
            r.hot_frames = e

    def _on_AdviceTried(self, e: ev.AdviceTried) -> None:
        self.tried.append(e)

    def _on_PaperPlanned(self, e: ev.PaperPlanned) -> None:
        self.paper = e

    def _on_ProgramStarted(self, e: ev.ProgramStarted) -> None:
        if e.eager:
            self.eager_program, self.eager_exit = e, None
            return
        if self.nodes:
            self.nodes[-1].program, self.nodes[-1].program_exit = e, None
        if len(self.nodes) <= 1:
            self.program, self.program_exit = e, None

    def _on_ProgramExited(self, e: ev.ProgramExited) -> None:
        if e.eager:
            self.eager_exit = e
            return
        if self.nodes:
            self.nodes[-1].program_exit = e
        if len(self.nodes) <= 1:
            self.program_exit = e
        # A process that never said it finished ended with the program (os._exit,
        # a signal), or runs on, detached.
        for r in self.runs.values():
            if r.process is not None and r.live:
                r.status = "cancelled" if e.detached else "ended"
                r.finished_t = e.t
                r.open_phases.clear()

    def _on_GraphSplitForDDP(self, e: ev.GraphSplitForDDP) -> None:
        self.run(e.run_id).ddp_splits.append(e)

    def _on_CompileSettingsRead(self, e: ev.CompileSettingsRead) -> None:
        self.run(e.run_id).compile_settings = e

    def _on_StepsTimed(self, e: ev.StepsTimed) -> None:
        self.run(e.run_id).steps.append(e)

    def _on_CompileThreadsRead(self, e: ev.CompileThreadsRead) -> None:
        self.run(e.run_id).compile_threads = e

    def _on_CompileCalled(self, e: ev.CompileCalled) -> None:
        self.run(e.run_id).compile_calls.append(e)

    def _on_ModuleCompileRan(self, e: ev.ModuleCompileRan) -> None:
        self.run(e.run_id).modules_ran.add(e.number)

    def _on_ProcessAttached(self, e: ev.ProcessAttached) -> None:
        r = self.run(e.run_id)
        r.process, r.status = e, "running"

    def _on_ProcessGroupJoined(self, e: ev.ProcessGroupJoined) -> None:
        self.run(e.run_id).joined = e

    def _on_TraceImported(self, e: ev.TraceImported) -> None:
        self.imported = e

    def _on_RankSummarized(self, e: ev.RankSummarized) -> None:
        self.rank_summaries[e.rank] = e

    def _on_NodeMerged(self, e: ev.NodeMerged) -> None:
        self.nodes.append(Node(e))

    def _on_GraphCallsTimed(self, e: ev.GraphCallsTimed) -> None:
        self.run(e.run_id).graph_calls = e

    def _on_TraceSaved(self, e: ev.TraceSaved) -> None:
        if e.run_id is not None:
            self.run(e.run_id).raw_trace = e

    def _on_ProfileSaved(self, e: ev.ProfileSaved) -> None:
        r = self._monitored(e)
        if r is not None:
            r.profile = e


def _add(a: float | None, b: float | None) -> float | None:
    """Two measures' sum; None where either was not measured."""
    return None if a is None or b is None else a + b


@functools.cache
def _handler(kind: str) -> Callable[[Session, Any], None] | None:
    """``Session``'s ``_on_<event>`` of an event's class name (looked up once a class)."""
    return getattr(Session, f"_on_{kind}", None)
