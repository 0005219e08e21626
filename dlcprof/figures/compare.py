"""Two runs side by side: what changed between them (``dlcprof compare``).

``compare`` diffs the latest run of each session (or runs chosen by index or
run id) into one figure, the ``Comparison``: compile time per phase, kernels
added / removed / changed (``figures.compare_kernels``), graph breaks and
recompiles added or gone, and the headline numbers (``figures.compare_metrics``),
worded there and here. Every number comes from the other figures
(speedup, break-even and the noise verdict from ``figures.benchmark``); the
terminal table (``dlcprof.tables.compare_table``) and the HTML page
(``dlcprof.report.html.render_compare_html``) only place them.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from dataclasses import field
from typing import Any

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import benchmark as fb
from dlcprof.figures import cache_misses as fcm
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.figures.advice import cache_rules as cacher
from dlcprof.figures.advice.model import predicted_text
from dlcprof.figures.check.baseline import beyond_noise
from dlcprof.figures.compare_kernels import KernelDiff, diff_kernels
from dlcprof.figures.compare_metrics import MetricDelta, metrics
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import rank_runs as franks
from dlcprof.figures.runs import run_label
from dlcprof.session import Run, Session


class CompareError(ValueError):
    """A run to compare that a session does not have (one line, for the CLI)."""


@data
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
        """ "worse" (slower), "better" or "same": a phase both ran, beyond what two
        runs differ by; one only one side ran, beyond a few milliseconds."""
        d = self.delta
        if self.a_s is not None and self.b_s is not None and not beyond_noise(self.a_s, self.b_s):
            return "same"
        return "worse" if d > 0.005 else "better" if d < -0.005 else "same"


@data(frozen=True)
class HeadlineRow:
    """A row of the headline table, worded: what both renderers place."""

    name: str
    a: str
    b: str
    delta: str
    verdict: str  # "better" | "worse" | "same" | ""


@data
class RanksSide:
    """One side's session ran many ranks: its divergence checks, as its report says them."""

    side: str  # "A" | "B"
    summary: str  # fdiv.verdict
    divergences: list[fdiv.Divergence]


def ranks_side(session: Session, side: str) -> RanksSide | None:
    if not franks.rank_runs(session):
        return None
    found = fdiv.divergences(session)
    return RanksSide(side, fdiv.verdict(session, found), found)


@data
class Comparison:
    a_label: str
    b_label: str
    a_run: Run
    b_run: Run
    settings: list[tuple[str, Any, Any]]  # only the keys that differ
    metrics: list[MetricDelta]
    phases: list[PhaseDelta]
    kernels: KernelDiff = field(default_factory=KernelDiff)
    graph_breaks_added: list[tuple[str, str]] = field(default_factory=list)  # (reason, location)
    graph_breaks_gone: list[tuple[str, str]] = field(default_factory=list)
    recompiles_added: list[str] = field(default_factory=list)  # reasons, compile ids stripped
    recompiles_gone: list[str] = field(default_factory=list)
    # A normalized reason -> the reason as recorded (first seen), to word its newest guard.
    reasons: dict[str, str] = field(default_factory=dict)
    # Said above the tables: which run of a session of several was taken.
    notes: list[str] = field(default_factory=list)
    # The sides whose session ran many ranks (torchrun): their divergences.
    ranks: list[RanksSide] = field(default_factory=list)

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

    @property
    def cache_misses(self) -> list[str]:
        """Each compile of B that missed torch's caches, why, against A's lookups."""
        return [
            f"B's compile {m.compile_id} missed ({', '.join(m.layers)}): {'; '.join(m.causes)}"
            for m in fcm.misses(self.b_run, self.a_run)
        ]

    @property
    def cache_advice(self) -> str | None:
        """What would have made B's misses hit where a setting that differs from
        A's (the job that filled the cache) explains them."""
        item = cacher.fill_setting(self.b_run, self.a_run)
        if item is None:
            return None
        return (
            f"advice: {item.title} ({'; '.join(item.evidence)}): "
            f"predicted {predicted_text(item.predicted)}"
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
        metrics=metrics(ra, rb),
        phases=phases,
        notes=notes,
    )
    if cmp.cache_note is not None:
        # Two numbers that count different work; "never" stays a runtime verdict.
        for m in cmp.metrics:
            if m.name in _CACHE_BOUND and m.a is not None and m.b is not None:
                m.caveat = "cache differs"
    cmp.kernels = diff_kernels(ra, rb)
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
