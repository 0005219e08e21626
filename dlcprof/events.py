"""The protocol: every fact the worker or a monitor learns is one typed event.

One idea, kept whole past 600 lines: every event type, where events go and
their JSON-lines codec are the one module both processes and the reports import.

Events travel as JSON lines (one object per line, ``"type"`` names the class).
All timestamps ``t`` are wall-clock epoch seconds (``time.time()``), the clock
torch's own chromium events use, so worker phases, monitor samples and the UI
share one time axis across processes.

Pure standard library: imported by the UI, the worker and the reports alike.
"""

from __future__ import annotations

import dataclasses
import json
import time
import types
import typing
from dataclasses import field
from typing import Any, ClassVar, Protocol

from dlcprof.data import data

SCHEMA_VERSION = 1


def now() -> float:
    """The shared clock for every event."""
    return time.time()


@data
class Event:
    """Base class; ``type`` on the wire is the class name."""

    t: float = field(default_factory=now, kw_only=True)
    registry: ClassVar[dict[str, type[Event]]] = {}

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        Event.registry[cls.__name__] = cls


class Sink(Protocol):
    """Where events go: the worker's event pipe, an attached process's socket, a test's list."""

    def emit(self, event: Event) -> None: ...


# --- worker lifecycle ---------------------------------------------------------


@data
class WorkerReady(Event):
    """Torch is imported; the worker waits for a RunRequest on stdin."""

    pid: int
    schema: int
    torch_version: str
    python_version: str
    cuda_available: bool
    device_name: str  # of the default CUDA device, or the CPU model
    cpu_count: int


@data
class RunStarted(Event):
    """The worker accepted a run; echoes the resolved settings."""

    run_id: str
    target: str
    workload: str
    mode: str
    dynamic: str  # "auto" | "true" | "false"
    backend: str
    device: str  # resolved: "cpu" | "cuda"
    device_name: str
    dtype: str
    size: str
    cache: str  # "warm" | "cold" | "fresh"
    threads: int
    iters: int
    shapes: list[int]
    torch_version: str
    reps: int = 7
    sweep: bool = False  # a shape sweep runs (over `shapes`, else the workload's SIZES)
    benchmark: bool = True
    freezing: bool = False
    regional: str = ""  # the module class compiled per instance ("" for the whole model)
    mark_dynamic: str = ""  # "ARG:DIM" marked dynamic before each compiled call
    hatch: str = ""  # the graph-break hatch set in torch._dynamo.config (hatches.SETTINGS)
    cache_artifacts: str = ""  # the Mega-Cache artifacts file loaded and saved
    calls: int | None = None  # the calls advice judges payback within (--calls); None: its default


@data
class WorkloadLoaded(Event):
    run_id: str
    name: str
    description: str
    sizes: list[int]
    has_inputs_for: bool


@data
class RunFinished(Event):
    run_id: str
    status: str  # "ok" | "error" | "cancelled" | LOG_ENDED
    wall_s: float


# The status of a process ``dlcprof import`` read: its log ended, and says
# nothing of how the process did.
LOG_ENDED = "log ended"


@data
class WorkerExited(Event):
    """Emitted by the parent, not the worker: how the process ended."""

    returncode: int | None
    signal: str | None  # e.g. "SIGSEGV" when killed by a signal
    message: str  # one line for the user
    cancelled: bool = False  # the user (or a hang timeout) stopped it


@data
class ErrorRaised(Event):
    """A failure the user must see: one-line ``message``, full ``traceback``."""

    run_id: str | None
    stage: str  # "load" | "compile" | "benchmark" | "sweep" | "worker" | "monitor"
    message: str
    traceback: str = ""
    bad_input: bool = False  # the user's input was wrong (a workload, a setting): CLI exit 2


@data
class LogEmitted(Event):
    """Warnings, the workload's own prints, probe notes."""

    run_id: str | None
    level: str  # "info" | "warning" | "error"
    source: str  # "stdout" | "stderr" | "torch" | "probe" | "dlcprof"
    message: str


@data
class ProbeUnavailable(Event):
    """A torch private API this probe needs is missing: degrade, say why."""

    run_id: str | None
    probe: str
    reason: str


# --- compilation ----------------------------------------------------------------

# A compile's lazily compiled backward is a compile of its own: "0/0 (bwd)".
BACKWARD = " (bwd)"


