"""One vocabulary of units and words for every view: TUI, console and reports.

A figure is computed in ``dlcprof.figures`` and worded here, so the same
compile reads ``1.93 s`` on screen, in a log and in HTML, and break-even is
counted in "runs" everywhere. A value that is not known is never guessed: it
reads ``n/a`` with the reason beside it. Pure standard library, at the bottom
of the import graph.
"""

from __future__ import annotations

import math
from typing import Any

NA = "n/a"
# Eager and compiled differ by less than their measured spread.
NO_DIFFERENCE = "no measurable difference"
NEVER = "never (compiled is slower)"
NOT_FINISHED = "not finished"
# A kernel whose nodes carried no Python stack (e.g. RNG seeds Inductor adds).
NO_SOURCE_LINES = "Inductor recorded no stack trace for it"
# Repetitions in two clusters, compiled faster in one pairing and slower in the other.
MIXED = "faster or slower, by cluster"
TWO_CLUSTERS = "repetitions in two clusters"


# A sampled thread blocked on another process: the hot-frame row in its place.
WAITING_COMPILER = "waiting on the C++ compiler"
WAITING_WORKERS = "waiting on compile workers"
WAITING_PROCESS = "waiting on a subprocess"


def na(why: str | None = None) -> str:
    return f"{NA} ({why})" if why else NA


def secs(x: float | None, why: str | None = None) -> str:
    """Seconds with a unit that fits: 840 µs, 12 ms, 1.93 s, 2 min 05 s."""
    if x is None or not math.isfinite(x):
        return na(why)
    if x < 0:
        return f"-{secs(-x)}"
    if x < 1e-3:
        return f"{x * 1e6:.0f} µs"
    if x < 1:
        return f"{x * 1e3:.0f} ms"
    if x < 99.995:
        return f"{x:.2f} s"
    m, s = divmod(round(x), 60)
    if m < 60:
        return f"{int(m)} min {s:02.0f} s"
    h, m = divmod(m, 60)
    return f"{int(h)} h {int(m):02d} min"


def ms(x: float | None, why: str | None = None) -> str:
    """Milliseconds with three significant digits: 123 ms, 12.3 ms, 1.23 ms, 12.3 µs."""
    if x is None or not math.isfinite(x):
        return na(why)
    if x < 0:
        return f"-{ms(-x)}"
    if x >= 99.95:
        return f"{x:.0f} ms"
    if x >= 9.995:
        return f"{x:.1f} ms"
    if x >= 0.1:
        return f"{x:.2f} ms"
    return f"{x * 1000:.1f} µs"


def signed_secs(x: float | None) -> str:
    if x is None:
        return NA
    return ("+" if x > 0 else "") + secs(x)


def signed_ms(x: float | None) -> str:
    if x is None:
        return NA
    return ("+" if x > 0 else "") + ms(x)


def pct(x: float | None, why: str | None = None) -> str:
    """A fraction as a percentage: 0.123 -> 12%; under half a percent, <1%."""
    if x is None or not math.isfinite(x):
        return na(why)
    if 0 < x and round(x * 100) == 0:  # 0.005 rounds to even: "0%" would read as none
        return "<1%"
    return f"{x * 100:.0f}%"


def signed_pct(x: float | None) -> str:
    if x is None:
        return NA
    return f"{x * 100:+.0f}%"


def speedup(x: float | None, why: str | None = None) -> str:
    return na(why) if x is None or not math.isfinite(x) else f"{x:.2f}x"


def count(x: float | None) -> str:
    """Large counts made readable: 16,400 / 1.2 M."""
    if x is None or not math.isfinite(x):
        return NA
    if x >= 1e6:
        return f"{x / 1e6:.1f} M"
    return f"{x:,.0f}"


def runs(x: float) -> str:
    """Break-even, in the one word used everywhere: "1,234 runs"."""
    n = max(x, 1.0)
    return f"{count(n)} run" + ("" if round(n) == 1 else "s")


