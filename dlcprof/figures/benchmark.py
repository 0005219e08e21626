"""Eager vs compiled: speedup, break-even, and whether the difference is real.

A difference smaller than the measured spread is not a result: the verdict
is then "no measurable difference" and there is no break-even number (a
ResNet at 1.000x once reported 69,717,904 runs from noise).
"""

from __future__ import annotations

from dataclasses import dataclass

from dlcprof import events as ev
from dlcprof import text
from dlcprof.session import Run

FASTER, SLOWER, SAME = "faster", "slower", text.NO_DIFFERENCE


def break_even(compile_s: float, eager_ms: float, compiled_ms: float) -> float | None:
    """Runs for the compile to pay for itself: compile seconds / saving per
    call; None when compiled is not faster."""
    saved_s = (eager_ms - compiled_ms) / 1000.0
    if saved_s <= 0:
        return None
    return compile_s / saved_s


@dataclass(frozen=True)
class CacheState:
    """Inductor's FX graph cache over the compiles a compile time covers: a hit
    loads a compiled graph in a fraction of a full compile's time."""

    hits: int
    graphs: int  # compiles whose cache state is known (caches on)
    off: bool = False  # the graph caches were disabled

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
        c.cache for c in run.compiles.values()
        if c.cache and (b is None or (c.start_t is not None and c.start_t <= b.t))
    ]  # fmt: skip
    known = [s for s in states if s != "disabled"]
    if not states:
        return None
    return CacheState(sum(s == "hit" for s in known), len(known), off=not known)


def cache_text(c: CacheState | None) -> str:
    return text.cache_state(c.state if c else None, c.hits if c else 0, c.graphs if c else 0)


@dataclass(frozen=True)
class Speed:
    """The figures of one benchmark, as every view states them."""

    eager_ms: float
    compiled_ms: float
    eager_spread_ms: float
    compiled_spread_ms: float
    compile_s: float
    speedup: float | None
    verdict: str  # FASTER | SLOWER | SAME
    break_even: float | None  # runs; None unless compiled is measurably faster
    cache: CacheState | None = None  # of the compile that compile_s times

    @property
    def measurable(self) -> bool:
        return self.verdict != SAME

    @property
    def cache_text(self) -> str:
        return cache_text(self.cache)

    @property
    def compile_text(self) -> str:
        """"5.43 s (cache hit)": a compile time means little without its cache state."""
        return f"{text.secs(self.compile_s)} ({self.cache_text})"

    @property
    def break_even_text(self) -> str:
        """The break-even, with the cache state of the compile it pays back."""
        words = text.break_even(self.break_even, self.measurable)
        return f"{words} ({self.cache_text})" if self.break_even is not None else words


def within_spread(a_ms: float, b_ms: float, a_spread: float, b_spread: float) -> bool:
    """Two medians closer than the larger of their spreads (IQR over repetitions)."""
    return abs(a_ms - b_ms) <= max(a_spread, b_spread)


def speed(b: ev.BenchmarkMeasured, cache: CacheState | None = None) -> Speed:
    speedup = b.eager_ms / b.compiled_ms if b.compiled_ms > 0 else None
    if within_spread(b.eager_ms, b.compiled_ms, b.eager_spread_ms, b.compiled_spread_ms):
        verdict = SAME
    else:
        verdict = FASTER if b.compiled_ms < b.eager_ms else SLOWER
    return Speed(
        eager_ms=b.eager_ms,
        compiled_ms=b.compiled_ms,
        eager_spread_ms=b.eager_spread_ms,
        compiled_spread_ms=b.compiled_spread_ms,
        compile_s=b.compile_s,
        speedup=speedup,
        verdict=verdict,
        break_even=(
            break_even(b.compile_s, b.eager_ms, b.compiled_ms) if verdict == FASTER else None
        ),
        cache=cache,
    )


def run_speed(run: Run) -> Speed | None:
    return speed(run.benchmark, compile_cache(run)) if run.benchmark is not None else None


# Why a run has no benchmark: (the sentence, the word or two for a narrow column).
_WHY_NONE = {
    "sweep": ("a shape-sweep run is not benchmarked", "sweep run"),
    "live": ("not measured yet", "running"),
    "compile only": ("compile only (--no-benchmark)", "compile only"),
    "other": ("not measured in this run", "not measured"),
}


def why_none(run: Run, short: bool = False) -> str:
    """Why a run has no benchmark, in one wording for every view."""
    if run.sweep or run.sweep_done is not None:
        key = "sweep"
    elif run.live:
        key = "live"
    elif run.status in ("cancelled", "crashed", "error"):
        return run.status if short else f"the run ended ({run.status}) before the benchmark"
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
