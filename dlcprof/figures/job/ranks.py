"""The Ranks table of a job's ranks (``dlcprof run -- torchrun …``, ``dlcprof
import``): each rank's compiles side by side, and what its columns cannot say,
in notes under it. Its counts are each rank's ``RankRecord``
(``figures/job/groups.py``), the groups table's too; which runs are ranks is
``rank_runs.py``; the checks that find ranks disagreeing, ``divergence.py``.
"""

from __future__ import annotations

from collections import Counter

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.job import hosts as fhosts
from dlcprof.figures.job.blocked import blocked, blocked_words
from dlcprof.figures.job.divergence import Divergence, solo_ids
from dlcprof.figures.job.groups import (
    CACHE_COLUMN,
    records,
    run_record,
    shown_runs,
    shown_words,
)
from dlcprof.figures.job.rank_runs import (
    by_rank,
    collective_ops,
    forward_compiles,
    graph_count,
    rank_names,
    rank_runs,
)
from dlcprof.session import Session


@data
class RankRow:
    """One rank's row of the Ranks table."""

    rank: int
    run_id: str
    host: str
    pid: int
    status: str  # Run.status: running / ok / error / crashed / ended / cancelled
    compiles: int  # frame compiles (forward)
    recompiles: int
    graph_breaks: int  # distinct breaks (reason and place)
    compile_s: float | None  # torch's wall time of its compiles, forward and backward
    cache_hits: int  # of every Inductor graph, forward and backward
    cache_misses: int
    graphs: int | None  # Inductor graphs (DDPOptimizer pieces count here); None: no kernels read
    blocked_s: float | None  # estimated wait on a peer's solo recompile (Blocked)
    blocked_why: str | None  # how it was estimated, or why None
    local_rank: int | None = None
    world_size: int | None = None
    cache_dir: str | None = None  # Inductor's cache folder, when the probe said


def rank_rows(session: Session, found: list[Divergence]) -> list[RankRow]:
    """The ranks whose events the session holds, by rank (past ``ROWS_SHOWN``,
    that many, the smallest groups' first). ``found``: the job's divergences
    (divergence.divergences), whose solo recompiles give the blocked column its
    estimate."""
    solo = solo_ids(found)
    record = records(session)
    rows = []
    for run in shown_runs(session):
        p = run.process
        assert p is not None and p.rank is not None
        m = record[p.rank] if record[p.rank].run_id == run.run_id else run_record(p.rank, run)
        hits, misses = m.cache_counts
        wait = blocked(session, solo, p.rank)
        rows.append(
            RankRow(
                rank=p.rank,
                run_id=run.run_id,
                host=p.host,
                pid=p.pid,
                status=run.status,
                compiles=m.compiles,
                recompiles=m.recompiles,
                graph_breaks=m.graph_breaks,
                compile_s=m.compile_s,
                cache_hits=hits,
                cache_misses=misses,
                graphs=None if "kernels" in run.unavailable else graph_count(run),
                blocked_s=wait.s,
                blocked_why=wait.words,
                local_rank=p.local_rank,
                world_size=p.world_size,
                cache_dir=p.cache_dir,
            )
        )
    return rows


def rows_note(session: Session, rows: list[RankRow]) -> str | None:
    """Which ranks the table lists when it cannot list them all."""
    ranks = len(records(session))
    if len(rows) >= ranks:
        return None
    return (
        f"rows: {text.count(len(rows))} of {text.count(ranks)} ranks, {shown_words(session)}; "
        "every rank is counted in the groups above"
    )


COLUMNS = (
    "rank",
    "host",
    "pid",
    "status",
    "compiles",
    "recompiles",
    "graph breaks",
    "compile",
    CACHE_COLUMN,
    "graphs",
    "blocked",
)


def row_cells(row: RankRow) -> list[str]:
    """A row as the tables show it (COLUMNS order)."""
    return [
        str(row.rank),
        row.host,
        str(row.pid),
        row.status,
        text.count(row.compiles),
        text.count(row.recompiles),
        text.count(row.graph_breaks),
        text.secs(row.compile_s, "no compile"),
        f"{row.cache_hits}/{row.cache_misses}",
        text.count(row.graphs) if row.graphs is not None else text.na("no kernels"),
        # An estimate, marked so; how, or why n/a: blocked_notes, under the table.
        text.secs(row.blocked_s) if row.blocked_s is None else f"≈{text.secs(row.blocked_s)}",
    ]


def silent_ranks(session: Session) -> list[int]:
    """Ranks of the world (its size as the ranks said it) that sent nothing: a
    process is silent until it compiles. Judged once the program ended."""
    procs = [r.process for r in rank_runs(session) if r.process is not None]
    sizes = {p.world_size for p in procs if p.world_size is not None}
    if session.program_exit is None or len(sizes) != 1:
        return []
    seen = {p.rank for p in procs}
    return [r for r in range(sizes.pop()) if r not in seen]


def silent_note(session: Session) -> str | None:
    silent = silent_ranks(session)
    if not silent:
        return None
    world = len(silent) + len(by_rank(session))
    who = rank_names(silent)
    return (
        f"{who} of {world} sent nothing: {'it' if len(silent) == 1 else 'they'} compiled nothing "
        "(or ran under another dlcprof, on another node)"
    )


def notes(session: Session, rows: list[RankRow]) -> list[str]:
    """What the table's columns cannot say, under it."""
    said = (rows_note(session, rows), silent_note(session), collectives_line(session))
    rest = [n for n in said if n]
    return blocked_notes(rows) + rest + fhosts.worker_lines(session)


def blocked_notes(rows: list[RankRow]) -> list[str]:
    """How the blocked column's figures were estimated, or why they read n/a: a
    reason every rank shares said once, the others rank by rank."""
    whys = {r.blocked_why for r in rows}
    if len(whys) == 1 and rows[0].blocked_s is None and rows[0].blocked_why:
        return [f"blocked: {text.na(rows[0].blocked_why)}"]
    return [f"blocked, rank {r.rank}: {blocked_words(r.blocked_s, r.blocked_why)}" for r in rows]


def collectives_line(session: Session) -> str:
    """What the collectives check compared, said even when nothing differs."""
    ranks = by_rank(session)
    blind = next(
        (r.unavailable["kernels"] for r in ranks.values() if "kernels" in r.unavailable), None
    )
    if blind is not None:
        return f"collectives: {text.na(blind)}"
    counted = Counter(
        op
        for run in ranks.values()
        for c in forward_compiles(run)
        for ops in collective_ops(run, c.compile_id).values()
        for op in ops
    )
    if not counted:
        return (
            "collectives: no collectives in the compiled graphs, nothing to compare (DDP's "
            "all-reduce and FSDP's all-gather and reduce-scatter run in their hooks, "
            "outside the graphs)"
        )
    return "collectives in the compiled graphs: " + ", ".join(
        f"{op} ×{n}" for op, n in counted.most_common()
    )
