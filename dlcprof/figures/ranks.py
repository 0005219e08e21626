"""STUB of helper "ranks"'s figures (the integrator keeps that version): the
agreed interface, computed simply, so the TUI can be built against it."""

from __future__ import annotations

from dataclasses import dataclass

from dlcprof.session import Run, Session

NOT_MEASURED = "not measured (stub)"


def rank_runs(session: Session) -> list[Run]:
    """Attached runs that carry a rank, by rank then pid."""
    runs = [r for r in session.runs.values() if r.process is not None]
    ranked = [r for r in runs if r.process.rank is not None]  # type: ignore[union-attr]
    return sorted(ranked, key=lambda r: (r.process.rank, r.process.pid))  # type: ignore[union-attr]


@dataclass
class RankRow:
    rank: int
    run_id: str
    host: str
    pid: int
    status: str
    compiles: int
    recompiles: int
    graph_breaks: int
    compile_s: float | None
    cache_hits: int
    cache_misses: int
    graphs: int
    blocked_s: float | None
    blocked_why: str | None


def rank_rows(session: Session) -> list[RankRow]:
    out = []
    for r in rank_runs(session):
        p = r.process
        assert p is not None and p.rank is not None
        done = [c for c in r.compiles.values() if c.finished]
        out.append(
            RankRow(
                rank=p.rank,
                run_id=r.run_id,
                host=p.host,
                pid=p.pid,
                status=r.status,
                compiles=len(done),
                recompiles=len(r.recompiles),
                graph_breaks=len(r.graph_breaks),
                compile_s=r.compile_wall_s if done else None,
                cache_hits=sum(c.cache == "hit" for c in done),
                cache_misses=sum(c.cache == "miss" for c in done),
                graphs=len(done),
                blocked_s=None,
                blocked_why=NOT_MEASURED,
            )
        )
    return out


@dataclass
class Divergence:
    check: str
    rank: int
    alarm: bool
    headline: str
    evidence: list[str]


def divergences(session: Session, now: float | None = None) -> list[Divergence]:
    """compile_ids only: a rank with a compile id the others lack."""
    runs = rank_runs(session)
    if len(runs) < 2:
        return []
    ids = {r.process.rank: set(r.compiles) for r in runs}  # type: ignore[union-attr]
    out = []
    for rank, mine in ids.items():
        others = [s for k, s in ids.items() if k != rank]
        extra = sorted(mine - set.union(*others))
        if extra:
            out.append(
                Divergence(
                    "compile_ids",
                    rank,
                    True,
                    f"rank {rank} compiled {extra[0]}, the other ranks did not",
                    [f"rank {k}: {', '.join(sorted(s)) or 'none'}" for k, s in ids.items()],
                )
            )
    return out
