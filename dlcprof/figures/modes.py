"""What a mode did: the ops it autotuned, the graphs it CUDA-graphed, and the
modes of one workload side by side.

- ``autotune(run)``: each autotuned op with its choices, the fastest, and the
  seconds torch spent precompiling and benchmarking; else why nothing was.
- ``cudagraphs(run)``: per compiled graph, CUDA-graphed or torch's reason not
  to; on a GPU the recordings, re-recordings and replays.
- ``mode_tables(session)``: runs of one workload that differ only in their mode,
  one row each: compile (of which autotune), steady latency, speedup, kernels,
  CUDA graphs, break-even, and the latency against the default mode's.
"""

from __future__ import annotations

import re

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import benchmark as fb
from dlcprof.figures import kernels as fk
from dlcprof.session import Compile, Run, Session
from dlcprof.settings import AUTOTUNE_MODES, CUDAGRAPH_MODES, MODES

BASELINE = "default"
# Inductor's run-time autotuning of Triton kernels (first call, GPU): its configs
# benchmarked, then (max-autotune modes) coordinate descent from the winner.
RUNTIME_TRITON_PHASES = (
    "CachingAutotuner.benchmark_all_configs",
    "CachingAutotuner.coordinate_descent_tuning",
)
COLUMNS = (
    "mode",
    "compile (autotune)",
    "steady",
    "speedup",
    "break-even",
    f"vs {BASELINE}",
    "kernels",
    "CUDA graphs",
)


# --- autotuning -------------------------------------------------------------------------

_KV = re.compile(r"(\w+)=('[^']*'|[^,]+)")
_TILE = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


def triton_config(description: str) -> dict[str, str]:
    """A Triton template choice's config, from its description as torch writes it
    ("ACC_TYPE='tl.float32', BLOCK_K=32, BLOCK_M=64, ..., num_stages=3, num_warps=4")."""
    return {k: v.strip().strip("'") for k, v in _KV.findall(description or "")}


def config_label(description: str) -> str:
    """ "64×32×32 tile, 3 stages, 4 warps" for a Triton config; else the description."""
    cfg = triton_config(description)
    if not any(k in cfg for k in _TILE):
        return text.short(description, 60)
    parts = ["×".join(cfg[k] for k in _TILE if k in cfg) + " tile"]
    if "num_stages" in cfg:
        parts.append(text.plural(int(cfg["num_stages"]), "stage"))
    if "num_warps" in cfg:
        parts.append(text.plural(int(cfg["num_warps"]), "warp"))
    return ", ".join(parts)


@data(frozen=True)
class Choice:
    name: str
    ms: float | None  # None: it failed to compile or run
    config: str  # a Triton config's label; "" for a C++ template or an extern kernel


@data(frozen=True)
class TunedOp:
    event: ev.OpAutotuned
    choices: list[Choice]  # fastest first

    @property
    def op(self) -> str:
        return self.event.op

    @property
    def shapes(self) -> str:
        return ", ".join(self.event.shapes)

    @property
    def winner(self) -> Choice | None:
        return self.choices[0] if self.choices and self.choices[0].ms is not None else None

    @property
    def seconds(self) -> float | None:
        """Precompiling plus benchmarking, by torch's own timers."""
        parts = [x for x in (self.event.precompile_s, self.event.benchmark_s) if x is not None]
        return sum(parts) if parts else None

    @property
    def cached(self) -> bool | None:
        return self.event.cached


@data(frozen=True)
class Autotune:
    ops: list[TunedOp]
    op_seconds: float | None  # sum of the ops' timers
    runtime_triton_s: float | None  # Triton kernels autotuned at their first call (GPU)
    runtime_kernels: int
    torch_seconds: float | None  # compilation_metrics' compile_time_autotune_time_us, summed
    why_none: str | None  # nothing autotuned: why

    @property
    def seconds(self) -> float | None:
        """Everything autotuning cost the first call."""
        parts = [x for x in (self.op_seconds, self.runtime_triton_s) if x is not None]
        return sum(parts) if parts else None

    @property
    def has_configs(self) -> bool:
        """Some choice has a config to show (Triton templates; not the CPU's)."""
        return any(c.config for op in self.ops for c in op.choices)

    @property
    def all_cached(self) -> bool:
        return bool(self.ops) and all(op.cached for op in self.ops)

    @property
    def line(self) -> str:
        """The whole story in one line, as every view states it."""
        if self.why_none is not None:
            return nothing_autotuned(self.why_none)
        if self.all_cached:
            return autotune_cached(len(self.ops))
        return autotuned(len(self.ops), self.seconds, self.runtime_kernels, self.runtime_triton_s)


