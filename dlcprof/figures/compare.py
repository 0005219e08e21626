"""Two runs side by side: what changed between them (``dlcprof compare``).

``compare`` diffs the latest run of each session (or runs chosen by index or
run id) into one figure, the ``Comparison``: compile time per phase, kernels
added / removed / changed, graph breaks and recompiles added or gone, and the
headline numbers, worded here. Every number comes from the other figures
(speedup, break-even and the noise verdict from ``figures.benchmark``); the
terminal table (``dlcprof.tables.compare_table``) and the HTML page
(``dlcprof.report.html.render_compare_html``) only place them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import ranks as franks
from dlcprof.figures.runs import run_label
from dlcprof.session import Run, Session


class CompareError(ValueError):
    """A run to compare that a session does not have (one line, for the CLI)."""


@dataclass
class PhaseDelta:
    name: str
    a_s: float | None  # None: the phase did not run on that side
    b_s: float | None
    pool: bool = False

    @property
    def delta(self) -> float:
        return (self.b_s or 0.0) - (self.a_s or 0.0)

    @property
    def label(self) -> str:
        return self.name + (" (pool)" if self.pool else "")

    @property
    def a_text(self) -> str:
        return text.secs(self.a_s) if self.a_s is not None else "—"

    @property
    def b_text(self) -> str:
        return text.secs(self.b_s) if self.b_s is not None else "—"

    @property
    def delta_text(self) -> str:
        return text.signed_secs(self.delta)

    @property
    def verdict(self) -> str:
        """ "worse" (slower), "better" or "same", beyond a few milliseconds."""
        d = self.delta
        return "worse" if d > 0.005 else "better" if d < -0.005 else "same"


@dataclass
class KernelChange:
    a: ev.KernelGenerated
    b: ev.KernelGenerated
    how: str  # "fused ops changed" | "renamed"

    @property
    def name(self) -> str:
        return self.b.name if self.a.name == self.b.name else f"{self.a.name} → {self.b.name}"

    @property
    def ops(self) -> str:
        return f"{', '.join(self.a.fused_ops)} → {', '.join(self.b.fused_ops)}"


@dataclass(frozen=True)
class KernelTime:
    """A kernel's time per compiled call on one side, every launch of it summed:
    a library call repeated per layer (16 ``extern_kernels.addmm``) is one
    kernel launched from 16 places."""

    time_ms: float | None
    spread_ms: float | None  # the launches' spreads summed: None when one is not known
    launches: int  # the timed launches in one compiled call
    why: str | None  # why there is no time

    @property
    def words(self) -> str:
        if self.time_ms is None:
            return text.ms(None, self.why)
        total = f" (×{self.launches}, total)" if self.launches > 1 else ""
        return text.ms(self.time_ms) + total


@dataclass
class KernelTimeDelta:
    """One kernel's time per compiled call in A and B, matched as the kernel diff
    matches them (same name, else same fused ops); None on a side without it."""

    name: str
    a: KernelTime | None
    b: KernelTime | None

    @staticmethod
    def _ms(t: KernelTime | None) -> float | None:
        return t.time_ms if t is not None else None

    def _text(self, t: KernelTime | None, side: str) -> str:
        return f"— (not in {side})" if t is None else t.words

    @property
    def a_text(self) -> str:
        return self._text(self.a, "A")

    @property
    def b_text(self) -> str:
        return self._text(self.b, "B")

    @property
    def delta(self) -> float | None:
        a, b = self._ms(self.a), self._ms(self.b)
        return b - a if a is not None and b is not None else None

    @property
    def delta_text(self) -> str:
        d = self.delta
        if d is None:
            return text.NA
        return text.NO_DIFFERENCE if self.verdict == "same" else text.signed_ms(d)

    @property
    def verdict(self) -> str:
        """ "worse" | "better" | "same" (within the larger spread) | "" (not comparable,
        or a side measured no spread: one profiler window on a GPU)."""
        d = self.delta
        if d is None or self.a is None or self.b is None:
            return ""
        if self.a.spread_ms is None or self.b.spread_ms is None:
            return ""
        spread = max(self.a.spread_ms, self.b.spread_ms)
        if abs(d) <= spread:
            return "same"
        return "worse" if d > 0 else "better"

    @property
    def largest_ms(self) -> float:
        return max(self._ms(self.a) or 0.0, self._ms(self.b) or 0.0)


@dataclass
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
        return f"{words} ({self.caveat})" if self.caveat else words

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


@dataclass(frozen=True)
class Regenerated:
    """An unchanged kernel generated by a different number of compiles (a
    static-shape sweep compiles once per shape), or from a different number of
    call sites in one compile (a library call once per layer)."""

    name: str
    a_compiles: int
    b_compiles: int
    a_each: int  # call sites in one compile (a library call once per layer)
    b_each: int

    @property
    def words(self) -> str:
        def side(n: int, each: int, label: str) -> str:
            many = f", {each} call sites each" if each > 1 else ""
            return f"{text.plural(n, 'compile')} in {label}{many}"

        return (
            f"generated by {side(self.a_compiles, self.a_each, 'A')}; "
            f"{side(self.b_compiles, self.b_each, 'B')}"
        )


@dataclass(frozen=True)
class HeadlineRow:
    """A row of the headline table, worded: what both renderers place."""

    name: str
    a: str
    b: str
    delta: str
    verdict: str  # "better" | "worse" | "same" | ""


@dataclass
class RanksSide:
    """One side's session ran many ranks: its divergence checks, as its report says them."""

    side: str  # "A" | "B"
    summary: str  # fdiv.summary
    divergences: list[fdiv.Divergence]


