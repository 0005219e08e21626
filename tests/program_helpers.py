"""Events of an attached program's process, built by hand for the figure tests."""

from __future__ import annotations

from dlcprof import events as ev


def compile_finished(
    cid: str, start: float, wall: float, reason: str | None = None
) -> ev.CompileFinished:
    """A forward compile of process ``pid7``: ``wall`` seconds from ``start``."""
    return ev.CompileFinished(
        run_id="pid7",
        compile_id=cid,
        wall_s=wall,
        start_t=start,
        is_backward=False,
        recompile_reason=reason,
        fail_type=None,
        fail_reason=None,
        graph_op_count=3,
        guard_count=2,
        cache="miss",
        metrics={},
        t=start + wall,
    )


def program_started(rank: int | None = None) -> list[ev.Event]:
    """``python train.py`` started (pid 7), and its process attached at t=1001."""
    return [
        ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=7, t=1000.0),
        ev.ProcessAttached(
            run_id="pid7",
            pid=7,
            ppid=1,
            argv=["train.py"],
            host="h",
            started_t=999.0,
            torch_version="2.13",
            python_version="3.11",
            rank=rank,
            t=1001.0,
        ),
    ]