def backward_id(compile_id: str) -> str:
    """The id of the backward of compile ``compile_id`` (idempotent)."""
    return compile_id if compile_id.endswith(BACKWARD) else compile_id + BACKWARD


# The prefix of a shape sweep's compile ids: "sweep:0/0" (torch restarts its ids
# after the reset before the sweep).
SWEEP = "sweep:"


def after_reset(resets: int) -> str:
    """The prefix of compile ids after the program's ``resets``-th
    ``torch._dynamo.reset()`` ("reset1:0/0"): torch restarts its ids at 0/0."""
    return f"reset{resets}:"


# An AOTInductor compile's id ("aoti/0", "aoti/1"): torch logs it with none.
AOTI = "aoti/"


@data
class PhaseStarted(Event):
    run_id: str
    compile_id: str | None  # None until the End event names it
    name: str
    thread: int


@data
class PhaseEnded(Event):
    run_id: str
    compile_id: str | None
    name: str
    thread: int
    start_t: float
    duration_s: float
    cache_state: str | None = None

    @property
    def end_t(self) -> float:
        return self.start_t + self.duration_s


@data
class CompileFinished(Event):
    """One record per frame compile (torch's compilation_metrics)."""

    run_id: str
    compile_id: str
    wall_s: float
    start_t: float
    is_backward: bool
    recompile_reason: str | None
    fail_type: str | None
    fail_reason: str | None
    graph_op_count: int | None
    guard_count: int | None
    cache: str | None  # "hit" | "miss" | "bypass" | None when unknown
    metrics: dict[str, Any]  # the selected raw fields, as torch named them


@data
class CompileCpuMeasured(Event):
    """CPU seconds of one compile (worker/probes/compile_cpu.py): the compiling
    process's CPU time (all its threads) and that of the compiler children it
    waited for (g++), from Dynamo's start of the compile to its end. Steadier
    than ``CompileFinished.wall_s`` on a busy machine: time spent waiting for a
    core is not in it. Work in Inductor's pool of compile workers is not.

    Where those seconds ran: ``compilers_s``, the compiler subprocesses (g++)
    inside ``cpu_s``; ``workers_s``, apart from it, Inductor's compile-worker
    processes over the same span (None: no such process, or no /proc to read)."""

    run_id: str
    compile_id: str
    cpu_s: float
    compilers_s: float | None = None
    workers_s: float | None = None


@data
class CacheLookedUp(Event):
    """One lookup in one of torch's compile caches, as torch logged it
    (``aotautograd_cache_*``, ``fx_graph_cache_*``). ``parts``: what the key was
    made of, each component's name -> "hash value" (``trace_records/payloads.py:
    key_parts``; the hash compared, never shown); empty where torch logged none
    (AOTAutograd's). ``graph_ops``: the ops of the graph in the key, where it
    holds one."""

    run_id: str
    compile_id: str | None
    layer: str  # "aotautograd" | "fx_graph"
    state: str  # "hit" | "miss" | "bypass"
    key: str = ""
    detail: str = ""  # torch's cache_status_detailed ("full_miss", ...)
    reason: str = ""  # why it bypassed
    saved_s: float | None = None  # what a hit saved, where torch logged it
    parts: dict[str, str] = field(default_factory=dict)
    graph_ops: int | None = None


@data
class HeaderPrecompiled(Event):
    """The first compile also built Inductor's precompiled header (once per
    TMPDIR and torch install): its seconds are in that compile's time, cache
    hit or not."""

    run_id: str
    path: str


@data
class NothingCompiled(Event):
    """The first call made no graph: Dynamo refused every frame it was given (or
    found no tensor op in it), so every call runs eagerly and no speedup exists
    to measure. Torch's refusal, where it gave one: the first failed frame's
    ``fail_type`` and ``fail_reason``, and the graph break's location and hints."""

    run_id: str
    frames: int  # frame compiles Dynamo attempted
    fail_type: str | None  # e.g. "Unsupported"; None when no frame failed
    fail_reason: str | None  # else the graph break that ended every frame, where one did
    location: str = ""  # "file:line" of the refusal, "" when torch named none
    hints: list[str] = field(default_factory=list)


@data
class KernelGenerated(Event):
    run_id: str
    compile_id: str
    name: str
    kind: str  # "pointwise" | "reduction" | "template" | "extern" | "unknown"
    fused_ops: list[str]  # aten ops, e.g. ["aten.sin", "aten.mul"]
    source: str
    source_lines: list[str]  # user "file:line code" lines it came from
    order: int  # position in the generated call()
    graph: str | None = None  # "inference" | "forward" | "backward": names repeat across them