def ranks_side(session: Session, side: str) -> RanksSide | None:
    ranks = len(franks.by_rank(session))
    if not ranks:
        return None
    found = fdiv.divergences(session)
    return RanksSide(side, fdiv.summary(found, ranks), found)


@dataclass
class Comparison:
    a_label: str
    b_label: str
    a_run: Run
    b_run: Run
    settings: list[tuple[str, Any, Any]]  # only the keys that differ
    metrics: list[MetricDelta]
    phases: list[PhaseDelta]
    kernels_added: list[ev.KernelGenerated] = field(default_factory=list)
    kernels_removed: list[ev.KernelGenerated] = field(default_factory=list)
    kernels_changed: list[KernelChange] = field(default_factory=list)
    kernels_same: int = 0
    # Same kernel, compiled a different number of times (e.g. once per shape).
    kernels_recompiled: list[Regenerated] = field(default_factory=list)
    graph_breaks_added: list[tuple[str, str]] = field(default_factory=list)  # (reason, location)
    graph_breaks_gone: list[tuple[str, str]] = field(default_factory=list)
    recompiles_added: list[str] = field(default_factory=list)  # reasons, compile ids stripped
    recompiles_gone: list[str] = field(default_factory=list)
    # A normalized reason -> the reason as recorded (first seen), to word its newest guard.
    reasons: dict[str, str] = field(default_factory=dict)
    # Per-kernel time per call, slowest first; empty unless a side was profiled.
    kernel_times: list[KernelTimeDelta] = field(default_factory=list)
    # Said above the tables: which run of a session of several was taken.
    notes: list[str] = field(default_factory=list)
    # The sides whose session ran many ranks (torchrun): their divergences.
    ranks: list[RanksSide] = field(default_factory=list)

    @property
    def kernels_title(self) -> str:
        """What the kernel table holds, counted: its rows and the unchanged."""
        return (
            f"kernels: {len(self.kernels_added)} added, {len(self.kernels_removed)} removed, "
            f"{len(self.kernels_changed)} changed, {self.kernels_same} unchanged"
        )

    def metric(self, name: str) -> MetricDelta:
        return next(m for m in self.metrics if m.name == name)

    @property
    def speed_a(self) -> fb.Speed | None:
        return fb.run_speed(self.a_run)

    @property
    def speed_b(self) -> fb.Speed | None:
        return fb.run_speed(self.b_run)

    def newest(self, reason: str) -> str:
        """A recompile reason as every view words it: the newest failed guard."""
        return str(fr.newest_reason(self.reasons.get(reason, reason)) or reason)

    @property
    def cache_note(self) -> str | None:
        """Said when the two sides' compiles met different cache states: then compile
        times and break-evens are not like for like."""
        a, b = fb.compile_cache(self.a_run), fb.compile_cache(self.b_run)
        if (a.state if a else None) == (b.state if b else None):
            return None
        return (
            f"The two sides' caches differ (A: {fb.cache_text(a)}; B: {fb.cache_text(b)}): a "
            "cache hit loads a compiled graph instead of compiling it, so compile times and "
            "break-even are not like for like."
        )

    def headline(self) -> list[HeadlineRow]:
        a, b = fb.compile_cache(self.a_run), fb.compile_cache(self.b_run)
        differ = self.cache_note is not None
        rows = [
            HeadlineRow(
                "compile cache",
                fb.cache_text(a),
                fb.cache_text(b),
                "differs" if differ else "—",
                "" if differ else "same",
            )
        ]
        for m in self.metrics:
            rows.append(HeadlineRow(m.name, m.a_text, m.b_text, m.delta_text, m.verdict))
            if m.name == "speedup":
                rows.append(self._verdict_row())
        return rows

    def _verdict_row(self) -> HeadlineRow:
        """Eager vs compiled on each side: faster, slower, or no measurable difference."""
        sides = []
        for run, s in ((self.a_run, self.speed_a), (self.b_run, self.speed_b)):
            sides.append(s.verdict if s is not None else text.na(fb.why_none(run, short=True)))
        same = sides[0] == sides[1]
        return HeadlineRow(
            "compiled vs eager",
            sides[0],
            sides[1],
            "—" if same else "changed",
            "same" if same else "",
        )

    def split_phases(self) -> tuple[list[PhaseDelta], list[PhaseDelta]]:
        base = max(self.a_run.compile_wall_s, self.b_run.compile_wall_s)
        return split_phases(self.phases, base)

    @property
    def recompile_changes(self) -> list[tuple[str, str]]:
        """("added" | "gone", newest guard failure)."""
        return [("added", self.newest(r)) for r in self.recompiles_added] + [
            ("gone", self.newest(r)) for r in self.recompiles_gone
        ]


