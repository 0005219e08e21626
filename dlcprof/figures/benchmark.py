"""Eager vs compiled: speedup, break-even, and whether the difference is real.

A difference smaller than the measured spread is not a result: the verdict
is then "no measurable difference" and there is no break-even number (a
ResNet at 1.000x once reported 69,717,904 runs from noise).
"""

from __future__ import annotations

import dataclasses
import statistics
from collections.abc import Sequence

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import runs as fruns
from dlcprof.figures.cache import HEADER_BUILT
from dlcprof.figures.outcome import NO_SPEEDUP, NOTHING_COMPILED
from dlcprof.session import Run
from dlcprof.stats import median_iqr

FASTER, SLOWER, SAME = "faster", "slower", text.NO_DIFFERENCE
# Repetitions in two clusters, compiled faster in one pairing and slower in another.
MIXED = "faster or slower, by cluster"

# Two clusters of repetitions are real when the gap between them is wider than
# either cluster and at least SPLIT_MIN_GAP of the faster one's median (a quiet
# machine's repetitions scatter by a few percent); each holds SPLIT_MIN_REPS or
# more, since one slow repetition is an outlier that the median already ignores.
SPLIT_MIN_GAP = 0.15
SPLIT_MIN_REPS = 2
# When the smaller cluster holds at least this share of the repetitions, the
# median sits at a cluster's edge or between them, and may land in either on a
# rerun: both clusters' figures are stated instead. A smaller one (two stalled
# repetitions of seven) leaves the median to the larger cluster, with a note.
SPLIT_BALANCED = 1 / 3
# The benchmark times eager and compiled back to back in each repetition, so a
# repetition's index says when both ran. Both sides' clusters are the same
# phases (a load that came and went) when at least this share of repetitions
# fall in the like clusters of both sides: fast with fast, slow with slow.
SAME_PHASES = 3 / 4


@data(frozen=True)
class Clusters:
    """Repetitions that split into two groups: a median of all describes neither."""

    fast: tuple[int, ...]  # indices of the repetitions in the faster cluster
    slow: tuple[int, ...]
    fast_ms: float  # each cluster's median and spread (IQR)
    slow_ms: float
    fast_spread_ms: float
    slow_spread_ms: float

    @property
    def balanced(self) -> bool:
        """Neither cluster is a clear majority: a median would describe neither."""
        n = len(self.fast) + len(self.slow)
        return min(len(self.fast), len(self.slow)) >= SPLIT_BALANCED * n


def two_clusters(values: Sequence[float]) -> Clusters | None:
    """The repetitions' two clusters, or None when they form one: split at the
    widest gap between neighbours (sorted), keep it if it is wider than either
    side and a real share of the faster side's median."""
    n = len(values)
    if n < 2 * SPLIT_MIN_REPS:
        return None
    order = sorted(range(n), key=lambda i: values[i])
    v = [values[i] for i in order]
    k = max(range(SPLIT_MIN_REPS, n - SPLIT_MIN_REPS + 1), key=lambda j: v[j] - v[j - 1])
    low, high = v[:k], v[k:]
    gap = high[0] - low[-1]
    width = max(low[-1] - low[0], high[-1] - high[0])
    if gap <= width or gap < SPLIT_MIN_GAP * statistics.median(low):
        return None
    (fast_ms, fast_spread), (slow_ms, slow_spread) = median_iqr(low), median_iqr(high)
    return Clusters(
        tuple(sorted(order[:k])),
        tuple(sorted(order[k:])),
        fast_ms,
        slow_ms,
        fast_spread,
        slow_spread,
    )


def cluster_faults(c: Clusters, faults: Sequence[float]) -> tuple[float, float] | None:
    """Mean page faults per call of the fast and the slow cluster's repetitions."""
    if len(faults) <= max(*c.fast, *c.slow):
        return None
    return (
        statistics.fmean(faults[i] for i in c.fast),
        statistics.fmean(faults[i] for i in c.slow),
    )


def clearly_more_faults(a: float | None, b: float | None) -> bool:
    """``a`` page faults per call are clearly more than ``b``: over twice as many,
    and 16 pages (64 KiB) per call more, so that a few stray faults are no signal."""
    return a is not None and b is not None and a > 2 * b + 16


