"""A run's benchmark, eager vs compiled, worded once for every report."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.session import Run


@data
class BenchmarkBlock:
    """Eager vs compiled, worded once for every format."""

    event: ev.BenchmarkMeasured
    speed: fb.Speed
    eager: str
    compiled: str
    eager_spread: str
    compiled_spread: str
    speedup: str  # "2.91x", or "1.00x (no measurable difference)"
    break_even: str  # "658 runs", "never (compiled is slower)", "n/a (no measurable difference)"
    compile: str
    measured: str  # how the numbers were taken
    sentence: str  # the verdict in a sentence
    tone: str  # "info" | "warn"
    # The headline beside the speedup with the allocator held steady (figures.allocator).
    allocator: fa.AllocatorContrast
    columns: list[str]
    rows: list[tuple[str, list[str]]]
    notes: list[str]
    headline: str  # which of the two speedups is the headline, and why

    @property
    def verdict(self) -> str:
        return self.speed.verdict

    @property
    def steady_speedup(self) -> str:
        """The steady figure in a narrow cell."""
        s = self.allocator.steady
        return fb.speedup_short(s) if s is not None else text.na(self.allocator.steady_why)


def benchmark_block(run: Run) -> BenchmarkBlock | None:
    b = run.benchmark
    if b is None:
        return None
    contrast = fa.contrast(run)
    assert contrast is not None
    s = contrast.default
    compile_s = s.compile_text
    if s.modes:
        sentence = (
            f"The repetitions split into two clusters, so both are stated: speedup "
            f"{fb.speedup_text(s)}; break-even {fb.break_even_text(s)}."
        )
        tone = "warn"
    elif s.verdict == fb.FASTER:
        sentence = (
            f"The {compile_s} compile pays for itself after "
            f"{text.break_even(s.break_even)} (compile seconds ÷ time saved per run, "
            f"{text.ms(s.eager_ms - s.compiled_ms)})."
        )
        tone = "info"
    elif s.verdict == fb.SLOWER:
        sentence = (
            f"Compiled is slower here ({text.ms(s.compiled_ms)} vs {text.ms(s.eager_ms)} eager): "
            f"the {compile_s} compile never pays for itself."
        )
        tone = "warn"
    else:
        sentence = (
            f"Eager and compiled differ by less than their measured spread: "
            f"{text.NO_DIFFERENCE}, so there is no break-even to state."
        )
        tone = "warn"
    return BenchmarkBlock(
        event=b,
        speed=s,
        eager=text.ms(s.eager_ms),
        compiled=text.ms(s.compiled_ms),
        eager_spread=text.ms(s.eager_spread_ms),
        compiled_spread=text.ms(s.compiled_spread_ms),
        speedup=fb.speedup_text(s),
        break_even=fb.break_even_text(s),
        compile=compile_s,
        measured=fb.measured_with(b),
        sentence=sentence,
        tone=tone,
        allocator=contrast,
        columns=fa.columns(),
        rows=fa.rows(contrast),
        notes=fa.notes(contrast, run),
        headline=fa.headline(b.allocator),
    )