@data
class RecompileTriggered(Event):
    """``called_at``: the program's own file:line whose call reached the
    recompiled code, from the live stack ("" in an imported log, or when no
    frame on it is the program's); ``through``: the library's file:line that
    called the compiled code when the program did not call it directly;
    ``call``: the source of the program's call at ``called_at`` when it called
    the compiled code directly ("" unknown), which says what the program passed."""

    run_id: str
    compile_id: str | None
    reason: str
    called_at: str = ""
    through: str = ""
    call: str = ""


@data
class RecompileLimitHit(Event):
    """Dynamo gave up recompiling: new shapes now run EAGER, silently."""

    run_id: str
    function: str
    limit: int | None
    message: str
    location: str = ""  # "file:line" of the function, as torch's warning names it


@data
class CompileRaised(Event):
    """A compile raised into the program instead of falling back to eager
    (Dynamo does so for an internal error, a backend's failure, a graph break
    under fullgraph=True): the compiled call raises it, and the program dies
    unless it catches it."""

    run_id: str
    error: str  # "InternalTorchDynamoError: AttributeError: ...", its first line
    location: str  # "file:line": the innermost frame of the traced code in the user's files
    inside: str = ""  # "file:line" inside torch or a library where it broke, "" when not
    gb_id: str = ""  # a graph break raised (fullgraph=True): its id in torch's catalogue


@data
class EagerCallsCounted(Event):
    """After a recompile limit hit: the calls that then ran eager (Dynamo's guard
    hook), and the wall of the first few of them (worker/probes/guards.py)."""

    run_id: str
    calls: int
    call_s: list[float] = field(default_factory=list)  # each timed eager call's wall
    untimed: str | None = None  # why call_s is empty


@data
class DimMadeDynamic(Event):
    run_id: str
    compile_id: str | None
    symbol: str
    source: str  # e.g. "L['x'].size()[0]"


@data
class GraphBroken(Event):
    run_id: str
    compile_id: str | None
    reason: str
    location: str  # "file:line": the innermost frame in the user's own code
    hints: list[str] = field(default_factory=list)
    detail: str = ""  # "file:line" where Dynamo broke, when elsewhere (inside torch)
    gb_id: str = ""  # torch's id of the break type ("GB0124"); "" when torch names none
    link: str = ""  # the id's page on torch's graph-break site
    context: str = ""  # Dynamo's debug context: the call that broke


@data
class CompileCostMeasured(Event):
    """Compile seconds by the user's code, for one compile (worker/probes/compile_cost.py).

    ``functions``: per function Dynamo traced or inlined, ``{"function", "file",
    "line", "traced" (times), "self_s" (its own tracing, callees and the backend
    compile excluded), "total_s" (with its callees')}``; ``modules``: per module the
    FX nodes came from, ``{"module" (path, "" for the top level), "cls", "stack"
    ([path, class] outermost first), "location" ("file:line"), "nodes",
    "self_s" (Inductor's lowering of its nodes)}``; ``own_s``: the probe's own
    bookkeeping, the time it added; ``called_at``: the program's own file:line
    whose call reached the compile ("" none on the stack, or a recording from
    before), under which the library functions it traced are counted."""

    run_id: str
    compile_id: str
    functions: list[dict[str, Any]]
    modules: list[dict[str, Any]]
    own_s: float = 0.0
    called_at: str = ""


# --- what a mode does: autotuning, CUDA graphs ---------------------------------------


@data
class OpAutotuned(Event):
    """Inductor picked an implementation for one op (a matmul, a convolution) by
    benchmarking its choices; ``cached``: the timings came from Inductor's
    autotune cache, nothing was benchmarked."""

    run_id: str
    compile_id: str | None
    op: str  # as Inductor names it: "mm", "addmm", "packed_linear", "convolution"
    shapes: list[str]  # per input, "4x256"
    dtypes: list[str]
    choices: list[dict[str, Any]]  # {"name", "ms" (None: failed), "description"}
    precompile_s: float | None  # torch's own timers; None when not seen
    benchmark_s: float | None
    cached: bool | None  # None: unknown (the trace probe, which times it, was unavailable)


@data
class CudagraphDecided(Event):
    """Whether Inductor wrapped one compiled graph in CUDA graphs, and if not, why."""

    run_id: str
    compile_id: str | None
    graph: str  # "inference" | "forward" | "backward"
    graphed: bool
    reason: str | None  # torch's words, "skipping cudagraphs due to ..."


