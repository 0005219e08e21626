"""The rules read from what went wrong: a compile that raised into the program,
and the recompile limit hit. Each comes first: until it is fixed, the program
dies (or a frame runs eager) whatever else is changed. Neither has a predicted
saving: what the crashed program or the eager calls would have cost compiled
was never measured."""

from __future__ import annotations

from dlcprof import text
from dlcprof.figures import outcome as fout
from dlcprof.figures import recompiles as fr
from dlcprof.figures.advice.model import Advice
from dlcprof.session import Run, Session

_YOUR_CHANGE = "the fix is a change to your code: dlcprof cannot make it for you"


def compile_raised(session: Session, run: Run, calls: int) -> Advice | None:
    e = run.compile_raised
    if e is None:
        return None
    at = text.short_path(e.location) or "an unknown line"
    evidence = [f"torch: {text.short(e.error, 200)}"]
    evidence += [f"Dynamo broke inside {text.short_path(e.inside)}"] if e.inside else []
    return Advice(
        rule="compile-raised",
        title=f"the compile raised at {at}: the program got the error",
        change="; ".join(fout.RAISED_FIXES),
        evidence=evidence + [f"process {run.status}"],
        cost="the disabled call, or the code around the inner model, runs eagerly",
        snippet="@torch.compiler.disable  # on the function called at this line",
        where=e.location,
        try_why=_YOUR_CHANGE,
    )


def recompile_limit(session: Session, run: Run, calls: int) -> Advice | None:
    hit = run.recompile_limit
    if hit is None:
        return None
    return Advice(
        rule="recompile-limit",
        title=f"recompile limit hit in {hit.function}: its new inputs run eager",
        change=fr.LIMIT_FIX,
        evidence=[fr.limit_line(hit), fr.eager_cost(run)],
        cost="a kernel with a symbolic size may run slower than one specialized to a size; "
        "a higher limit compiles once per new input",
        snippet="torch._dynamo.config.recompile_limit = 16  # or mark the changing dim dynamic",
        where=hit.location,
        try_why=_YOUR_CHANGE,
    )
