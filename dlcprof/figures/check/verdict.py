"""A session judged: every run against the budgets (and its baseline run), and
the verdict in words (``said``), the one shape every writer places."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.check import baseline as fb
from dlcprof.figures.check import places
from dlcprof.figures.check.budgets import TITLES, Budgets, Count, Violation, judge
from dlcprof.figures.check.findings import MEASURE_SAID, CompileTime, compile_time
from dlcprof.figures.check.unjudged import unjudged, unseen
from dlcprof.session import Run, Session, process_label


@data
class RunVerdict:
    label: str  # "" when the session has one run
    counts: list[Count]
    time: CompileTime
    violations: list[Violation]
    baseline: str = ""  # the compile time against the baseline's, in words; "" without one
    unmatched: bool = False  # a baseline was given, but it has no run for this one


@data
class Verdict:
    runs: list[RunVerdict]
    checks: list[str]  # what was judged: the budgets set, then the baseline's checks
    measure: str  # the compile-time figures' measure: "cpu" | "wall" | "both"
    repeats: int = 1  # the command's runs this one was the least compile time of
    unseen: Violation | None = None  # a program of which no process was seen compiling

    @property
    def violations(self) -> list[Violation]:
        return [
            *([self.unseen] if self.unseen else []),
            *(v for r in self.runs for v in r.violations),
        ]

    @property
    def passed(self) -> bool:
        return not self.violations


def label(run: Run, alone: bool) -> str:
    """What a violation names its run by: nothing when it is the only one."""
    return "" if alone else (process_label(run.process) or run.name)


def judge_session(
    session: Session,
    budgets: Budgets,
    baseline: Session | None = None,
    runs: list[Run] | None = None,
    repeats: int = 1,
    attached: bool = False,
    root: Path | None = None,
) -> Verdict:
    """``runs`` (default: every run of ``session``), each against ``budgets`` and
    its own run in ``baseline``; ``repeats``: the session is the one of that
    many runs of the command with the least compile time; ``attached``: the
    session is a program's (``dlcprof check -- CMD``), whose processes dlcprof
    sees only from their first compile: none seen is a violation, not a pass.
    Each violation's file is relative to ``root`` (default: the repository's)."""
    root = places.repository_root() if root is None else root
    runs = list(session.runs.values()) if runs is None else runs
    paired = dict((r.run_id, b) for r, b in fb.pairs(session, baseline)) if baseline else {}
    out = []
    measures = set()  # of every compile-time figure shown
    for run in runs:
        name = label(run, len(runs) == 1)
        base = paired.get(run.run_id)
        counts, violations = judge(run, budgets, name, base)
        violations += unjudged(run, budgets, counts, name, attached)
        rv = RunVerdict(name, counts, compile_time(run), violations)
        if baseline is not None and base is None:
            rv.unmatched = True
        if base is None or any(c.check == "compile_s" for c in counts):
            measures.add(rv.time.measure)
        if base is not None:
            rv.violations += fb.against(run, base, budgets.tolerance, name)
            now, then = fb.times(run, base)
            rv.baseline = fb.change_words(now, then, budgets.tolerance)
            measures.add(now.measure)
        rv.violations = [
            replace(x, where=places.relative_where(x.where, root)) for x in rv.violations
        ]
        out.append(rv)
    checks = budgets.checks() + ([*fb.NEW, "compile_regression"] if baseline is not None else [])
    measure = "both" if len(measures) > 1 else next(iter(measures), "cpu")
    unseen_one = unseen(session) if attached and not runs else None
    return Verdict(out, checks, measure, repeats, unseen_one)


def run_lines(v: Verdict) -> list[str]:
    """One line per run: its counts against the budgets, its compile time
    (against the baseline's)."""
    out = []
    for r in v.runs:
        figures = [c.words(r.time) for c in r.counts]
        if r.baseline:
            figures.append(r.baseline)
        elif not any(c.check == "compile_s" for c in r.counts):
            figures.append(f"{TITLES['compile_s']} {r.time.words()}")
        if r.unmatched:
            figures.append("no run in the baseline to compare with: budgets only")
        out.append((f"{r.label}: " if r.label else "") + " · ".join(figures))
    return out


def summary(v: Verdict, gate: str = "dlcprof check", unit: str = "process") -> str:
    """ "dlcprof check: FAILED, 3 violations (graph breaks: 2; ...)" or "passed";
    ``unit``: what a run is to the gate (a process, a test)."""
    judged = (
        f"{text.plural(len(v.runs), unit, unit + ('es' if unit.endswith('s') else 's'))} judged"
    )
    what = ", ".join(TITLES[c] for c in v.checks) or "nothing budgeted"
    if v.passed:
        return f"{gate}: passed ({judged} on {what})"
    by_check: dict[str, int] = {}
    for x in v.violations:
        by_check[x.check] = by_check.get(x.check, 0) + 1
    parts = "; ".join(f"{TITLES[c]}: {n}" for c, n in by_check.items())
    failed = text.plural(len(v.violations), "violation")
    return f"{gate}: FAILED, {failed} ({parts}; {judged})"


def measure_line(v: Verdict) -> str:
    least = f"; the least of {v.repeats} runs of the command" if v.repeats > 1 else ""
    return MEASURE_SAID[v.measure] + least


@data(frozen=True)
class Said:
    """A verdict in words. Every writer (``dlcprof check``'s lines, the pytest
    plugin's failure, GitHub's step summary, JUnit XML) places these, styled
    its own way, in this one order: the summary, each violation, each run's
    figures, the measure note."""

    summary: str
    violations: list[Violation]
    runs: list[str]  # one line per run (``run_lines``)
    measure: str  # what the compile-time figures measure (``measure_line``)
    passed: bool

    def lines(self) -> list[str]:
        """The verdict as plain lines, in the one order."""
        return [self.summary, *(v.line() for v in self.violations), *self.runs, self.measure]


def said(v: Verdict, gate: str = "dlcprof check", unit: str = "process") -> Said:
    """``v`` in words; ``gate`` and ``unit`` as ``summary`` takes them."""
    return Said(summary(v, gate, unit), v.violations, run_lines(v), measure_line(v), v.passed)