def break_even(x: float | None, measurable: bool = True) -> str:
    """Break-even runs; none when compiled is slower or no faster than the spread."""
    if not measurable:
        return na(NO_DIFFERENCE)
    return NEVER if x is None else runs(x)


def speedup_verdict(x: float | None, measurable: bool = True) -> str:
    """"2.91x", or "1.00x (no measurable difference)"."""
    return speedup(x) if measurable else f"{speedup(x)} ({NO_DIFFERENCE})"


ROUGH = "rough: a median of single calls, no spread"


def latency(x: float, spread_ms: float | None) -> str:
    """A sweep step's steady latency: with its spread, or marked rough ("~")
    when a report measured none (the note ROUGH says what "~" means)."""
    return f"{ms(x)} {spread(spread_ms)}" if spread_ms is not None else f"~{ms(x)}"


def split_speedups(xs: list[float | None]) -> str:
    """"1.79x or 4.82x (repetitions in two clusters)": never a median of a mix."""
    return f"{either([speedup(x) for x in xs])} ({TWO_CLUSTERS})"


def either(words: list[str]) -> str:
    """Two figures that are both true, one per cluster: "186 runs or 610 runs"."""
    return " or ".join(dict.fromkeys(words))


def faults(x: float | None) -> str:
    """Page faults per call: "2,433"; a few stray ones, "<1"."""
    if x is None or not math.isfinite(x):
        return NA
    return "<1" if 0 < x < 1 else count(x)


def faults_pair(eager: float | None, compiled: float | None) -> str:
    """Page faults per call of both sides: "2,433 eager · 0 compiled"."""
    if eager is None and compiled is None:
        return na("not counted")
    return f"{faults(eager)} eager · {faults(compiled)} compiled"


def faults_pair_narrow(eager: float | None, compiled: float | None) -> str:
    """The same in a narrow cell: "2,433 · <1" (eager · compiled)."""
    if eager is None and compiled is None:
        return NA
    return f"{faults(eager)} · {faults(compiled)}"


def split_note(
    side: str,
    n_fast: int,
    fast_ms: float,
    n_slow: int,
    slow_ms: float,
    balanced: bool,
    faults_by: tuple[float, float] | None,
    allocator: bool | None,
) -> str:
    """Repetitions in two clusters: how many near what, whose figures are stated,
    and what the page faults say of the cause."""
    stated = "so both are stated" if balanced else "the median is the larger cluster's"
    near = f"{n_fast} near {ms(fast_ms)}, {n_slow} near {ms(slow_ms)}"
    out = f"{side} {TWO_CLUSTERS}: {near}, {stated}"
    if faults_by is not None:
        f_fast, f_slow = faults_by
        pf = f"page faults per call {faults(f_fast)} vs {faults(f_slow)}"
        out += f"; {pf}: " + (
            "the allocator" if allocator else "not the allocator (background load?)"
        )
    return out


# The two speedups of a CPU benchmark (figures/allocator.py), named alike everywhere.
DEFAULT_ALLOC = "default allocator"
STEADY_ALLOC = "allocator held steady"
ALLOC_SENSITIVE = "allocator-sensitive"
ALLOC_NOT_SENSITIVE = "not allocator-sensitive"
ALLOC_NOT_THE_ALLOCATOR = "the speedups differ, but not by the allocator"


def headline(allocator: str) -> str:
    """Which speedup is the headline, and why."""
    if not allocator:
        return "headline: as measured (this recording does not say which allocator)"
    if allocator.endswith("default thresholds"):
        return (
            f"headline: the speedup your process would see with glibc's default allocator "
            f"({allocator})"
        )
    return f"headline: the speedup with {allocator}, as the worker's process ran"