# A library call or kernel name, or a fused op, that autotuning could choose for.
_MATMUL = re.compile(r"mm\b|conv|linear|matmul|scaled_dot_product")


def _has_matmul(run: Run) -> bool:
    """Some kernel of the run is a matmul, a convolution or a linear layer."""
    return any(_MATMUL.search(name) for k in run.kernels for name in (k.name, *k.fused_ops))


def _from_cache(c: Compile) -> bool:
    metrics = c.record.metrics if c.record else {}
    return c.cache == "hit" or bool(metrics.get("aotautograd_local_cache_hit_count"))


def _why_not_autotuned(run: Run) -> str:
    s = run.settings
    if run.process is not None:  # an attached program: its own mode, not ours
        return "the program's compiles autotuned nothing"
    if s is None:
        return NOT_STARTED
    if s.backend != "inductor":
        return not_inductor(s.backend)
    if s.mode not in AUTOTUNE_MODES:
        return f"{mode_does_not(s.mode, 'autotune')} (the max-autotune modes do)"
    if "autotune" in run.unavailable:
        return run.unavailable["autotune"]
    finished = [c for c in run.compiles.values() if c.finished]
    if not finished:
        return NOT_COMPILED_YET if run.live else NO_COMPILE_FINISHED
    if s.device == "cpu" and not s.freezing and (_has_matmul(run) or not run.kernels):
        return CPU_NEEDS_FREEZING
    if all(_from_cache(c) for c in finished):
        return FROM_FX_CACHE
    return NO_TUNABLE_OPS


def autotune(run: Run) -> Autotune:
    ops = [
        TunedOp(
            e,
            [
                Choice(c["name"], c.get("ms"), config_label(c.get("description") or ""))
                for c in e.choices
            ],
        )
        for e in run.autotuned
    ]
    op_times = [op.seconds for op in ops if op.seconds is not None]
    phases = [p for c in run.compiles.values() for p in c.phases if p.name in RUNTIME_TRITON_PHASES]
    runtime = [p.duration_s for p in phases]
    # A kernel tuned both ways counts once: the more frequent phase counts kernels.
    tuned = max((sum(p.name == n for p in phases) for n in RUNTIME_TRITON_PHASES), default=0)
    torch_us = [
        c.record.metrics["compile_time_autotune_time_us"]
        for c in run.compiles.values()
        if c.record and c.record.metrics.get("compile_time_autotune_time_us") is not None
    ]
    return Autotune(
        ops=ops,
        op_seconds=sum(op_times) if op_times else None,
        runtime_triton_s=sum(runtime) if runtime else None,
        runtime_kernels=tuned,
        torch_seconds=sum(torch_us) / 1e6 if torch_us else None,
        why_none=None if ops or runtime else _why_not_autotuned(run),
    )


# --- CUDA graphs -----------------------------------------------------------------------

_SKIP_PREFIX = re.compile(r"^(?:(?:skipping|disabling) cudagraphs? (?:due to|for) )+", re.I)


def skip_reason(message: str) -> str:
    """torch's skip message, short: without "skipping cudagraphs due to" (torch
    repeats it when a cached graph's stored reason is logged again) and without
    the stack trace after "Found from"."""
    full = " ".join((message or "").split())
    head = re.split(r"\s*\.?\s*Found from\b", full, maxsplit=1)[0]
    body = _SKIP_PREFIX.sub("", head).strip().rstrip(":.").strip()
    return body or full


@data(frozen=True)
class GraphStatus:
    event: ev.CudagraphDecided
    reason: str | None  # short (skip_reason)
    recordings: int | None
    rerecordings: int | None
    replays: int | None