# --- comparing ----------------------------------------------------------------------

# What a cache hit on one side and a miss on the other makes incomparable.
_CACHE_BOUND = ("compile wall", "compile_s (benchmark)", "break-even")


def pick_run(session: Session, which: int | str | None, side: str) -> Run:
    runs = list(session.runs.values())
    if not runs:
        raise CompareError(f"session {side} has no runs to compare")
    if which is None:
        return runs[-1]
    if isinstance(which, str) and which in session.runs:
        return session.runs[which]
    try:
        index = int(which)
    except (TypeError, ValueError):
        raise CompareError(f"session {side} has no run {which!r}") from None
    # 1-based like the reports' "Run N"; negative counts from the end.
    if index >= 1 and index <= len(runs):
        return runs[index - 1]
    if -len(runs) <= index < 0:
        return runs[index]
    raise CompareError(f"session {side} has no run {which!r} (it has {len(runs)})")


def run_taken_note(session: Session, run: Run, side: str) -> str:
    """Which run of a session of several a comparison took, and how to pick another."""
    n = len(session.runs)
    return (
        f"{side} holds {n} runs: comparing its latest, run {n} ({run_label(run)}); "
        f"pick another with --run (1 to {n}, or a run id)"
    )


def _multiset_diff(a: list[Any], b: list[Any]) -> tuple[list[Any], list[Any]]:
    ca, cb = Counter(a), Counter(b)
    added = list((cb - ca).elements())
    gone = list((ca - cb).elements())
    return added, gone


