"""Two runs' headline numbers side by side (``dlcprof compare``): compile
wall and counts, autotuning, the benchmark (speedup, break-even, the speedup
with the allocator held steady) and the sweep, each a ``MetricDelta`` that
words both sides, the change and its verdict.
"""

from __future__ import annotations

from typing import Any

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import modes as fm
from dlcprof.figures import recompiles as fr
from dlcprof.figures.check.baseline import beyond_noise
from dlcprof.session import Run


@data
class MetricDelta:
    name: str
    a: float | None
    b: float | None
    unit: str  # "s" | "ms" | "x" | "runs" | "count"
    lower_is_better: bool = True
    a_why: str = ""  # why side A has no figure ("" when it has one, or break-even is "never")
    b_why: str = ""
    neutral: bool = False  # a change, but neither better nor worse (kernel count)
    a_measurable: bool = True  # False: eager and compiled within their spread on that side
    b_measurable: bool = True
    caveat: str = ""  # why the two sides are not like for like (no better/worse then)
    spread: float | None = None  # the wider side's interquartile range, in the unit

    @property
    def delta(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        return self.b - self.a

    @property
    def verdict(self) -> str:
        """ "better" | "worse" | "same" | "" (not comparable)."""
        if self.caveat:
            return ""
        d = self.delta
        if self.unit == "runs":
            if self.a_why or self.b_why:
                return ""
            # Break-even: None is "never", so a side turning to never is worse.
            if self.a is None and self.b is None:
                return "same"
            if self.a is None or self.b is None:
                return "worse" if self.b is None else "better"
        if d is None or self.neutral:
            return "" if d is None or d else "same"
        if self.unit == "s" and not beyond_noise(self.a or 0.0, self.b or 0.0):
            return "same"  # compile seconds, measured once a side: what two runs differ by
        if self.spread is not None and abs(d) <= self.spread:
            return "same"  # inside what the repetitions spread over
        base = max(abs(self.a or 0.0), abs(self.b or 0.0), 1e-12)
        if abs(d) / base < 0.02:  # within 2%: noise for timings
            return "same"
        return "better" if (d < 0) == self.lower_is_better else "worse"

    def side_text(self, side: str) -> str:
        """One side's figure in the words every view uses."""
        value, why, measurable = (
            (self.a, self.a_why, self.a_measurable)
            if side == "A"
            else (self.b, self.b_why, self.b_measurable)
        )
        if why:
            return text.na(why)
        if self.unit == "runs":
            return text.break_even(value, measurable)
        if value is None:
            return text.NA
        if self.unit == "s":
            return text.secs(value)
        if self.unit == "ms":
            return text.ms(value)
        if self.unit == "x":
            return text.speedup_verdict(value, measurable)
        return f"{value:g}"

    @property
    def a_text(self) -> str:
        return self.side_text("A")

    @property
    def b_text(self) -> str:
        return self.side_text("B")

    @property
    def delta_text(self) -> str:
        words = self._delta_words()
        if self.caveat:
            return f"{words} ({self.caveat})"
        judged = self.unit == "s" or self.spread is not None
        if judged and self.delta and self.verdict == "same":
            return f"{words}: {text.NO_DIFFERENCE}"
        return words

    def _delta_words(self) -> str:
        d = self.delta
        if d is None and self.unit == "runs" and self.verdict in ("better", "worse"):
            return "now pays off" if self.verdict == "better" else "now never"
        if d is None:
            return "—"
        if self.unit == "count":
            return f"{d:+g}"
        rel = f" ({text.signed_pct(d / self.a)})" if self.a else ""
        if self.unit == "s":
            return text.signed_secs(d) + rel
        if self.unit == "ms":
            return text.signed_ms(d) + rel
        if self.unit == "x":
            return f"{d:+.2f}x"
        return f"{d:+,.0f} runs" + rel


def _bench_metrics(a: Run, b: Run) -> list[MetricDelta]:
    sa, sb = fb.run_speed(a), fb.run_speed(b)
    why_a = "" if sa else fb.why_none(a, short=True)
    why_b = "" if sb else fb.why_none(b, short=True)

    def get(s: fb.Speed | None, attr: str) -> float | None:
        return getattr(s, attr) if s is not None else None

    def pair(name: str, attr: str, unit: str, **kw: Any) -> MetricDelta:
        return MetricDelta(name, get(sa, attr), get(sb, attr), unit, a_why=why_a, b_why=why_b, **kw)

    measurable = {
        "a_measurable": sa is None or sa.measurable,
        "b_measurable": sb is None or sb.measurable,
    }
    be = pair("break-even", "break_even", "runs")
    # No measurable difference: there is no break-even to state, never a number.
    if sa is not None and not sa.measurable:
        be.a, be.a_why = None, text.NO_DIFFERENCE
    if sb is not None and not sb.measurable:
        be.b, be.b_why = None, text.NO_DIFFERENCE
    speedup = pair("speedup", "speedup", "x", lower_is_better=False, **measurable)
    # Repetitions in two clusters: no median of a mix is compared.
    for m in (speedup, be):
        if sa is not None and sa.modes:
            m.a, m.a_why = None, text.TWO_CLUSTERS
        if sb is not None and sb.modes:
            m.b, m.b_why = None, text.TWO_CLUSTERS
    spreads = [s.compiled_spread_ms for s in (sa, sb) if s is not None]
    return [
        pair("eager", "eager_ms", "ms", neutral=True),
        pair("compiled", "compiled_ms", "ms", spread=max(spreads) if len(spreads) == 2 else None),
        speedup,
        pair("compile_s (benchmark)", "compile_s", "s"),
        be,
        *_allocator_metrics(a, b, why_a, why_b),
    ]


def _allocator_metrics(a: Run, b: Run, why_a: str, why_b: str) -> list[MetricDelta]:
    """The speedup with the allocator held steady, and the page faults behind it
    (``why_a``/``why_b``: why a side has no benchmark)."""
    ca, cb = fa.contrast(a), fa.contrast(b)
    if not any(c is not None and (c.steady or c.faults.eager is not None) for c in (ca, cb)):
        return []

    def steady(c: fa.AllocatorContrast | None, why: str) -> tuple[float | None, str, bool]:
        if c is None:
            return None, why, True
        if c.steady is None:
            return None, c.steady_why, True
        if c.steady.modes:
            return None, text.TWO_CLUSTERS, True
        return c.steady.speedup, "", c.steady.measurable

    def faults(c: fa.AllocatorContrast | None, why: str) -> tuple[float | None, str]:
        if c is None:
            return None, why
        if c.faults.eager is None:
            return None, "not counted"
        return round(c.faults.eager), ""

    (sa, swhy_a, ma), (sb, swhy_b, mb) = steady(ca, why_a), steady(cb, why_b)
    (fa_, fwhy_a), (fb_, fwhy_b) = faults(ca, why_a), faults(cb, why_b)
    return [
        MetricDelta(
            f"speedup, {text.STEADY_ALLOC}",
            sa,
            sb,
            "x",
            lower_is_better=False,
            a_why=swhy_a,
            b_why=swhy_b,
            a_measurable=ma,
            b_measurable=mb,
        ),
        MetricDelta("eager page faults/call", fa_, fb_, "count", a_why=fwhy_a, b_why=fwhy_b),
    ]


def metrics(a: Run, b: Run) -> list[MetricDelta]:
    """Every headline number of A beside B's, in the order the views list them."""

    def wall(r: Run) -> tuple[float | None, str]:
        if not r.compiles:
            return None, "no compile"
        return r.compile_wall_s, ""

    (wa, why_a), (wb, why_b) = wall(a), wall(b)
    out = [
        MetricDelta("compile wall", wa, wb, "s", a_why=why_a, b_why=why_b),
        MetricDelta("compiles", len(a.compiles), len(b.compiles), "count"),
        MetricDelta("fused kernels", len(a.kernels), len(b.kernels), "count", neutral=True),
        MetricDelta("recompiles", len(a.recompiles), len(b.recompiles), "count"),
        MetricDelta("graph breaks", len(a.graph_breaks), len(b.graph_breaks), "count"),
    ]
    ta, tb = fm.autotune(a), fm.autotune(b)
    if ta.seconds is not None or tb.seconds is not None:
        none = fm.NOTHING_AUTOTUNED
        out.append(
            MetricDelta(
                "autotune",
                ta.seconds,
                tb.seconds,
                "s",
                a_why="" if ta.seconds is not None else none,
                b_why="" if tb.seconds is not None else none,
            )
        )
    if a.benchmark is not None or b.benchmark is not None:
        out += _bench_metrics(a, b)
    if a.sweep or b.sweep:

        def mean_latency(r: Run) -> float | None:
            return sum(s.latency_ms for s in r.sweep) / len(r.sweep) if r.sweep else None

        no_a = "" if a.sweep else "no sweep"
        no_b = "" if b.sweep else "no sweep"
        out += [
            MetricDelta(
                "sweep transition cost",
                fr.sweep_total(a),
                fr.sweep_total(b),
                "s",
                a_why=no_a,
                b_why=no_b,
            ),
            MetricDelta(
                "sweep mean latency", mean_latency(a), mean_latency(b), "ms", a_why=no_a, b_why=no_b
            ),
        ]
    return out