@data
class CudagraphSkipped(Event):
    """A CUDA-graph skip torch announced at run time (a mutated input, too many
    re-recordings): the graph runs without CUDA graphs from then on."""

    run_id: str
    compile_id: str | None
    reason: str


@data
class CudagraphsCounted(Event):
    """CUDA-graph activity of the run, per compile id: recordings, re-recordings
    (a recording of a function already recorded) and replays; ``skips`` is
    torch's own count (counters["inductor"]["cudagraph_skips"]), CPU included."""

    run_id: str
    skips: int | None
    per_compile: dict[str, dict[str, int]] = field(default_factory=dict)


# --- measurement ------------------------------------------------------------------


@data(kw_only=True)  # in the events that mix it in
class Repetitions:
    """Per repetition: ms per call and minor page faults per call (empty where
    not counted, and in reports written before they were)."""

    eager_reps_ms: list[float] = field(default_factory=list)
    compiled_reps_ms: list[float] = field(default_factory=list)
    eager_faults: list[float] = field(default_factory=list)
    compiled_faults: list[float] = field(default_factory=list)


@data
class BenchmarkMeasured(Repetitions, Event):
    run_id: str
    eager_ms: float
    compiled_ms: float
    eager_spread_ms: float  # interquartile range over repetitions
    compiled_spread_ms: float
    reps: int
    iters: int
    warmup: int
    compile_s: float  # first compiled call, compile included, minus a steady call
    threads: int
    load_avg: list[float]
    timer: str  # "perf_counter" | "cuda_events"
    allocator: str = ""  # the malloc the timed calls ran with ("" when not recorded)


@data
class SteadyAllocatorMeasured(Repetitions, Event):
    """The benchmark again in the same worker, after pinning the allocator
    (dlcprof/allocator.py); ProbeUnavailable("steady_allocator") where it cannot."""

    run_id: str
    how: str  # what was pinned, in a few words
    eager_ms: float
    compiled_ms: float
    eager_spread_ms: float
    compiled_spread_ms: float
    reps: int
    iters: int
    warmup: int
    wall_s: float  # what this second measurement added to the run


@data
class ProfilingStarted(Event):
    """The kernel profiling stage began: after the benchmark, apart from it."""

    run_id: str
    method: str  # how kernels are timed (words for people)


@data
class KernelsProfiled(Event):
    """What the profiling stage measured inside the compiled code.

    ``kernels``: one dict per kernel, ``compile_id``/``graph``/``name``/``order``
    as in its KernelGenerated, then ``time_ms`` (per compiled call, all its
    launches; median over repetitions, ``spread_ms`` their IQR), ``launches``
    (per call), ``bytes`` (read + written per call),
    ``eager_ms`` (the eager ops it fused, per call); None with the reason in
    ``why[field]`` where not measured.
    """

    run_id: str
    method: str
    calls: int  # compiled calls timed, all repetitions together
    wall_s: float  # how long the stage took
    kernels: list[dict[str, Any]]
    # Measured in repetitions alternating with the instrumented call and the
    # replay, so that background load hits both sides of each ratio.
    compiled_ms: float | None = None  # the plain compiled call
    call_ms: float | None = None  # the compiled call while instrumented
    eager_ms: float | None = None  # the plain eager call
    eager_nodes_ms: float | None = None  # the graphs' user ops run one by one, per call
    eager_why: str | None = None
    copy_gbps: float | None = None  # a large tensor copy, bytes read + written per second
    copy_why: str | None = None
    device_busy_ms: float | None = None  # GPU: every device kernel in the window, per call
    notes: list[str] = field(default_factory=list)


@data
class TimingStarted(Event):
    """The worker is about to time repetitions and asks the monitors to pause
    (dlcprof/worker/quiet.py)."""

    run_id: str
    what: str  # "benchmark"


@data
class TimingEnded(Event):
    run_id: str
    what: str
    start_t: float  # TimingStarted's t
    quiet: bool  # the parent confirmed its monitors paused before the first timed call


@data
class ShapeStepMeasured(Event):
    run_id: str
    size: int
    recompiled: bool
    transition_s: float  # first call at this size minus a steady call
    latency_ms: float  # steady: median over reps of iters calls, as the benchmark
    reason: str | None
    ran_eager: bool = False  # recompile limit hit: this size ran eager
    # Interquartile range of latency_ms over reps; None in reports written when the
    # latency was a median of 5 single calls (rough).
    latency_spread_ms: float | None = None


