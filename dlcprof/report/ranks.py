"""A multi-rank job's section of a report (dlcprof run -- torchrun …, dlcprof
import): the ranks grouped by what they did, the Ranks table, every rank's
graph breaks by kind, then each divergence among the ranks with its evidence.
Figures and words come from figures/job/ranks.py and figures/job/divergence.py."""

from __future__ import annotations

from dlcprof.data import data
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import ranks as fr
from dlcprof.figures.job.rank_runs import by_rank
from dlcprof.session import Session


@data
class RanksSection:
    rows: list[fr.RankRow]
    divergences: list[fdiv.Divergence]
    summary: str  # fdiv.verdict
    notes: list[str]  # fr.notes: under the table (the blocked column's why, silent
    # ranks, what the collectives check compared)
    groups: list[fgroups.RankGroup]  # the ranks grouped by what they did, outliers first
    groups_summary: str  # fgroups.summary
    break_kinds: list[fgb.Kind]  # every rank's graph breaks, grouped by torch's id


def ranks_section(session: Session, now: float | None = None) -> RanksSection | None:
    """None for a session without ranks: its reports stay as they were."""
    found = fdiv.divergences(session, now)
    rows = fr.rank_rows(session, found)
    if not rows:
        return None
    groups = fgroups.rank_groups(session)
    return RanksSection(
        rows,
        found,
        fdiv.verdict(session, found),
        fr.notes(session, rows),
        groups,
        fgroups.summary(groups),
        fgb.kinds(list(by_rank(session).values())),
    )