def allocator_verdict(
    verdict: str, default: str, steady: str, faults_d: float | None, faults_s: float | None
) -> str:
    """The default and the steady-allocator speedup, and what tells them apart."""
    both = f"{default} with the {DEFAULT_ALLOC}, {steady} with the {STEADY_ALLOC}"
    pf = f"eager page faults per call {faults(faults_d)} vs {faults(faults_s)}"
    if verdict == ALLOC_SENSITIVE:
        return (
            f"{ALLOC_SENSITIVE}: {both}, further apart than the measured spread ({pf}): "
            "part of the default speedup is the allocations fusion saves, which a process "
            "with a steady allocator never pays"
        )
    if verdict == ALLOC_NOT_THE_ALLOCATOR:
        return (
            f"{ALLOC_NOT_THE_ALLOCATOR}: {both}, yet {pf}: background load between the two "
            "measurements?"
        )
    return f"{ALLOC_NOT_SENSITIVE}: {both}, within the measured spread"


def sweep_verdict(
    static_s: float | None,
    dynamic_s: float | None,
    reduction: float | None,
    steady: tuple[int, float, float] | None,
    steady_differs: bool | None = None,
) -> str:
    """Static vs dynamic shapes in one sentence (the paper's finding 3).
    ``steady_differs``: whether the steady latencies differ by more than their
    spread (None: no spread was measured)."""
    out = f"cumulative transition cost: static {secs(static_s)} vs dynamic {secs(dynamic_s)}"
    if reduction is None:
        out += ": ratio n/a (static cost 0 s)"
    elif reduction >= 0:
        out += f": dynamic shapes cut it by {pct(reduction)}"
    else:
        out += f": dynamic shapes cost {pct(-reduction)} more"
    if steady is not None:
        size, s_ms, d_ms = steady
        ratio = f" ({d_ms / s_ms:.2f}x)" if s_ms > 0 else ""
        if steady_differs is False:
            ratio = f": {NO_DIFFERENCE}"
        elif steady_differs is None:
            ratio = ratio[:-1] + f"; {ROUGH})" if ratio else f" ({ROUGH})"
        out += f"; steady latency at size {size}: {ms(s_ms)} static vs {ms(d_ms)} dynamic{ratio}"
    return out


def cache_state(state: str | None, hits: int = 0, graphs: int = 0) -> str:
    """Inductor's graph cache beside a compile time: "cache hit", "cache miss",
    "cache hit for 1 of 3 graphs", "graph cache off", "cache state n/a"."""
    if state == "partial":
        return f"cache hit for {hits} of {plural(graphs, 'graph')}"
    return {
        "hit": "cache hit",
        "miss": "cache miss",
        "off": "graph cache off",
    }.get(state or "", f"cache state {NA}")


def cache_differs(a: str, b: str) -> str:
    """Why two compile times or break-evens are not like for like."""
    return (
        f"The two sides' caches differ (A: {a}; B: {b}): a cache hit loads a compiled "
        "graph instead of compiling it, so compile times and break-even are not like for like."
    )


def symbolic_scalars(names: list[str], limit: int = 6) -> str:
    """Unspecialized Python scalars, apart from the dims: "2 scalars made symbols
    (not dims): self.norm.eps, math.pi"."""
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f", … (+{len(names) - limit} more)"
    return f"{plural(len(names), 'scalar')} made symbols (not dims): {shown}"


def restarts(count: int, cost_s: float, reasons: list[str]) -> str:
    """"1 restart threw away 2.89 s (TensorifyScalarRestartAnalysis)"."""
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return f"{plural(count, 'restart')} threw away {secs(cost_s)}{why}"


def short_path(path: str) -> str:
    """An installed package's file from its package on: ".../site-packages/torch/optim/x.py:79"
    -> "torch/optim/x.py:79"."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.rsplit(marker, 1)[1]
    return path


def broke_inside(detail: str) -> str:
    """Where Dynamo broke, beside the user's line that led there."""
    return f"(broke inside {short_path(detail)})" if detail else ""


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