@data
class SweepFinished(Event):
    run_id: str
    cumulative_transition_s: float
    compiles: int


@data
class AdviceTried(Event):
    """``dlcprof try``: one advice item run in a fresh worker (run ``run_id``) with
    the same cache setting as the run it advised, measured beside its prediction.
    Emitted by the parent; seconds are what ``what`` names (figures/advice/model.py)."""

    run_id: str  # the trial run
    advised_run: str
    rule: str
    title: str
    options: dict[str, Any]
    what: str  # "compile" | "recompiles"
    predicted_before_s: float | None
    predicted_after_s: float | None
    measured_before_s: float | None
    measured_after_s: float | None
    steady_before_ms: float | None = None
    steady_after_ms: float | None = None
    steady_spread_ms: float | None = None  # the larger of the two benchmarks' spreads
    cache_before: str | None = None  # the compiles' cache state: "hit" | "miss" | "partial" | "off"
    cache_after: str | None = None
    # Graph breaks (each once) and graphs compiled (forward frames with ops), each side.
    breaks_before: int | None = None
    breaks_after: int | None = None
    graphs_before: int | None = None
    graphs_after: int | None = None
    # An attached program's trial: the program's wall time, each side.
    wall_before_s: float | None = None
    wall_after_s: float | None = None
    # A cache item's trial (the cold fill before, the warm start after): each
    # process's start to its first compiled call or step.
    boot_before_s: float | None = None
    boot_after_s: float | None = None


# --- monitors (parent side) ---------------------------------------------------------


# Monitors watch one run's worker: their events carry that run's id (None in
# reports written before they did; the Session then places them by time).


@data
class DeviceSampled(Event):
    """One utilization sample; a value is None where the probe has none."""

    source: str  # "nvml" | "cpu"
    values: dict[str, float | None]
    run_id: str | None = None


@data
class MonitorStatus(Event):
    monitor: str  # "nvml" | "cpu" | "py-spy"
    available: bool
    message: str
    run_id: str | None = None
    how: str = ""  # how it samples, when available: "25 Hz, non-blocking"


@data
class MonitorCostMeasured(Event):
    """What a monitor itself used so far: its CPU over the time it watched."""

    monitor: str  # "device" | "py-spy"
    cpu_s: float  # CPU seconds: py-spy's processes, or the device sampler's thread
    active_s: float  # seconds it watched the worker (pauses excluded)
    run_id: str | None = None


@data
class HotFramesSampled(Event):
    """A rolling py-spy aggregate: rows of frame stats, largest first."""

    samples: int
    rows: list[dict[str, Any]]  # {function, file, line, thread, own, total, phase}
    run_id: str | None = None
    threads: dict[str, int] = field(default_factory=dict)  # samples of each thread


@data
class ProfileSaved(Event):
    """A profile file written beside the session (e.g. py-spy speedscope)."""

    path: str
    format: str  # "speedscope"
    samples: int
    run_id: str | None = None


# How torch names a rank's raw trace (TORCH_TRACE, torch/_logging/_internal.py):
# this prefix, the rank, "_", a random part, ".log"; tlparse --all-ranks-html
# finds the ranks by it.
RANK_TRACE_PREFIX = "dedicated_log_torch_trace_rank_"


@data
class TraceSaved(Event):
    """The worker wrote torch's raw structured trace of a run (what TORCH_TRACE
    writes; tlparse reads it)."""

    path: str
    records: int
    bytes: int
    run_id: str | None = None


@data
class PaperPlanned(Event):
    """Emitted by the parent when ``dlcprof paper`` (or the TUI's paper screen)
    starts: the runs that follow reproduce the findings of arXiv 2611.04273."""

    workloads: list[str]  # benchmarked on the warm cache, in order (findings 1 and 2)
    fresh: list[str]  # compiled again on a fresh Inductor cache (finding 2)
    sweep: str  # swept static, then dynamic (finding 3)
    sizes: list[int]  # the sweep's sizes
    quick: bool
    size: str  # the workloads' --size
    device: str


# --- an attached program (dlcprof/attach, dlcprof/worker/attached) ------------------


@data
class ProgramStarted(Event):
    """Emitted by the parent: ``dlcprof [run] -- CMD`` started the user's command."""

    argv: list[str]
    cwd: str
    pid: int
    eager: bool = False  # --eager-baseline's second run: torch.compile forced eager