@data(frozen=True)
class Cudagraphs:
    verdict: str | None  # "yes" | "no" | "partly (1 of 2 graphs)" | "off" | graphed, then
    # skipped at run time; None: not known
    reason: str | None  # why not, why off, or why not known
    graphs: list[GraphStatus]
    runtime_skips: list[str]  # short reasons of skips torch announced at run time
    skips: int | None  # torch's own counter of skips
    recordings: int | None  # totals, on a GPU
    rerecordings: int | None
    replays: int | None

    @property
    def line(self) -> str:
        return cudagraphed(self.verdict, self.reason)

    @property
    def counted(self) -> bool:
        return self.replays is not None


def cudagraphs(run: Run) -> Cudagraphs:
    s = run.settings
    counts = run.cudagraph_counts
    per = counts.per_compile if counts else {}
    on_gpu = s is not None and s.device == "cuda"

    def count(cid: str | None, key: str) -> int | None:
        return per.get(cid or "?", {}).get(key, 0) if on_gpu and counts else None

    graphs = [
        GraphStatus(
            d,
            None if d.graphed else skip_reason(d.reason or NO_REASON_GIVEN),
            count(d.compile_id, "recordings"),
            count(d.compile_id, "rerecordings"),
            count(d.compile_id, "replays"),
        )
        for d in run.cudagraphs
    ]
    runtime = [skip_reason(x.reason) for x in run.cudagraph_skips]

    def total(key: str) -> int | None:
        return sum(v.get(key, 0) for v in per.values()) if on_gpu and counts else None

    verdict, reason = _cudagraph_verdict(run, graphs, runtime)
    return Cudagraphs(
        verdict,
        reason,
        graphs,
        runtime,
        counts.skips if counts else None,
        total("recordings"),
        total("rerecordings"),
        total("replays"),
    )


def _cudagraph_verdict(
    run: Run, graphs: list[GraphStatus], runtime: list[str]
) -> tuple[str | None, str | None]:
    s = run.settings
    if run.process is not None and not graphs:
        return None, "no compiled graph of the program asked for CUDA graphs"
    if s is None:
        return None, NOT_STARTED
    if s.backend != "inductor":
        return "off", not_inductor(s.backend)
    if s.mode not in CUDAGRAPH_MODES:
        return "off", CUDAGRAPHS_NOT_IN_MODE
    if not graphs:
        if "cudagraphs" in run.unavailable:
            return None, run.unavailable["cudagraphs"]
        return None, NOT_COMPILED_YET if run.live else NO_GRAPH_REPORTED
    skipped = [g for g in graphs if not g.event.graphed]
    why = skipped[0].reason if skipped else (runtime[0] if runtime else None)
    if why and s.device == "cpu":
        why = on_cpu(why)
    if not skipped:
        return ("yes", None) if not runtime else (SKIPPED_AT_RUN_TIME, why)
    if len(skipped) == len(graphs):
        return "no", why
    return partly(len(graphs) - len(skipped), len(graphs), "graph"), why


# --- every mode side by side --------------------------------------------------------------


@data(frozen=True)
class ModeRow:
    run: Run
    mode: str
    compile_s: float | None  # first call minus a steady one (torch's compile sum if no benchmark)
    autotune: Autotune
    speed: fb.Speed | None
    kernels: fk.KernelCount
    cudagraphs: Cudagraphs
    vs_baseline: tuple[float | None, str] | None  # (ratio, verdict) against BASELINE's latency

    def words(self) -> list[str]:
        """The row in COLUMNS order, as every view states it."""
        s, a = self.speed, self.autotune
        why = text.na(fb.why_none(self.run, short=True))
        if self.compile_s is None:
            compile_ = why
        elif self.mode not in AUTOTUNE_MODES:
            compile_ = text.secs(self.compile_s)
        elif a.why_none is not None:
            compile_ = f"{text.secs(self.compile_s)} ({NOTHING_AUTOTUNED})"
        elif a.all_cached:
            compile_ = f"{text.secs(self.compile_s)} (autotune cached)"
        else:
            compile_ = with_autotune(self.compile_s, a.seconds)
        return [
            self.mode,
            compile_,
            f"{text.ms(s.compiled_ms)} {text.spread(s.compiled_spread_ms)}" if s else why,
            fb.speedup_text(s) if s else why,
            fb.break_even_text(s) if s else why,
            vs_baseline(*self.vs_baseline) if self.vs_baseline else "—",
            self.kernels.words,
            self.cudagraphs.line,
        ]


