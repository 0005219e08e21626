"""A run against its own run in a baseline session: what it has that the
baseline had not (a graph break by the user's file:line and reason, a
recompile by its frame and guard, a newly compiled frame; never by compile
id) and a compile-time regression beyond noise.

Runs pair by rank (a torchrun job), else by run id (a test of the pytest
plugin's session), else in order (the processes of a program). Compile times
compare in one measure: CPU seconds when both runs have them, else wall."""

from __future__ import annotations

from dlcprof import text
from dlcprof.figures.check.budgets import COMPILE_TOLERANCE, Violation, placed
from dlcprof.figures.check.findings import CompileTime, compile_time, findings_of
from dlcprof.session import Run, Session

# Below this the difference is no regression however large the ratio: a
# program that compiles one tiny graph moves by tens of ms run to run.
FLOOR_S = 0.25

NEW = {
    "new_graph_breaks": ("graph_breaks", "new"),
    "new_recompiles": ("recompiles", "new"),
    "new_frames": ("compiles", "newly"),
}


def pairs(session: Session, baseline: Session) -> list[tuple[Run, Run | None]]:
    """Each run of ``session`` with its baseline run (None: the baseline had none)."""
    base = list(baseline.runs.values())
    by_rank = {r.process.rank: r for r in base if r.process and r.process.rank is not None}
    # Tests keep their ids from run to run; a program's processes (pids) do not.
    by_id = any(run_id in baseline.runs for run_id in session.runs)
    out: list[tuple[Run, Run | None]] = []
    for i, run in enumerate(session.runs.values()):
        rank = run.process.rank if run.process else None
        if rank is not None and by_rank:
            out.append((run, by_rank.get(rank)))
        elif by_id:
            out.append((run, baseline.runs.get(run.run_id)))
        else:
            out.append((run, base[i] if i < len(base) else None))
    return out


def times(run: Run, base: Run) -> tuple[CompileTime, CompileTime]:
    """Both compile times in one measure: CPU when both have it."""
    now, then = compile_time(run), compile_time(base)
    if now.measure != then.measure:
        now, then = compile_time(run, "wall"), compile_time(base, "wall")
    return now, then


def beyond_noise(a: float, b: float, tolerance: float = COMPILE_TOLERANCE) -> bool:
    """Whether two compile times of one command differ by more than two runs of
    it do with nothing changed: by more than ``tolerance`` and FLOOR_S."""
    low, high = sorted((a, b))
    return high > low * (1 + tolerance) and high - low > FLOOR_S


def regressed(now: CompileTime, then: CompileTime, tolerance: float) -> bool:
    return now.seconds > then.seconds and beyond_noise(now.seconds, then.seconds, tolerance)


def change_words(now: CompileTime, then: CompileTime, tolerance: float) -> str:
    """ "compile time 14.2 s CPU vs 10.9 s CPU in the baseline (+30%, over the 25% allowed)"."""
    change = (now.seconds / then.seconds - 1) if then.seconds > 0 else None
    pct = (
        (f"+{text.pct(change)}" if change >= 0 else f"-{text.pct(-change)}")
        if change is not None
        else text.NA
    )
    if regressed(now, then, tolerance):
        verdict = f"over the {text.pct(tolerance)} allowed"
    elif change is not None and change < 0:
        verdict = "a decrease, no regression"
    else:
        verdict = f"within the {text.pct(tolerance)} allowed"
    return f"compile time {now.words()} vs {then.words()} in the baseline ({pct}, {verdict})"


def against(run: Run, base: Run, tolerance: float, label: str) -> list[Violation]:
    """What ``run`` has that ``base`` had not, and its compile-time regression."""
    now, then = findings_of(run), findings_of(base)
    out = []
    for check, (kind, adverb) in NEW.items():
        known = {f.key for f in then[kind]}
        new = []
        for f in now[kind]:
            if f.key not in known:
                known.add(f.key)
                new.append(f)
        out += placed(check, new, run, label, f"{adverb} ", "")
    t_now, t_then = times(run, base)
    if regressed(t_now, t_then, tolerance):
        out.append(
            Violation("compile_regression", "", change_words(t_now, t_then, tolerance), label)
        )
    return out