@data
class ProgramExited(Event):
    """Emitted by the parent: how the user's command ended (or that dlcprof let go of it)."""

    returncode: int | None  # None: detached, still running
    signal: str | None  # e.g. "SIGINT" when a signal ended it
    wall_s: float
    message: str  # one line for the user
    stopped_by: str | None = None  # the stop signal or key that dlcprof passed on
    stopped_t: float | None = None  # when dlcprof first passed it on
    detached: bool = False
    eager: bool = False  # the --eager-baseline run's end


@data
class ProcessAttached(Event):
    """The first event of each process of the program that compiles: who it is.
    Its ``run_id`` keys the process's run in the Session."""

    run_id: str
    pid: int
    ppid: int
    argv: list[str]
    host: str
    started_t: float | None  # when the process started (None where unknown)
    torch_version: str
    python_version: str
    rank: int | None = None  # RANK / LOCAL_RANK / WORLD_SIZE, as torchrun sets them
    local_rank: int | None = None
    world_size: int | None = None
    cache_dir: str | None = None  # Inductor's cache folder (ranks on one host may share it)
    # The folder when the process started: "missing" | "empty" | "filled"; None unknown.
    cache_dir_state: str | None = None
    cpu_count: int | None = None  # the cores it may run on (os.sched_getaffinity)
    # When ``import torch`` returned, by dlcprof's bootstrap (None: unknown, or
    # a fork of a process that had torch already).
    torch_loaded_t: float | None = None
    # A test of dlcprof's pytest plugin (its run id the test's node id): a run
    # from the test's setup to its end, in a process that runs every test.
    test: bool = False


@data
class StepsTimed(Event):
    """At a process's end: the calls of one callable torch.compile returned,
    each timed around the whole call (worker/attached/steps.py): when each
    started and its wall, for the first calls (``calls`` counts them all)."""

    run_id: str
    caller: str  # the file:line of the torch.compile call
    start_t: list[float]
    wall_s: list[float]
    calls: int
    eager: bool = False  # --eager-baseline's run: torch.compile forced eager


@data
class CompileThreadsRead(Event):
    """At a process's end: Inductor's compile_threads, its pool of kernel-build
    workers (worker/probes/compile_workers.py); 0 where Inductor never loaded."""

    run_id: str
    threads: int | None  # None: unreadable (``why`` says)
    why: str = ""


@data
class GraphCallsTimed(Event):
    """Calls of each compiled graph so far in an attached process, timed around
    the compiled callable: ``graphs[compile_id]`` = {"calls" (all), "inside_s"
    (summed over the unsampled ones), "first_t", "first_s" (the first call's own
    time), "sampled", "sampled_s" (the calls whose kernels were timed, and their
    time: worker/attached/kernel_sample.py)}. Cumulative: the newest wins."""

    run_id: str
    graphs: dict[str, dict[str, float]]


@data
class ProcessGroupJoined(Event):
    """An attached process's ``torch.distributed.init_process_group`` returned
    (``t``: then, by this host's clock). ``waited``: the call waited for every
    rank (gloo connects a full mesh; ``TORCH_DIST_INIT_BARRIER=1``), so every
    rank's ``t`` marks one instant: the rendezvous ``dlcprof merge`` aligns the
    clocks of a job's nodes on."""

    run_id: str
    rank: int
    world_size: int
    backend: str
    waited: bool


@data
class NodeMerged(Event):
    """Emitted by ``dlcprof merge`` before one node's events: that node's
    session, joined into this one. Its run ids are as renamed here where
    another node used the same; ``offset_s`` was added to each of its
    timestamps (None: its clock could not be aligned, ``why`` says why)."""

    node: str  # "node 1": the merged session's name for it
    source: str  # the folder or file it was read from
    hosts: list[str]
    ranks: list[int]
    run_ids: list[str]
    offset_s: float | None
    why: str = ""
    waited: bool = True  # the rendezvous waited for every rank (else: approximate)
    backend: str = ""  # the process group's, as its ranks reported it