def break_even(compile_s: float, eager_ms: float, compiled_ms: float) -> float | None:
    """Runs for the compile to pay for itself: compile seconds / saving per
    call; None when compiled is not faster."""
    saved_s = (eager_ms - compiled_ms) / 1000.0
    if saved_s <= 0:
        return None
    return compile_s / saved_s


@data(frozen=True)
class CacheState:
    """Inductor's FX graph cache over the compiles a compile time covers: a hit
    loads a compiled graph in a fraction of a full compile's time."""

    hits: int
    graphs: int  # compiles whose cache state is known (caches on)
    off: bool = False  # the graph caches were disabled
    header: bool = False  # the compile also built the precompiled header

    @property
    def state(self) -> str:
        if self.off:
            return "off"
        return "hit" if self.hits == self.graphs else "miss" if not self.hits else "partial"


def compile_cache(run: Run) -> CacheState | None:
    """The cache state of the compiles the benchmark's compile time covers (those
    of the first call, before the benchmark); None when no compile said."""
    b = run.benchmark
    states = [
        c.cache
        for c in run.compiles.values()
        if c.cache and (b is None or (c.start_t is not None and c.start_t <= b.t))
    ]
    known = [s for s in states if s != "disabled"]
    if not states:
        return None
    header = run.header_built is not None
    return CacheState(sum(s == "hit" for s in known), len(known), off=not known, header=header)


def cache_text(c: CacheState | None) -> str:
    words = cache_state(c.state if c else None, c.hits if c else 0, c.graphs if c else 0)
    return f"{words} {HEADER_BUILT}" if c is not None and c.header else words


@data(frozen=True)
class Speed:
    """The figures of one benchmark, as every view states them.

    When the repetitions of a side split into two balanced clusters
    (``two_clusters``, ``Clusters.balanced``), ``modes`` holds two pairings of
    eager and compiled clusters, each a Speed of its own: like with like (the
    clusters that ran in the same phases, ``like_pairs``) where both sides
    split alike, else the slowest and the fastest pairing. The views state
    those rather than a median of a mix, the verdict is theirs (MIXED when they
    disagree), and no single break-even is derived."""

    eager_ms: float
    compiled_ms: float
    eager_spread_ms: float
    compiled_spread_ms: float
    compile_s: float
    speedup: float | None
    verdict: str  # FASTER | SLOWER | SAME | MIXED
    break_even: float | None  # runs; None unless compiled is measurably faster
    cache: CacheState | None = None  # of the compile that compile_s times
    eager_split: Clusters | None = None
    compiled_split: Clusters | None = None
    modes: tuple[Speed, ...] = ()

    @property
    def measurable(self) -> bool:
        return self.verdict != SAME

    @property
    def cache_text(self) -> str:
        return cache_text(self.cache)

    @property
    def compile_text(self) -> str:
        """ "5.43 s (cache hit)": a compile time means little without its cache state."""
        return f"{text.secs(self.compile_s)} ({self.cache_text})"

    @property
    def one_speedup(self) -> float | None:
        """The speedup as one number, None when the repetitions split into two
        clusters (``modes`` then holds one per pairing): the JSON states no median
        of a mix where every view states both."""
        return None if self.modes else self.speedup

    @property
    def speedup_spread(self) -> float:
        """The speedup's spread: the eager and compiled spreads, as shares, added."""
        if self.speedup is None or self.eager_ms <= 0 or self.compiled_ms <= 0:
            return 0.0
        shares = self.eager_spread_ms / self.eager_ms + self.compiled_spread_ms / self.compiled_ms
        return self.speedup * shares


# A benchmark's measurements: as the worker's process ran, or with the allocator held steady.
Timed = ev.BenchmarkMeasured | ev.SteadyAllocatorMeasured


def within_spread(a_ms: float, b_ms: float, a_spread: float, b_spread: float) -> bool:
    """Two medians closer than the larger of their spreads (IQR over repetitions)."""
    return abs(a_ms - b_ms) <= max(a_spread, b_spread)