@data(frozen=True)
class ModeTable:
    workload: str
    cache: str
    rows: list[ModeRow]

    @property
    def notes(self) -> list[str]:
        """What the cells leave out: each autotune mode's line, the cache caveat."""
        out = [f"{r.mode}: {r.autotune.line}" for r in self.rows if r.mode in AUTOTUNE_MODES]
        if self.cache == "warm":
            out.append(WARM_CACHE_ORDER)
        return out

    @property
    def title(self) -> str:
        return f"Modes side by side, {self.workload}"

    @property
    def columns(self) -> tuple[str, ...]:
        return COLUMNS


def _group_key(s: ev.RunStarted) -> tuple:
    """What must match for two runs to compare modes: everything but the mode."""
    return (
        s.target,
        s.dynamic,
        s.backend,
        s.device,
        s.dtype,
        s.size,
        s.cache,
        getattr(s, "freezing", False),
        s.threads,
        s.iters,
        s.reps,
        tuple(s.shapes),
        s.sweep,
        s.benchmark,
    )


def eager_drifted(base_ms: float, eager_ms: float) -> str:
    """Why a mode's latency is not set against the default's: eager itself changed."""
    return text.na(
        f"eager took {text.ms(base_ms)} in the {BASELINE} run, {text.ms(eager_ms)} in this "
        "one: the machine changed between the runs"
    )


def _against(speed: fb.Speed | None, base: fb.Speed | None) -> tuple[float | None, str] | None:
    """This mode's compiled latency against the baseline's: (ratio, verdict), or
    (None, why not) when the runs' eager latencies differ beyond their spreads."""
    if speed is None or base is None:
        return None
    if not fb.within_spread(
        speed.eager_ms, base.eager_ms, speed.eager_spread_ms, base.eager_spread_ms
    ):
        return None, eager_drifted(base.eager_ms, speed.eager_ms)
    if fb.within_spread(
        speed.compiled_ms, base.compiled_ms, speed.compiled_spread_ms, base.compiled_spread_ms
    ):
        return None, text.NO_DIFFERENCE
    if speed.compiled_ms < base.compiled_ms:
        return base.compiled_ms / speed.compiled_ms, fb.FASTER
    return speed.compiled_ms / base.compiled_ms, fb.SLOWER


def _row(run: Run, base: Run | None) -> ModeRow:
    speed = fb.run_speed(run)
    finished = any(c.finished for c in run.compiles.values())
    compile_s = speed.compile_s if speed else (run.compile_wall_s if finished else None)
    base_speed = fb.run_speed(base) if base is not None and base is not run else None
    return ModeRow(
        run=run,
        mode=run.settings.mode if run.settings else text.NA,
        compile_s=compile_s,
        autotune=autotune(run),
        speed=speed,
        kernels=fk.kernel_count(run),
        cudagraphs=cudagraphs(run),
        vs_baseline=_against(speed, base_speed),
    )


def mode_tables(session: Session) -> list[ModeTable]:
    """One table per workload and settings run in two or more modes (the latest
    run of each mode), in MODES order."""
    groups: dict[tuple, dict[str, Run]] = {}
    for r in session.runs.values():
        if r.settings is not None:
            groups.setdefault(_group_key(r.settings), {})[r.settings.mode] = r
    tables = []
    for by_mode in groups.values():
        if len(by_mode) < 2:
            continue
        runs = [by_mode[m] for m in MODES if m in by_mode]
        base = by_mode.get(BASELINE)
        first = runs[0]
        cache = first.settings.cache if first.settings else text.NA
        tables.append(ModeTable(first.name, cache, [_row(r, base) for r in runs]))
    return tables


def mode_table(session: Session, run: Run | None) -> ModeTable | None:
    """The table ``run`` is in (None if it is in none); with no run, the newest."""
    tables = mode_tables(session)
    if run is None:
        return tables[-1] if tables else None
    return next((t for t in tables if any(row.run is run for row in t.rows)), None)


# --- the words of the modes (the units are text's) -----------------------------