KernelKey = tuple[str, tuple[str, ...]]


def _key(k: ev.KernelGenerated) -> KernelKey:
    return (k.name, tuple(sorted(k.fused_ops)))


def _unique(
    kernels: list[ev.KernelGenerated],
) -> tuple[list[ev.KernelGenerated], dict[KernelKey, tuple[int, int]]]:
    """One kernel per (name, fused ops), with how many compiles generated it and
    how many times one compile did at most: a recompile per shape regenerates
    the same kernel, which is not a change."""
    seen: dict[KernelKey, ev.KernelGenerated] = {}
    sites: dict[KernelKey, Counter[str]] = {}  # call sites per compile id
    for k in kernels:
        seen.setdefault(_key(k), k)
        sites.setdefault(_key(k), Counter())[k.compile_id] += 1
    counts = {key: (len(c), max(c.values())) for key, c in sites.items()}
    return list(seen.values()), counts


def kernel_times(run: Run) -> dict[KernelKey, KernelTime]:
    """Each kernel's time per compiled call, every timed launch of it summed."""
    timings = fk.kernel_timings(run)
    by: dict[KernelKey, list[fk.KernelTiming]] = {}
    for k in run.kernels:
        by.setdefault(_key(k), []).append(timings[fk.kernel_key(k)])
    out = {}
    for key, ts in by.items():
        timed = [t for t in ts if t.time_ms is not None]
        if not timed:
            out[key] = KernelTime(None, None, 0, ts[0].reason("time_ms"))
            continue
        spreads = [t.spread_ms for t in timed]
        out[key] = KernelTime(
            sum(t.time_ms for t in timed if t.time_ms is not None),
            None if None in spreads else sum(x for x in spreads if x is not None),
            sum(max(t.launches, 1) for t in timed),
            None,
        )
    return out