class Footnotes:
    """ "n/a" in a narrow table cell, with its reason once below the table:
    ``cell(None, why)`` -> "n/a¹"; ``lines()`` -> ["¹ why", ...]."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def mark(self, why: str | None) -> str:
        if not why:
            return ""
        if why not in self.reasons:
            self.reasons.append(why)
        return str(self.reasons.index(why) + 1).translate(_SUPERSCRIPT)

    def cell(self, words: str | None, why: str | None) -> str:
        return words if words is not None else NA + self.mark(why)

    def lines(self) -> list[str]:
        return [f"{str(i).translate(_SUPERSCRIPT)} {NA}: {why}"
                for i, why in enumerate(self.reasons, 1)]  # fmt: skip


def gbps(x: float | None, why: str | None = None) -> str:
    """A bandwidth: 9.22 GB/s, 123 GB/s, 2.1 TB/s."""
    if x is None or not math.isfinite(x):
        return na(why)
    if x >= 999.5:
        return f"{x / 1000:.1f} TB/s"
    return f"{x:.3g} GB/s"


def nbytes(x: float | None, why: str | None = None) -> str:
    """A size in decimal units: 512 B, 8.19 KB, 4.19 MB, 1.07 GB."""
    if x is None or not math.isfinite(x):
        return na(why)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.0f} B"


def kernel_coverage(kernel_ms: float | None, compiled_ms: float | None,
                    coverage: float | None, device_busy: float | None = None) -> str:  # fmt: skip
    """How much of the compiled call the kernels explain; the rest is the wrapper's own work."""
    if kernel_ms is None:
        return f"kernels {NA} (no kernel was timed)"
    out = f"kernels {ms(kernel_ms)}"
    if coverage is None:
        return out
    out += f" = {pct(coverage)} of the compiled call ({ms(compiled_ms)}, timed alongside)"
    if device_busy is not None:
        return out + f"; device busy {pct(device_busy)} of the call"
    return out + "; the rest is Python, guards, allocation and launches"


def eager_coverage(nodes_ms: float | None, eager_ms: float | None, coverage: float | None,
                   why: str | None, in_kernels_ms: float | None = None) -> str:  # fmt: skip
    """The user's ops run one by one, against the eager call they come from, and
    how much of them the kernels fused."""
    if nodes_ms is None:
        return f"eager ops {na(why)}"
    out = f"eager ops one by one {ms(nodes_ms)}"
    if coverage is not None:
        out += f" = {pct(coverage)} of the eager call ({ms(eager_ms)}, timed alongside)"
    if in_kernels_ms is not None:
        out += f"; the kernels fused {ms(in_kernels_ms)} of them"
    return out


def copy_bandwidth(x: float | None, why: str | None) -> str:
    return f"copy bandwidth {gbps(x, why)} (a 256 MiB tensor copy, same device and threads)"


def profiled(wall_s: float, calls: int, method: str) -> str:
    return f"profiled after the benchmark in {secs(wall_s)}: {calls} calls, {method}"


def spread(x: float | None) -> str:
    """A measured spread (interquartile range) beside its median."""
    return f"± {ms(x)}" if x is not None else ""


def ms_spread(x: float, spread_ms: float | None, narrow: bool = False) -> str:
    """A median with its spread: "12.3 ms ± 0.41 ms"; narrow, "12.3 ms ±0.41"."""
    if not narrow or spread_ms is None:
        return f"{ms(x)} {spread(spread_ms)}".rstrip()
    median, s = ms(x), ms(spread_ms)
    unit = median.rsplit(" ", 1)[-1]
    return f"{median} ±{s.removesuffix(' ' + unit)}"


def value(x: Any) -> str:
    """Any setting or metric value as short text."""
    if x is None:
        return NA
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, (list, tuple)):
        return ", ".join(value(v) for v in x) if x else "—"
    return str(x)


def short(text: str | None, limit: int = 140) -> str:
    """One line, cut to ``limit`` characters with an ellipsis."""
    if not text:
        return ""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


def eager_calls(n: int | None) -> str:
    """What a recompile limit hit cost: the calls that then ran eager, uncompiled."""
    if n is None:
        return na("not counted")
    return f"{plural(n, 'call')} then ran eager"


def data_size(n: float) -> str:
    """Bytes (or characters) as people read them: 812 B, 64 kB, 5.2 MB."""
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}" if n < 10 * scale else f"{n / scale:,.0f} {unit}"
    return f"{n:.0f} B"