MODE_MEANINGS: dict[str, str] = {
    "default": "fused kernels; no autotuning, no CUDA graphs",
    "reduce-overhead": "default plus CUDA graphs: each graph replays as one launch on a GPU, "
    "cutting Python and launch overhead",
    "max-autotune": "benchmarks implementations of each matmul and convolution (Triton "
    "configs on a GPU, C++ GEMM templates on the CPU with freezing), plus CUDA graphs",
    "max-autotune-no-cudagraphs": "max-autotune without CUDA graphs",
}
NOTHING_AUTOTUNED = "nothing autotuned"
CUDAGRAPHS_NOT_IN_MODE = "not used by this mode"
CPU_NEEDS_FREEZING = (
    "on the CPU Inductor's C++ GEMM template needs constant weights: without --freezing "
    "each matmul had one choice (aten) and nothing was benchmarked"
)
NO_TUNABLE_OPS = "no matmul or convolution with more than one implementation in this graph"
FROM_FX_CACHE = (
    "the graph came from Inductor's FX graph cache: it was autotuned when first compiled "
    "(--cache cold measures it)"
)
AUTOTUNE_CACHED = (
    "timings from Inductor's autotune cache: nothing benchmarked (--cache cold measures it)"
)
WARM_CACHE_ORDER = (
    "warm cache: a mode may reuse kernels an earlier one built; --cache cold gives each "
    "mode a fresh cache"
)
NOT_STARTED = "the run has not started"
NOT_COMPILED_YET = "not compiled yet"
NO_COMPILE_FINISHED = "no compile finished"
NO_GRAPH_REPORTED = "no compiled graph reported"
NO_REASON_GIVEN = "no reason given"
SKIPPED_AT_RUN_TIME = "graphed, then skipped at run time"


def not_inductor(backend: str) -> str:
    return f"backend {backend} does not run Inductor"


def on_cpu(torch_reason: str) -> str:
    """A CUDA-graph skip on the CPU, where torch's own words mislead."""
    return f"the graph runs on the CPU (torch: {torch_reason})"


def partly(done: int, of: int, what: str) -> str:
    return f"partly ({done} of {text.plural(of, what)})"


def autotuned(ops: int, seconds: float | None, kernels: int, kernels_s: float | None) -> str:
    """ "2 ops autotuned in 8.24 s", with Triton kernels tuned at their first call."""
    out = f"{text.plural(ops, 'op')} autotuned in {text.secs(seconds)}"
    if kernels:
        first = text.plural(kernels, "Triton kernel")
        out += f" (of which {first} at their first call: {text.secs(kernels_s)})"
    return out


def autotune_cached(ops: int) -> str:
    return f"{text.plural(ops, 'op')}: {AUTOTUNE_CACHED}"


def nothing_autotuned(why: str) -> str:
    """ "nothing autotuned: <why>", the one line for an empty autotune table."""
    return f"{NOTHING_AUTOTUNED}: {why}"


def mode_does_not(mode: str, what: str) -> str:
    """ "mode default does not autotune"."""
    return f"mode {mode} does not {what}"


def with_autotune(compile_s: float | None, autotune_s: float | None) -> str:
    """Compile seconds and the autotune share of them: "7.71 s (autotune 7.66 s)"."""
    if autotune_s is None:
        return text.secs(compile_s)
    return f"{text.secs(compile_s)} (autotune {text.secs(autotune_s)})"


def choices_line(n: int, winner: str | None, winner_ms: float | None) -> str:
    """ "2 choices, fastest cpp_CppMicroGemmFP32Vec_0 14.7 µs"."""
    out = text.plural(n, "choice")
    return f"{out}, fastest {winner} {text.ms(winner_ms)}" if winner else out


def cudagraphed(verdict: str | None, reason: str | None = None) -> str:
    """ "yes", "no: cpu device (arg0_1)", "partly (1 of 2 graphs): ...", "off (why)"."""
    if verdict is None:
        return text.na(reason)
    if verdict == "off":
        return f"off ({reason})" if reason else "off"
    if verdict == "yes" or not reason:
        return verdict
    return f"{verdict}: {reason}"


def vs_baseline(ratio: float | None, verdict: str) -> str:
    """A mode's steady latency against the default mode's: "1.12x faster"."""
    if ratio is None:  # no difference, or why there is no ratio
        return verdict
    return f"{ratio:.2f}x {verdict}"
