"""What a gate could not judge, each a violation with its reason, never a pass:
a program of which dlcprof saw no compile, a test that compiled nothing it
could see, a process that began compiling but sent no compile record, a budget
whose figure a probe could not read, and the budgets a compile that raised
left unjudged (what came after it never ran)."""

from __future__ import annotations

from dlcprof import text
from dlcprof.figures import outcome as fout
from dlcprof.figures.check.budgets import COUNTED, TITLES, Budgets, Count, Violation
from dlcprof.figures.job.program import no_compile_seen
from dlcprof.session import Run, Session

# The probes each budget's figure comes from (worker/probes): without the
# structured trace there are no compile records, breaks or recompiles.
NEEDS = {check: ("trace",) for check in (*COUNTED, "compile_s")}


def unseen(session: Session) -> Violation:
    """The program ran, and no process of it sent a compile."""
    return Violation("unseen", "", f"dlcprof saw no compile: {no_compile_seen(session)}", "")


def compiled_nothing(budgets: Budgets) -> str | None:
    """Why a test (the pytest plugin's run) of which dlcprof saw no compile
    judged nothing; None when its budget asks for that very nothing
    (``compiles=0``)."""
    if budgets.compiles == 0 or not budgets.checks():
        return None
    return (
        "dlcprof saw no compile: the test compiled nothing it could see (no torch.compile "
        "call ran in it, its model was compiled before it with reset=False and hit the "
        "cache, or it compiled in another process), so its budgets judged nothing"
    )


def unjudged(
    run: Run, budgets: Budgets, counts: list[Count], label: str, attached: bool
) -> list[Violation]:
    """The budgets ``run`` leaves unjudged, each with why; ``attached``: a
    process of a program, which sends nothing before its first compile (a rank
    that never compiled says so at its end, and is judged on its nothing); not
    ``attached``: a test, seen in its own process from its start."""
    began = bool(run.compiles or run.open_phases)
    nothing = None if attached or began else compiled_nothing(budgets)
    if nothing is not None:
        return [Violation("unseen", "", nothing, label)]
    if attached and began and not any(c.record is not None for c in run.compiles.values()):
        why = (
            "dlcprof saw no compile: the process began compiling, but no compile record "
            "arrived (it ended inside its first compile, or its events were lost)"
        )
        return [Violation("unseen", "", why, label)]
    out = []
    over = {c.check for c in counts if c.over}
    raised = run.compile_raised
    for check in budgets.checks():
        blind = [f"{p}: {run.unavailable[p]}" for p in NEEDS[check] if p in run.unavailable]
        if blind:
            why = f"{TITLES[check]} not judged: dlcprof could not read them ({'; '.join(blind)})"
            out.append(Violation(check, "", why, label))
        elif raised is not None and check not in over:
            why = (
                f"{TITLES[check]} not judged past the compile that raised "
                f"({fout.COMPILE_CRASHED}: {text.short(raised.error, 120)}): "
                "what it would have compiled never ran"
            )
            out.append(Violation(check, raised.location, why, label))
    return out
