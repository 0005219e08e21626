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


def node_events(
    rank: int,
    trace_dir: str,
    pid: int = 7,
    skew: float = 0.0,
    world_size: int = 2,
    backend: str | None = "gloo",
) -> list[ev.Event]:
    """One node of a ``world_size``-rank job, as ``dlcprof run --report -- torchrun``
    records it: its program, one process of rank ``rank`` that joined the process
    group at true time 1010 (``skew``: this host's clock is that far ahead;
    ``backend`` None: no rendezvous recorded), compiled 0/0 at 1020 and wrote
    its raw trace under torch's per-rank name in ``trace_dir``; its first
    compiled call ran at 1022."""
    run = f"pid{pid}"
    trace = f"{trace_dir}/{ev.RANK_TRACE_PREFIX}{rank}_x{pid}.log"
    with open(trace, "w") as f:
        f.write(f'V1201 10:00:00.000000 {pid} torch/x.py:1] {{"rank": {rank}}}\n')
    joined = (
        [
            ev.ProcessGroupJoined(
                run_id=run,
                rank=rank,
                world_size=world_size,
                backend=backend,
                waited=backend == "gloo",
                t=1010.0 + skew,
            )
        ]
        if backend
        else []
    )
    finished = compile_finished("0/0", 1020.0 + skew, 2.0)
    finished.run_id = run
    return [
        ev.ProgramStarted(
            argv=["torchrun", f"--node-rank={rank}"], cwd="/", pid=pid - 1, t=1000.0 + skew
        ),
        ev.ProcessAttached(
            run_id=run,
            pid=pid,
            ppid=pid - 1,
            argv=["train.py"],
            host=f"host{rank}",
            started_t=1001.0 + skew,
            torch_version="2.13",
            python_version="3.11",
            rank=rank,
            local_rank=0,
            world_size=world_size,
            t=1021.0 + skew,
        ),
        *joined,
        finished,
        ev.GraphCallsTimed(
            run_id=run,
            graphs={"0/0": {"calls": 3, "inside_s": 0.3, "first_t": 1022.0 + skew, "first_s": 0.1}},
            t=1029.0 + skew,
        ),
        ev.TraceSaved(path=trace, records=1, bytes=40, run_id=run, t=1030.0 + skew),
        ev.RunFinished(run_id=run, status="ok", wall_s=29.0, t=1030.0 + skew),
        ev.ProgramExited(
            returncode=0,
            signal=None,
            wall_s=31.0,
            message="the program exited with status 0",
            t=1031.0 + skew,
        ),
    ]
