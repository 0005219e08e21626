"""Many ranks of one job (``dlcprof run -- torchrun …``, issue 22): each rank's
compiles side by side in the Ranks table, and what its columns cannot say, in
notes under it. The checks that find ranks disagreeing are
``figures/job/divergence.py``.

A rank is an attached process (a run with ``process``) that carries a rank.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import graph_breaks as fgb
from dlcprof.session import Compile, Run, Session

BLOCKED_WHY = (
    "not measured: the collectives wait inside torch's C++ (DDP's reducer, the "
    "process group), which dlcprof does not time"
)
# Collective ops as Inductor's wrapper calls them (extern calls, in order).
_COLLECTIVE_RE = re.compile(r"^torch\.ops\.(_c10d_functional|c10d_functional|c10d)\.(\w+)")


def rank_runs(session: Session) -> list[Run]:
    """Attached runs that carry a rank, by rank then pid."""
    runs = [
        r for r in session.runs.values() if r.process is not None and r.process.rank is not None
    ]
    return sorted(runs, key=lambda r: (rank_of(r), r.process.pid if r.process else 0))


def rank_of(run: Run) -> int:
    assert run.process is not None and run.process.rank is not None
    return run.process.rank


def by_rank(session: Session) -> dict[int, Run]:
    """One run per rank (the lowest pid: a forked child keeps its parent's RANK)."""
    out: dict[int, Run] = {}
    for r in rank_runs(session):
        out.setdefault(rank_of(r), r)
    return out


def forward_compiles(run: Run) -> list[Compile]:
    """Frame compiles torch finished (forward records), in the order they finished."""
    done = [c for c in run.compiles.values() if c.record is not None and not c.is_backward]
    return sorted(done, key=lambda c: c.record.t if c.record else 0.0)


def graph_count(run: Run, compile_id: str | None = None) -> int:
    """Inductor graphs (one wrapper module each: a forward, a backward, each
    DDPOptimizer piece), counted by their first launch; all of the run's, or
    those of one frame compile (its backward's included)."""
    keys = None if compile_id is None else {compile_id, ev.backward_id(compile_id)}
    return sum(
        1
        for c in run.compiles.values()
        if keys is None or c.compile_id in keys
        for k in c.kernels
        if k.order == 0
    )


@dataclass
class RankRow:
    """One rank's row of the Ranks table."""

    rank: int
    run_id: str
    host: str
    pid: int
    status: str  # Run.status: running / ok / error / crashed / ended / cancelled
    compiles: int  # frame compiles (forward)
    recompiles: int
    graph_breaks: int
    compile_s: float | None  # torch's wall time of its compiles, forward and backward
    cache_hits: int
    cache_misses: int
    graphs: int  # Inductor graphs (DDPOptimizer pieces count here)
    blocked_s: float | None  # time blocked in the first collective after a compile
    blocked_why: str | None  # why None
    local_rank: int | None = None
    world_size: int | None = None
    cache_dir: str | None = None  # Inductor's cache folder, when the probe said


def rank_rows(session: Session) -> list[RankRow]:
    rows = []
    for run in rank_runs(session):
        p = run.process
        assert p is not None and p.rank is not None
        compiles = forward_compiles(run)
        caches = Counter(c.cache for c in compiles)
        rows.append(
            RankRow(
                rank=p.rank,
                run_id=run.run_id,
                host=p.host,
                pid=p.pid,
                status=run.status,
                compiles=len(compiles),
                recompiles=len(run.recompiles),
                graph_breaks=len(fgb.breaks(run)),
                compile_s=run.compile_wall_s if run.compiles else None,
                cache_hits=caches["hit"],
                cache_misses=caches["miss"],
                graphs=graph_count(run),
                blocked_s=None,
                blocked_why=BLOCKED_WHY,
                local_rank=p.local_rank,
                world_size=p.world_size,
                cache_dir=p.cache_dir,
            )
        )
    return rows


COLUMNS = (
    "rank",
    "host",
    "pid",
    "status",
    "compiles",
    "recompiles",
    "graph breaks",
    "compile",
    "cache hit/miss",
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
        text.count(row.graphs),
        text.secs(row.blocked_s),  # the why: blocked_note, once under the table
    ]


def silent_ranks(session: Session) -> list[int]:
    """Ranks of the world (its size as the ranks said it) that sent nothing: a
    process is silent until it compiles. Judged once the program ended."""
    rows = rank_rows(session)
    sizes = {r.world_size for r in rows if r.world_size is not None}
    if session.program_exit is None or len(sizes) != 1:
        return []
    seen = {r.rank for r in rows}
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
    return [n for n in (blocked_note(rows), silent_note(session), collectives_line(session)) if n]


def blocked_note(rows: list[RankRow]) -> str | None:
    """The one reason the blocked column reads n/a, said once under the table."""
    whys = {r.blocked_why for r in rows if r.blocked_s is None and r.blocked_why}
    return f"blocked: {text.na(whys.pop())}" if len(whys) == 1 else None


def rank_names(ranks: list[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(str(r) for r in ranks[:-1]) + f" and {ranks[-1]}"


def collective_ops(run: Run, compile_id: str) -> dict[str, list[str]]:
    """The collective ops each graph of a frame compile calls, in order, by graph
    kind ("forward", "backward", "inference"): its backward's included."""
    out: dict[str, list[str]] = {}
    for key in (compile_id, ev.backward_id(compile_id)):
        c = run.compiles.get(key)
        for k in c.kernels if c else []:
            m = _COLLECTIVE_RE.match(k.name)
            if m:
                out.setdefault(k.graph or "graph", []).append(f"{m.group(1)}.{m.group(2)}")
    return out


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
            "gradient allreduce runs in its hooks, outside the graphs)"
        )
    return "collectives in the compiled graphs: " + ", ".join(
        f"{op} ×{n}" for op, n in counted.most_common()
    )
