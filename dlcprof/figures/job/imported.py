"""What a session ``dlcprof import`` read from ``TORCH_TRACE`` logs says about
itself: how much it read, which ranks' events it keeps, what damaged logs
lost, and what a log cannot hold (n/a, with why). Every view places these
lines under the same words."""

from __future__ import annotations

from dlcprof import text
from dlcprof.figures.job.groups import rank_groups, rank_span
from dlcprof.session import Session

# What a TORCH_TRACE log does not hold: each n/a, and why.
NOT_IN_LOGS = "eager timing, speedup, kernel times, hot frames and device use: " + text.na(
    "a TORCH_TRACE log holds what torch compiled, not how the program ran"
)


def import_lines(session: Session) -> list[str]:
    """The lines that say where an imported session came from; [] for any other."""
    e = session.imported
    if e is None:
        return []
    ranks = len(session.rank_summaries)
    who = (
        f"{text.count(ranks)} rank{'s' if ranks > 1 else ''} in "
        f"{text.plural(len(rank_groups(session)), 'group')}"
        if ranks
        else text.plural(e.processes, "process", "processes")
    )
    where = (
        f" on {text.plural(e.nodes, 'node')} (the slowest node's read, then the merge)"
        if e.nodes
        else ""
    )
    lines = [
        f"imported from {text.plural(e.files, 'TORCH_TRACE log')} ({text.nbytes(e.bytes)}) "
        f"of {who}, read in {text.secs(e.wall_s)}{where}"
    ]
    if ranks and len(e.kept) < ranks:
        lines.append(
            f"events kept for {rank_span(e.kept)} (the first rank of each group); "
            f"the other {text.count(ranks - len(e.kept))} ranks are summaries (their group's "
            "figures), and trace.json shows the kept ranks only"
        )
    if e.rankless:
        lines.append(
            f"{text.plural(e.rankless, 'process', 'processes')} without a rank in "
            "the records (not a rank of the job: a launcher, a helper) not shown"
        )
    return [*lines, *damage_lines(session), NOT_IN_LOGS]


def damage_lines(session: Session) -> list[str]:
    """What the logs lack: records skipped, where logs cut short end, the job's
    runs not imported, its ranks without a log ([] for a live session)."""
    e = session.imported
    if e is None:
        return []
    return ([e.skipped] if e.skipped else []) + e.notes