def _diff_kernels(
    cmp: Comparison, a_all: list[ev.KernelGenerated], b_all: list[ev.KernelGenerated]
) -> None:
    a, count_a = _unique(a_all)
    b, count_b = _unique(b_all)
    for key in count_a.keys() & count_b.keys():
        (na, each_a), (nb, each_b) = count_a[key], count_b[key]
        if (na, each_a) != (nb, each_b):
            cmp.kernels_recompiled.append(Regenerated(key[0], na, nb, each_a, each_b))
    unmatched_a, unmatched_b = list(a), list(b)
    pairs: list[tuple[ev.KernelGenerated | None, ev.KernelGenerated | None]] = []
    # 1. Same name: the same kernel; changed when it fuses different ops.
    for kb in list(unmatched_b):
        ka = next((k for k in unmatched_a if k.name == kb.name), None)
        if ka is None:
            continue
        unmatched_a.remove(ka)
        unmatched_b.remove(kb)
        pairs.append((ka, kb))
        if Counter(ka.fused_ops) == Counter(kb.fused_ops):
            cmp.kernels_same += 1
        else:
            cmp.kernels_changed.append(KernelChange(ka, kb, "fused ops changed"))
    # 2. Different names, same fused-op set: the same fusion under a new name.
    for kb in list(unmatched_b):
        if not kb.fused_ops:
            continue
        ka = next((k for k in unmatched_a if set(k.fused_ops) == set(kb.fused_ops)), None)
        if ka is None:
            continue
        unmatched_a.remove(ka)
        unmatched_b.remove(kb)
        pairs.append((ka, kb))
        cmp.kernels_changed.append(KernelChange(ka, kb, "renamed"))
    cmp.kernels_added = unmatched_b
    cmp.kernels_removed = unmatched_a
    if cmp.a_run.kernel_profile is None and cmp.b_run.kernel_profile is None:
        return
    ta, tb = kernel_times(cmp.a_run), kernel_times(cmp.b_run)
    pairs += [(k, None) for k in unmatched_a] + [(None, k) for k in unmatched_b]
    rows = []
    for ka, kb in pairs:
        name = KernelChange(ka, kb, "").name if ka and kb else (ka or kb).name  # type: ignore[union-attr]
        a = ta.get(_key(ka)) if ka else None
        rows.append(KernelTimeDelta(name, a, tb.get(_key(kb)) if kb else None))
    cmp.kernel_times = sorted(rows, key=lambda r: -r.largest_ms)


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
    return [
        pair("eager", "eager_ms", "ms", neutral=True),
        pair("compiled", "compiled_ms", "ms"),
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


def _metrics(a: Run, b: Run) -> list[MetricDelta]:
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


def _settings(r: Run) -> dict[str, Any]:
    if r.settings is None:
        return {}
    return {k: v for k, v in dataclasses.asdict(r.settings).items() if k not in ("t", "run_id")}


def compare(
    a: Session, b: Session, run_a: int | str | None = None, run_b: int | str | None = None
) -> Comparison:
    """Diff run ``run_a`` of ``a`` against run ``run_b`` of ``b`` (default: the
    latest of each; an int is 1-based as in the reports, negative from the end,
    a str is a run id). B is "after": deltas are B - A."""
    ra, rb = pick_run(a, run_a, "A"), pick_run(b, run_b, "B")
    notes = [
        run_taken_note(s, r, side)
        for s, r, which, side in ((a, ra, run_a, "A"), (b, rb, run_b, "B"))
        if which is None and len(s.runs) > 1
    ]
    sa, sb = _settings(ra), _settings(rb)
    keys = list(dict.fromkeys([*sa, *sb]))
    settings = [(k, sa.get(k), sb.get(k)) for k in keys if sa.get(k) != sb.get(k)]
    ta = {(t.pool, t.name): t.total_s for t in fp.phase_totals(ra)}
    tb = {(t.pool, t.name): t.total_s for t in fp.phase_totals(rb)}
    phases = [
        PhaseDelta(name, ta.get((pool, name)), tb.get((pool, name)), pool)
        for pool, name in dict.fromkeys([*ta, *tb])
    ]
    cmp = Comparison(
        a_label=run_label(ra),
        b_label=run_label(rb),
        a_run=ra,
        b_run=rb,
        settings=settings,
        metrics=_metrics(ra, rb),
        phases=phases,
        notes=notes,
    )
    if cmp.cache_note is not None:
        # Two numbers that count different work; "never" stays a runtime verdict.
        for m in cmp.metrics:
            if m.name in _CACHE_BOUND and m.a is not None and m.b is not None:
                m.caveat = "cache differs"
    _diff_kernels(cmp, ra.kernels, rb.kernels)
    gb_a = [(g.reason, g.location) for g in ra.graph_breaks]
    gb_b = [(g.reason, g.location) for g in rb.graph_breaks]
    cmp.graph_breaks_added, cmp.graph_breaks_gone = _multiset_diff(gb_a, gb_b)
    for rc in [*ra.recompiles, *rb.recompiles]:
        cmp.reasons.setdefault(fr.normalize_reason(rc.reason), rc.reason)
    rc_a = [fr.normalize_reason(r.reason) for r in ra.recompiles]
    rc_b = [fr.normalize_reason(r.reason) for r in rb.recompiles]
    cmp.recompiles_added, cmp.recompiles_gone = _multiset_diff(rc_a, rc_b)
    cmp.ranks = [r for r in (ranks_side(a, "A"), ranks_side(b, "B")) if r is not None]
    return cmp


def split_phases(
    phases: list[PhaseDelta], base: float
) -> tuple[list[PhaseDelta], list[PhaseDelta]]:
    """(phases worth a row, the many short passes), folded as the reports
    fold them: a phase short on both sides of a ``base``-second compile."""
    major = [
        p
        for p in phases
        if p.name in fp.ALWAYS_SHOWN or not fp.is_minor(max(p.a_s or 0.0, p.b_s or 0.0), base)
    ]
    return major, [p for p in phases if p not in major]