# --- device metrics: the monitors' keys carry their unit as a suffix ---------------

_UNITS = (("_pct", "%"), ("_mb", "MB"), ("_w", "W"), ("_c", "°C"), ("_mhz", "MHz"))


# Device metrics in display order, with the name people know them by.
METRIC_LABELS: dict[str, str] = {
    "gpu_util_pct": "GPU util",
    "proc_util_pct": "worker GPU util",
    "mem_util_pct": "GPU mem busy",
    "mem_used_mb": "GPU memory",
    "proc_mem_mb": "worker GPU mem",
    "power_w": "GPU power",
    "temp_c": "GPU temp",
    "sm_clock_mhz": "SM clock",
    "worker_cpu_pct": "worker CPU",
    "worker_rss_mb": "worker RSS",
    "cxx_compilers": "compilers running",
    "children_cpu_pct": "compilers CPU",
    "system_cpu_pct": "system CPU",
}


def metric_label(key: str) -> str:
    return METRIC_LABELS.get(key, key)


def metric_unit(key: str) -> str:
    return next((u for suffix, u in _UNITS if key.endswith(suffix)), "")


def metric(key: str, v: float | None) -> str:
    """A device metric with its unit: 42%, 1.25 GB, 310 W, 61 °C."""
    if v is None or not math.isfinite(v):
        return NA
    unit = metric_unit(key)
    if unit == "%":
        return f"{v:.0f}%"
    if unit == "MB":
        return f"{v / 1024:.2f} GB" if v >= 10240 else f"{v:.0f} MB"
    if unit:
        return f"{v:.0f} {unit}"
    return f"{v:.3g}"


def load_avg(values: list[float] | None) -> str:
    return " ".join(f"{x:.2f}" for x in values) if values else NA


# --- modes: what each one does, what it autotuned, whether it used CUDA graphs ----------

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
NOT_MEASURED_YET = "not measured yet"
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
    return f"partly ({done} of {plural(of, what)})"


def autotuned(ops: int, seconds: float | None, kernels: int, kernels_s: float | None) -> str:
    """"2 ops autotuned in 8.24 s", with Triton kernels tuned at their first call."""
    out = f"{plural(ops, 'op')} autotuned in {secs(seconds)}"
    if kernels:
        first = plural(kernels, "Triton kernel")
        out += f" (of which {first} at their first call: {secs(kernels_s)})"
    return out


def autotune_cached(ops: int) -> str:
    return f"{plural(ops, 'op')}: {AUTOTUNE_CACHED}"


def modes_need_inductor(backend: str) -> str:
    """Why every mode side by side cannot run with another backend."""
    return (f"every mode side by side compares Inductor's modes: backend {backend} has none "
            "(pick backend inductor)")  # fmt: skip


def nothing_autotuned(why: str) -> str:
    """"nothing autotuned: <why>", the one line for an empty autotune table."""
    return f"{NOTHING_AUTOTUNED}: {why}"


def mode_does_not(mode: str, what: str) -> str:
    """"mode default does not autotune"."""
    return f"mode {mode} does not {what}"


def cpu_mode_note(mode: str, cudagraphs: bool, autotune: bool, freezing: bool) -> str | None:
    """What a mode does on the CPU, for the run's log; None for plain default."""
    parts = []
    if cudagraphs:
        parts.append("CUDA graphs are GPU-only, so Inductor skips them (the reason is shown)")
    if autotune and not freezing:
        parts.append("CPU matmuls are autotuned only with --freezing")
    if autotune and freezing:
        parts.append("each matmul's C++ GEMM template is benchmarked against MKL/aten")
    return f"mode {mode} on the CPU: " + "; ".join(parts) if parts else None


def with_autotune(compile_s: float | None, autotune_s: float | None) -> str:
    """Compile seconds and the autotune share of them: "7.71 s (autotune 7.66 s)"."""
    if autotune_s is None:
        return secs(compile_s)
    return f"{secs(compile_s)} (autotune {secs(autotune_s)})"


