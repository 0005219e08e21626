"""What the DDP job whose rank 1 steps eagerly shows, run live
(tests/e2e/test_rank_faults.py, slow) or recorded (tests/unit/test_ddp.py)."""

from __future__ import annotations

from dlcprof.figures import outcome as fout
from dlcprof.figures.job import ddp as fddp
from dlcprof.session import Run, Session


def eager_and_compiled(session: Session) -> tuple[Run, Run]:
    """Rank 1 never compiled and rank 0 did, each with its DDP settings:
    (rank 1's run, rank 0's)."""
    runs = {r.process.rank: r for r in session.runs.values() if r.process}
    assert set(runs) == {0, 1}
    eager, compiled = runs[1], runs[0]
    assert not eager.compiles and eager.status == "ok" and eager.process is not None
    assert eager.process.world_size == 2
    assert fout.status(eager) == fout.NEVER_COMPILED
    assert compiled.compiles and fout.status(compiled) == "ok"
    # Its settings are read when it reports, at its end: no split, nothing compiled.
    # Both built their DDP before the probes came in: the bootstrap marked it.
    assert fddp.lines(eager) == [
        "DDP compile settings: optimize_ddp ddp_optimizer, compiled autograd off"
    ]
    assert fddp.lines(compiled)[0].startswith("DDP compile settings: ")
    return eager, compiled