@data
class GraphSplitForDDP(Event):
    """DDPOptimizer split one Dynamo graph at DDP's bucket boundaries: each piece
    is compiled (forward and backward) as an Inductor graph of its own, under the
    frame's one compile id. Buckets as DDPOptimizer counted them (their
    parameter bytes, in the graph's order), when its bucket hook was readable."""

    run_id: str
    compile_id: str
    pieces: list[str]  # the split graph's submodules ("submod_0", ...)
    forward_graphs: int  # Inductor graphs compiled for the forward of this compile
    # Its backward's, compiled within it ahead of the first backward (AOTAutograd
    # does when the forward saves sizes for it: dynamic shapes), with no record
    # of their own; a lazily compiled backward's have theirs.
    backward_graphs: int = 0
    bucket_cap_bytes: int | None = None
    bucket_bytes: list[int] = field(default_factory=list)
    bucket_params: list[list[str]] = field(default_factory=list)


@data
class CompileSettingsRead(Event):
    """Settings that decide how a distributed program compiles, read once when the
    process first reports: at its first compile (a rank that never compiled: at
    its end). None: not readable on this torch, see ``unavailable``."""

    run_id: str
    optimize_ddp: str | None  # Dynamo's DDP mode: "ddp_optimizer", "python_reducer", ...
    compiled_autograd: bool | None
    unavailable: str = ""
    # The data-parallel wrappers the process had built: "DDP", "FSDP", "FSDP2"
    # (empty: none, or a recording from before they were read).
    wrappers: list[str] = field(default_factory=list)


@data
class CompileCalled(Event):
    """An attached program called ``torch.compile`` (worker/probes/compile_calls.py):
    the settings it passed, as torch resolved them. ``dynamic``: "auto" | "true" |
    "false" as for a run; ``mode`` None when Dynamo was entered without
    torch.compile. ``caller``: the first file:line outside torch that called it;
    ``package``: the installed package that line is in ("" for the program's own);
    ``made_at``: where a package's call was made from, the first frame further
    out that is not in it ("litgpt/pretrain.py:213" through Lightning's wrapper;
    "" for the program's own call or none found); ``options``: its ``options=``
    as given ("" none); ``target``: the file of the code compiled ("" unknown);
    ``module_call``: a module's call, numbered in its process from 1, whose
    first run ``ModuleCompileRan`` tells (0: a function's call, or a recording
    from before)."""

    run_id: str
    mode: str | None
    dynamic: str
    backend: str
    fullgraph: bool
    caller: str
    package: str = ""
    made_at: str = ""
    options: str = ""
    target: str = ""
    module_call: int = 0


@data
class ModuleCompileRan(Event):
    """The module that the process's torch.compile call ``number``
    (``CompileCalled.module_call``) returned ran for the first time: a module's
    call that never ran compiled nothing."""

    run_id: str
    number: int


@data
class TraceImported(Event):
    """``dlcprof import``: this session was read from torch's own structured-trace
    logs (``TORCH_TRACE``), not watched live. ``kept``: the ranks whose events
    it holds (every rank up to a bound, else one per group of alike ranks);
    ``skipped``: what damaged logs lost, one line ("" when nothing)."""

    sources: list[str]  # the paths given
    files: int
    bytes: int
    processes: int  # one per log read (of the run imported, when the logs hold several)
    kept: list[int]
    skipped: str = ""
    wall_s: float = 0.0
    rankless: int = 0  # processes of a job with ranks whose records name no rank
    # Lines on what the logs lack: where logs cut short end, the job's other
    # runs in the logs, its ranks without a log, logs not torch.compile's.
    notes: list[str] = field(default_factory=list)
    # False: no record of the logs holds an epoch time (no chromium event, no
    # compile's times); the session's times are then the logs' glog clock.
    dated: bool = True
    # Nodes that each read their own logs (``dlcprof import --node-summary``) before
    # ``dlcprof merge`` joined them; ``wall_s`` is then the slowest node's read
    # and the merge. 0: read in one place.
    nodes: int = 0


@data
class RankSummarized(Event):
    """``dlcprof import``: what one rank's log held, reduced to what grouping
    compares (figures/job/groups.py's ``RankSignature``) and the Ranks table
    counts. ``run_id``: its run, when the session keeps its events."""

    rank: int
    host: str
    pid: int
    source: str  # its log file
    compiles: list[str]  # compile ids torch finished, forward and backward
    guard_failures: list[str]  # each recompile's failed guard
    cache: list[str]  # "compile id: hit|miss|bypass"
    graph_ops: list[str]  # "compile id: ops" (the graphs Dynamo made, by op count)
    breaks: list[str]  # "reason at file:line"
    failures: list[str]  # "compile id: fail type"
    compile_s: float = 0.0
    run_id: str | None = None