def choices_line(n: int, winner: str | None, winner_ms: float | None) -> str:
    """"2 choices, fastest cpp_CppMicroGemmFP32Vec_0 14.7 µs"."""
    out = plural(n, "choice")
    return f"{out}, fastest {winner} {ms(winner_ms)}" if winner else out


def cudagraphed(verdict: str | None, reason: str | None = None) -> str:
    """"yes", "no: cpu device (arg0_1)", "partly (1 of 2 graphs): ...", "off (why)"."""
    if verdict is None:
        return na(reason)
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


def samples(n: int) -> str:
    return f"{count(n)} sample" + ("" if n == 1 else "s")


def hot_scope(thread: str | None, n: int) -> str:
    """What a hot-frame table covers and what its shares are of."""
    if thread is None:
        return f"every thread, {count(n)} sampling ticks; shares of each thread's samples"
    return f"the compiling thread ({thread}), {samples(n)}"


def other_threads(by_thread: dict[str, int]) -> str:
    """The threads a hot-frame table leaves out, with their samples."""
    return "not shown: " + ", ".join(f"{t} ({samples(n)})" for t, n in by_thread.items())


# --- the observer: what watched a run (figures/observer.py) -------------------------


def share_of_core(x: float | None) -> str:
    """A monitor's own CPU as a percentage of one core: "7.2%", "0.4%", "12%"; before
    its first measurement "n/a (not measured yet)"."""
    if x is None or not math.isfinite(x):
        return na(NOT_MEASURED_YET)
    return f"{x * 100:.1f}%" if x < 0.1 else pct(x)


def core_share(x: float | None) -> str:
    """CPU used, as a share of one core: "7.2% of a core"."""
    return share_of_core(x) if x is None else f"{share_of_core(x)} of a core"


def watcher(name: str, how: str, share: float | None) -> str:
    return f"{name} {how} ({core_share(share)})"


def observer_timing(
    quiet: bool | None, timing_now: bool, swept: bool = False, timed: list[str] | None = None
) -> str:
    """What the monitors did while the repetitions were timed (``timed``: what was,
    e.g. ["benchmark", "kernel profile"]; the benchmark when not said)."""
    what = " and ".join(f"the {w}" for w in timed) if timed else "the benchmark"
    verb = "were" if timed and len(timed) > 1 else "was"
    if timing_now:
        parts = ["monitors paused: timing now"]
    elif quiet is None:
        parts = [] if swept else ["the monitors pause while the benchmark is timed"]
    elif quiet:
        parts = [f"the monitors were paused while {what} {verb} timed"]
    else:
        parts = [f"the monitors RAN while {what} {verb} timed: its latencies include their cost"]
    if swept:
        parts.append("the monitors ran through the shape sweep, its latencies included")
    return "; ".join(parts)


def observer(probes: list[str], watchers: list[str], timing: str | None) -> str:
    """One line for every report: "observer: worker probes (...), py-spy ...; the
    monitors were paused while ..."; ``timing`` None when no monitor ran."""
    parts = [f"worker probes ({', '.join(probes)})"] if probes else []
    if timing is None:
        return f"observer: {', '.join(parts) or 'nothing'} only"
    return f"observer: {', '.join([*parts, *watchers])}; {timing}"


def observer_short(
    watchers: list[tuple[str, float | None]], quiet: bool | None, timing_now: bool
) -> str:
    """The status bar's form: "py-spy 7.2% · device sampler 0.4% of a core, paused while timing"."""
    costs = " · ".join(f"{name} {share_of_core(x)}" for name, x in watchers)
    if timing_now:
        when = "paused now: timing"
    elif quiet is False:
        when = "RAN while timing"
    else:
        when = "paused while timing"
    return f"observer: {costs} of a core, {when}"


# --- the paper: arXiv 2611.04273 (TorchInductor on an RTX A6000) -------------------