def _speed(e: float, c: float, e_spread: float, c_spread: float, compile_s: float) -> Speed:
    speedup = e / c if c > 0 else None
    if within_spread(e, c, e_spread, c_spread):
        verdict = SAME
    else:
        verdict = FASTER if c < e else SLOWER
    be = break_even(compile_s, e, c) if verdict == FASTER else None
    return Speed(e, c, e_spread, c_spread, compile_s, speedup, verdict, be)


def speed(b: Timed, compile_s: float | None = None, cache: CacheState | None = None) -> Speed:
    """Speedup, verdict and break-even of ``b``; ``compile_s`` defaults to ``b``'s own,
    ``cache`` is the cache state of the compile it times."""
    cs = compile_s if compile_s is not None else getattr(b, "compile_s", 0.0)
    out = _speed(b.eager_ms, b.compiled_ms, b.eager_spread_ms, b.compiled_spread_ms, cs)
    out = dataclasses.replace(out, cache=cache)
    e_split, c_split = two_clusters(b.eager_reps_ms), two_clusters(b.compiled_reps_ms)
    if e_split is None and c_split is None:
        return out
    eager = _sides(e_split, b.eager_ms, b.eager_spread_ms)
    compiled = _sides(c_split, b.compiled_ms, b.compiled_spread_ms)
    if len(eager) == len(compiled) == 1:  # only unbalanced splits: the medians stand
        return dataclasses.replace(out, eager_split=e_split, compiled_split=c_split)

    def pair(e: tuple[float, float], c: tuple[float, float]) -> Speed:
        return _speed(e[0], c[0], e[1], c[1], cs)

    like = like_pairs(e_split, c_split) if len(eager) == len(compiled) == 2 else None
    if like is not None:
        modes = tuple(pair(eager[i], compiled[j]) for i, j in like)
    else:  # the slowest pairing (fast eager, slow compiled) and the fastest one
        modes = (pair(eager[0], compiled[-1]), pair(eager[-1], compiled[0]))
    verdicts = {m.verdict for m in modes}
    return dataclasses.replace(
        out,
        verdict=verdicts.pop() if len(verdicts) == 1 else MIXED,
        break_even=None,
        eager_split=e_split,
        compiled_split=c_split,
        modes=modes,
    )


def like_pairs(e: Clusters | None, c: Clusters | None) -> list[tuple[int, int]] | None:
    """Which compiled cluster ran in the same phase as each eager one (0: fast,
    1: slow), from the repetitions both hold (SAME_PHASES of them); None when
    the clusters do not line up in time, or a side is one cluster."""
    if e is None or c is None:
        return None
    n = len(e.fast) + len(e.slow)
    same = len(set(e.fast) & set(c.fast)) + len(set(e.slow) & set(c.slow))
    if same >= SAME_PHASES * n:
        return [(0, 0), (1, 1)]
    if n - same >= SAME_PHASES * n:  # eager fast while compiled was slow, and back
        return [(0, 1), (1, 0)]
    return None


def _sides(c: Clusters | None, ms: float, spread: float) -> list[tuple[float, float]]:
    """(median, spread) of each balanced cluster, fast first; else of the whole."""
    if c is None or not c.balanced:
        return [(ms, spread)]
    return [(c.fast_ms, c.fast_spread_ms), (c.slow_ms, c.slow_spread_ms)]


def run_speed(run: Run) -> Speed | None:
    return speed(run.benchmark, cache=compile_cache(run)) if run.benchmark is not None else None


def speedup_text(s: Speed) -> str:
    """The speedup as every view states it: of each cluster when repetitions split."""
    if s.modes:
        return split_speedups([m.speedup for m in s.modes], s.measurable)
    return text.speedup_verdict(s.speedup, s.measurable)


def speedup_short(s: Speed) -> str:
    """The same without its verdict's words, for a narrow cell: "1.93x or 2.47x"."""
    if s.modes:
        return either([text.speedup(m.speedup) for m in s.modes])
    return text.speedup(s.speedup)


def break_even_text(s: Speed) -> str:
    """Break-even as every view states it: of each cluster when repetitions split,
    with the cache state of the compile it pays back."""
    if s.modes:
        return either([text.break_even(m.break_even, m.measurable) for m in s.modes])
    words = text.break_even(s.break_even, s.measurable)
    return f"{words} ({s.cache_text})" if s.break_even is not None and s.cache else words