# --- codec ----------------------------------------------------------------------------


class ProtocolError(ValueError):
    """A line that is not a dlcprof event."""


def to_dict(event: Event) -> dict[str, Any]:
    """The event's fields, shallow: no event holds another dataclass, and the
    probe encodes every event inside the user's program, where
    ``dataclasses.asdict``'s deep copy was most of the encoding's cost."""
    d = dict(vars(event))
    d["type"] = type(event).__name__
    return d


def from_dict(d: dict[str, Any]) -> Event:
    try:
        cls = Event.registry[d["type"]]
    except (KeyError, TypeError) as e:
        raise ProtocolError(f"unknown event type {d.get('type')!r}") from e
    fields = _fields(cls)
    # Unknown keys are dropped so older readers load newer minor additions.
    kwargs = {k: v for k, v in d.items() if k in fields}
    missing = [name for name, (_, required) in fields.items() if required and name not in kwargs]
    if missing:
        more = f" and {len(missing) - 3} more" if len(missing) > 3 else ""
        raise ProtocolError(f"bad {cls.__name__} event: no {', '.join(missing[:3])}{more}")
    for name, value in kwargs.items():
        tp = fields[name][0]
        if not _fits(value, tp, name):
            number = isinstance(value, (int, float)) and not isinstance(value, bool)
            want = "out of range" if number and not _fits(value, float, name) else ""
            raise ProtocolError(
                f"bad {cls.__name__} event: {name} is {_shown(value)}, "
                f"{want or 'not ' + _type_name(tp)}"
            )
    return cls(**kwargs)


# --- checking what a line claims (a report file may come from anywhere) --------------

# Larger magnitudes are no measurement of ours: a hostile or corrupted file.
_MAX_NUMBER = 1e18
_MAX_TIMESTAMP = 1e11  # epoch seconds: the year 5138


def _fields(cls: type[Event]) -> dict[str, tuple[Any, bool]]:
    """Each field's type (resolved from its annotation) and whether it is required."""
    cached = _FIELDS.get(cls)
    if cached is None:
        hints = typing.get_type_hints(cls)
        cached = {
            f.name: (
                hints[f.name],
                f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING,
            )
            for f in dataclasses.fields(cls)
        }
        _FIELDS[cls] = cached
    return cached


_FIELDS: dict[type[Event], dict[str, tuple[Any, bool]]] = {}


def _fits(value: Any, tp: Any, key: str = "") -> bool:
    """Does a decoded JSON value fit a field's annotation? Numbers must be finite
    and of a sane size, timestamps (``t``, ``*_t``) of a sane date."""
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        return any(_fits(value, arg, key) for arg in typing.get_args(tp))
    if tp is Any:
        return True
    if tp is type(None):
        return value is None
    if tp is bool:
        return isinstance(value, bool)
    if tp in (int, float):
        if isinstance(value, bool) or not isinstance(value, (int, float) if tp is float else int):
            return False
        limit = _MAX_TIMESTAMP if key == "t" or key.endswith("_t") else _MAX_NUMBER
        return abs(value) < limit  # False for NaN and infinities too
    if tp is str:
        return isinstance(value, str)
    if origin is list:
        (item,) = typing.get_args(tp)
        return isinstance(value, list) and all(_fits(v, item) for v in value)
    if origin is dict:
        k, v = typing.get_args(tp)
        return isinstance(value, dict) and all(
            _fits(a, k) and _fits(b, v) for a, b in value.items()
        )
    return isinstance(value, tp) if isinstance(tp, type) else True


def _shown(value: Any) -> str:
    if isinstance(value, (str, int, float, bool)) or value is None:
        text = repr(value)
        if len(text) <= 40:
            return text
    kind = type(value).__name__
    return f"{'an' if kind[0] in 'aeiou' else 'a'} {kind}"


def _type_name(tp: Any) -> str:
    return str(tp).replace("typing.", "").replace("<class '", "").replace("'>", "")


def encode(event: Event) -> bytes:
    return (json.dumps(to_dict(event), separators=(",", ":"), default=str) + "\n").encode()


def decode(line: bytes | str) -> Event:
    try:
        d = json.loads(line)
    except json.JSONDecodeError as e:
        raise ProtocolError(f"not JSON: {e}") from e
    if not isinstance(d, dict):
        raise ProtocolError("event is not a JSON object")
    return from_dict(d)