PAPER = "arXiv 2611.04273"
PAPER_MACHINE = "TorchInductor on an RTX A6000"
# What kind of graph a workload is, judged from the kernels it compiled (figures/paper.py).
FUSION_FRIENDLY, GEMM_BOUND, OVERHEAD_BOUND = "fusion-friendly", "GEMM-bound", "overhead-bound"
# The findings, as the tables name them, and the paper's figure for each.
FINDING_BEST = "1. fusion: the best speedup"
FINDING_LITTLE = "1. fusion: gained little"
FINDING_BREAK_EVEN = "2. compile cost: break-even, warm cache"
FINDING_FRESH = "2. compile cost: break-even, fresh cache"
FINDING_TRANSITIONS = "3. dynamic shapes: shape-transition cost"
FINDING_STEADY = "3. dynamic shapes: steady-state latency"
PAPER_BEST = "up to 8.21x (fusion-friendly graphs)"
PAPER_LITTLE = f"little ({GEMM_BOUND} and {OVERHEAD_BOUND} graphs)"
PAPER_BREAK_EVEN = "thousands of runs"
PAPER_TRANSITIONS = "about −70% (dynamic vs static)"
PAPER_STEADY = "a modest slowdown"
PAPER_TITLE = f"The findings of {PAPER}, measured here"
PAPER_WORKLOADS = "Per workload"
PAPER_COLUMNS = ("finding", f"paper ({PAPER_MACHINE})", "measured here")
WORKLOAD_COLUMNS = (
    "workload", "graph", "eager → compiled", "speedup", "steady alloc.", "compile (warm)",
    "compile (fresh)", "break-even (warm)", "break-even (fresh)", "fusion gain",
)  # fmt: skip
NONE_FASTER = "no workload was measurably faster compiled"


def change(x: float | None) -> str:
    """A relative change with its sign, as the paper writes it: "−85%", "+12%"."""
    if x is None or not math.isfinite(x):
        return NA
    return f"{'−' if x < 0 else '+'}{abs(x) * 100:.0f}%"


def overhead_evidence(ops: int, us_per_op: float, threshold_us: float) -> str:
    """Why a workload is overhead-bound: each eager op takes microseconds."""
    return (
        f"{plural(ops, 'graph op')} at {us_per_op:.1f} µs of eager time each (under "
        f"{threshold_us:.0f} µs): dispatching an op costs about as much as its arithmetic"
    )


def library_evidence(n: int, total: int, names: list[str], time_share: float | None) -> str:
    """Why a workload is GEMM-bound: library kernels (GEMMs, convolutions) hold its time."""
    what = ", ".join(names)
    if time_share is not None:
        return f"library kernels ({what}) take {pct(time_share)} of the kernel time"
    return (
        f"library calls ({what}) are {n} of {plural(total, 'kernel')}: compiling leaves "
        "them as they are"
    )


def fusion_evidence(ops: int, kernels: int, library: int) -> str:
    """What Inductor made of a fusion-friendly workload's graph."""
    out = f"{plural(ops, 'graph op')} compiled into {plural(kernels, 'fused kernel')}"
    return out + (f" and {plural(library, 'library call')}" if library else "")


def kernels_count(names: list[str]) -> list[str]:
    """"addmm ×24": kernels by name, the most frequent first."""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    return [f"{n} ×{c}" if c > 1 else n for n, c in ordered]


def best_speedup(name: str, default: str, steady: str) -> str:
    """"pointwise-epilogue: 19.84x; 8.81x with the allocator held steady"."""
    return f"{name}: {default}; {steady} with the {STEADY_ALLOC}"


def gained_little(name: str, speedup_words: str, kind: str | None) -> str:
    """"gelu-mlp 0.97x (no measurable difference): GEMM-bound"."""
    return f"{name} {speedup_words}" + (f": {kind}" if kind else "")


def none_little(little: float) -> str:
    return f"none: every workload gained {speedup(little)} or more"