def split_notes(b: Timed, s: Speed) -> list[str]:
    """One sentence per side whose repetitions split, with what the page faults say."""
    out = []
    for side, c, faults in (
        ("eager", s.eager_split, b.eager_faults),
        ("compiled", s.compiled_split, b.compiled_faults),
    ):
        if c is not None:
            by = cluster_faults(c, faults)
            cause = None if by is None else clearly_more_faults(by[1], by[0])
            out.append(
                split_note(
                    side, len(c.fast), c.fast_ms, len(c.slow), c.slow_ms, c.balanced, by, cause
                )
            )
    return out


# Why a run has no benchmark: (the sentence, the word or two for a narrow column).
_WHY_NONE = {
    "sweep": ("a shape-sweep run is not benchmarked", "sweep run"),
    "live": (text.NOT_MEASURED_YET, "running"),
    "compile only": ("compile only (--no-benchmark)", "compile only"),
    "other": ("not measured in this run", "not measured"),
    fruns.ATTACHED: (
        "attached to a program: run with --eager-baseline to time eager",
        "attached",
    ),
    fruns.TEST: ("a test of the pytest plugin, which times no eager run", "test"),
    fruns.IMPORTED: ("read from a TORCH_TRACE log, which holds no eager timing", "imported"),
}


def why_none(run: Run, short: bool = False) -> str:
    """Why a run has no benchmark, in one wording for every view."""
    key = fruns.kind(run)
    if key != fruns.WORKLOAD:
        return _WHY_NONE[key][short]
    if run.sweep or run.sweep_done is not None:
        key = "sweep"
    elif run.live:
        key = "live"
    elif run.status in ("cancelled", "crashed", "error"):
        return run.status if short else f"the run ended ({run.status}) before the benchmark"
    elif run.nothing_compiled is not None:
        return NOTHING_COMPILED if short else NO_SPEEDUP
    elif "benchmark" in run.unavailable and not short:
        return run.unavailable["benchmark"]
    elif run.settings is not None and not run.settings.benchmark:
        key = "compile only"
    else:
        key = "other"
    return _WHY_NONE[key][short]


def measured_with(b: ev.BenchmarkMeasured) -> str:
    """How the numbers were taken: the caveat that goes with them."""
    return (
        f"median of {b.reps} reps × {b.iters} calls after {b.warmup} warm-up, "
        f"spread = IQR, {text.plural(b.threads, 'thread')}, {b.timer}, "
        f"load avg {text.load_avg(b.load_avg)}"
    )


# --- the words of a benchmark (the units are text's) ---------------------------


def split_speedups(xs: list[float | None], measurable: bool = True) -> str:
    """ "1.79x or 4.82x (repetitions in two clusters)": never a median of a mix;
    "0.93x or 0.97x (no measurable difference; ...)" when no pairing differs."""
    said = text.TWO_CLUSTERS if measurable else f"{text.NO_DIFFERENCE}; {text.TWO_CLUSTERS}"
    return f"{either([text.speedup(x) for x in xs])} ({said})"


def either(words: list[str]) -> str:
    """Two figures that are both true, one per cluster: "186 runs or 610 runs"."""
    return " or ".join(dict.fromkeys(words))


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
    near = f"{n_fast} near {text.ms(fast_ms)}, {n_slow} near {text.ms(slow_ms)}"
    out = f"{side} {text.TWO_CLUSTERS}: {near}, {stated}"
    if faults_by is not None:
        f_fast, f_slow = faults_by
        pf = f"page faults per call {text.faults(f_fast)} vs {text.faults(f_slow)}"
        out += f"; {pf}: " + (
            "the allocator" if allocator else "not the allocator (background load?)"
        )
    return out


def cache_state(state: str | None, hits: int = 0, graphs: int = 0) -> str:
    """Inductor's graph cache beside a compile time: "cache hit", "cache miss",
    "cache hit for 1 of 3 graphs", "graph cache off", "cache state n/a"."""
    if state == "partial":
        return f"cache hit for {hits} of {text.plural(graphs, 'graph')}"
    return {
        "hit": "cache hit",
        "miss": "cache miss",
        "off": "graph cache off",
    }.get(state or "", f"cache state {text.NA}")
