"""Which runs of a session are a job's ranks, and what the job's other figures
read of each: its frame compiles, its Inductor graphs, the collectives they
call. The Ranks table is ``figures/job/ranks.py``; ranks grouped by what they
did, ``groups.py``; the checks that find them disagreeing, ``divergence.py``.

A rank is an attached process (a run with ``process``) that carries a rank.
"""

from __future__ import annotations

import re

from dlcprof import events as ev
from dlcprof.session import Compile, Run, Session

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