def break_even_span(low: float, median: float, high: float, slower: int, n: int) -> str:
    """The break-evens of several workloads: "487 to 14,601 runs (median 1,200)"."""
    if round(low) == round(high):
        out = runs(low)
    else:
        out = f"{count(low)} to {runs(high)} (median {count(median)})"
    return out + (f"; {slower} of {n} never pay back (compiled is slower)" if slower else "")


def fresh_compile(name: str, fresh: str, warm: str, break_even_words: str) -> str:
    """One workload compiled on a fresh cache and on the warm one."""
    return f"{break_even_words}: {name} compiled in {fresh} on a fresh cache, {warm} warm"


def transitions_change(
    change_words: str, static_s: float | None, dynamic_s: float | None, sizes: int, workload: str
) -> str:
    """"−85%: static 10.3 s vs dynamic 1.52 s over 4 sizes of variable-length"."""
    return (
        f"{change_words}: static {secs(static_s)} vs dynamic {secs(dynamic_s)} over "
        f"{plural(sizes, 'size')} of {workload}"
    )


def steady_cost(ratio_words: str, size: int, differs: bool | None) -> str:
    """Dynamic's steady-state latency against static's, at one size."""
    out = f"{ratio_words} static's latency at size {size}"
    if differs is False:
        return f"{out}: {NO_DIFFERENCE}"
    if differs is None:
        return f"{out} ({ROUGH})"
    return out


def paper_plan(runs: int, workloads: list[str], fresh: list[str], sweep: str,
               sizes: list[int]) -> str:  # fmt: skip
    """What ``dlcprof paper`` is about to do, in one line."""
    swept = f"over {', '.join(map(str, sizes))}" if sizes else "over its SIZES"
    return (
        f"Reproducing {PAPER} ({PAPER_MACHINE}) here: {plural(runs, 'run')}: "
        f"{', '.join(workloads)} benchmarked on the warm cache; {', '.join(fresh)} compiled "
        f"again on a fresh cache; {sweep} swept {swept}, static then dynamic"
    )


def paper_step(role: str, name: str, dynamic: str, sizes: int | None) -> str:
    """What one paper run does."""
    if role == "sweep":
        what = plural(sizes, "size") if sizes else "its sizes"
        return f"{name}: shape sweep over {what}, dynamic={dynamic}, fresh cache"
    if role == "fresh":
        return f"{name}: compile on a fresh cache"
    return f"{name}: compile on the warm cache, then eager vs compiled"


def benchmark_outcome(name: str, default: str, steady: str, compile_words: str) -> str:
    return f"{name}: {default}; {steady} with the {STEADY_ALLOC}; compile {compile_words}"


def fresh_outcome(name: str, compile_words: str) -> str:
    return f"{name}: compiled in {compile_words} on a fresh cache"


def sweep_outcome(name: str, dynamic: str, compiles: int, total_s: float | None) -> str:
    return (
        f"{name}, dynamic={dynamic}: {plural(compiles, 'compile')}, {secs(total_s)} of "
        "shape transitions"
    )


def measured_on(device: str, device_name: str, threads: int, torch_version: str) -> str:
    """Where the paper's findings were measured this time, beside where the paper did."""
    return (
        f"measured on {device} ({device_name}), {plural(threads, 'thread')}, torch "
        f"{torch_version}; the paper measured {PAPER_MACHINE}"
    )


_AGAIN = " · r runs the quick set again"


def paper_none(replay: bool) -> str:
    if replay:
        return f"no paper run in this recording (dlcprof paper reproduces {PAPER})"
    return f"no paper run in this session: r runs the quick set of {PAPER}"


def paper_done(done: int, planned: int, replay: bool = False) -> str:
    return f"done: {done} of {plural(planned, 'run')}" + ("" if replay else _AGAIN)


def paper_stopped(done: int, planned: int, name: str, status: str, replay: bool = False) -> str:
    return (
        f"{done} of {plural(planned, 'run')} ran; {name} ended ({status}): the rows it "
        "leaves read n/a" + ("" if replay else _AGAIN)
    )


def sweep_ended(dynamic: str, status: str) -> str:
    return f"the dynamic={dynamic} sweep ended ({status}) before it finished"
