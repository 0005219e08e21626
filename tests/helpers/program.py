"""Events of an attached program's process, built by hand for the figure tests."""

from __future__ import annotations

import dataclasses

from dlcprof import events as ev
from dlcprof.session import Session


def compile_finished(
    cid: str,
    start: float,
    wall: float,
    reason: str | None = None,
    run_id: str = "pid7",
    cache: str | None = "miss",
    frame: tuple[str, str, int] = ("forward", "/home/u/train.py", 24),
) -> ev.CompileFinished:
    """A forward compile of process ``run_id``: ``wall`` seconds from ``start``,
    of the function ``frame`` (name, file, first line)."""
    name, file, line = frame
    return ev.CompileFinished(
        run_id=run_id,
        compile_id=cid,
        wall_s=wall,
        start_t=start,
        is_backward=False,
        recompile_reason=reason,
        fail_type=None,
        fail_reason=None,
        graph_op_count=3,
        guard_count=2,
        cache=cache,
        metrics={"co_name": name, "co_filename": file, "co_firstlineno": line},
        t=start + wall,
    )


def process_attached(pid: int, **fields) -> ev.ProcessAttached:
    """Process ``pid`` of ``train.py`` attached (run id "pid<pid>"); ``fields``
    override any of the event's."""
    base: dict = dict(
        run_id=f"pid{pid}",
        pid=pid,
        ppid=1,
        argv=["train.py"],
        host="h",
        started_t=None,
        torch_version="2.13",
        python_version="3.11",
    )
    return ev.ProcessAttached(**{**base, **fields})


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


def program_session(exit_code: int | None = 0, eager_wall: float | None = None) -> Session:
    """``python train.py`` that compiled 0/0 (30 s) and, after its first compiled
    call, 0/1 (10 s), then exited with ``exit_code`` at t=1200 (None: still
    running); ``eager_wall``: an eager run of it beside, that long."""
    events: list[ev.Event] = [
        *program_started(rank=1),
        compile_finished("0/0", 1002.0, 30.0),
        # The first compiled call ran after the first compile only.
        ev.GraphCallsTimed(
            run_id="pid7",
            graphs={
                "0/0": {"calls": 1200, "inside_s": 2.4, "first_t": 1032.5, "first_s": 0.01},
            },
            t=1100.0,
        ),
        compile_finished("0/1", 1100.0, 10.0),
    ]
    if exit_code is not None:
        events.append(
            ev.ProgramExited(
                returncode=exit_code,
                signal=None,
                wall_s=200.0,
                message="the program exited",
                t=1200.0,
            )
        )
    if eager_wall is not None:
        events += [
            ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=8, eager=True, t=1300.0),
            ev.ProgramExited(
                returncode=0,
                signal=None,
                wall_s=eager_wall,
                message="done",
                eager=True,
                t=1300.0 + eager_wall,
            ),
        ]
    return Session.from_events(events)


# --- the ranks of a torchrun job ------------------------------------------------

RANK_PID = 100  # rank N is pid 100 + N, its run "pid10N"
# Seconds of each stage of a built compile, innermost stage first to last:
# Dynamo traces, then AOTAutograd, Inductor, and Inductor's C++ build.
STAGE_S = {"dynamo": 2.0, "aot": 1.0, "inductor": 3.0, "build": 4.0}


def rank_run_id(rank: int) -> str:
    return f"pid{RANK_PID + rank}"


def rank_attached(
    rank: int,
    world_size: int = 2,
    host: str = "h",
    cache_dir: str | None = "/tmp/cache",
    t: float = 1001.0,
) -> ev.ProcessAttached:
    """Rank ``rank`` of ``train.py`` under torchrun attached at ``t``."""
    return process_attached(
        RANK_PID + rank,
        ppid=99,
        host=host,
        started_t=t - 0.5,
        rank=rank,
        local_rank=rank,
        world_size=world_size,
        cache_dir=cache_dir,
        t=t,
    )


def rank_compile(rank: int, cid: str, start: float, wall: float, **kw) -> ev.CompileFinished:
    """``compile_finished`` on rank ``rank``'s process."""
    return compile_finished(cid, start, wall, run_id=rank_run_id(rank), **kw)


def rank_kernel(
    rank: int, cid: str, name: str, order: int, graph: str = "forward"
) -> ev.KernelGenerated:
    """A kernel (or an extern call, e.g. ``torch.ops._c10d_functional.all_reduce_.default``)
    of compile ``cid`` on rank ``rank``: order 0 opens a new Inductor graph."""
    return ev.KernelGenerated(
        run_id=rank_run_id(rank),
        compile_id=cid,
        name=name,
        kind="extern" if name.startswith("torch.ops.") else "pointwise",
        fused_ops=[],
        source="",
        source_lines=[],
        order=order,
        graph=graph,
        t=1002.0,
    )


def rank_finished(rank: int, t: float, status: str = "ok") -> ev.RunFinished:
    return ev.RunFinished(run_id=rank_run_id(rank), status=status, wall_s=t - 1001.0, t=t)


def ddp_job(ranks: int = 2, finished: bool = True, **attached) -> list[ev.Event]:
    """A clean ``torchrun`` job: each rank compiles 0/0 (a forward and a backward
    graph, a cache miss) at the same moment, and ends."""
    out: list[ev.Event] = [ev.ProgramStarted(argv=["torchrun", "train.py"], cwd="/", pid=99)]
    for r in range(ranks):
        out.append(rank_attached(r, ranks, **attached))
    for r in range(ranks):
        out += [
            rank_kernel(r, "0/0", "cpp_fused_gelu_0", 0),
            rank_kernel(r, "0/0", "cpp_fused_gelu_backward_0", 0, "backward"),
            rank_compile(r, "0/0", 1002.0 + 0.1 * r, 6.0),
        ]
    if finished:
        out += [rank_finished(r, 1030.0) for r in range(ranks)]
    return out


def rank_compile_phases(
    rank: int, cid: str, start: float, reason: str | None = None, cache: str = "miss"
) -> list[ev.Event]:
    """A compile of rank ``rank`` from ``start``: its phases nested as torch
    nests them (each stage STAGE_S long, innermost), then its record."""
    run_id, d = rank_run_id(rank), STAGE_S
    total = sum(d.values())
    spans = [  # (name, start offset, seconds), in the order they end
        ("bytecode_tracing", 0.0, d["dynamo"]),
        ("compile_file", d["dynamo"] + d["aot"] + d["inductor"], d["build"]),
        ("inductor_compile", d["dynamo"] + d["aot"], d["inductor"] + d["build"]),
        ("backend_compile", d["dynamo"], total - d["dynamo"]),
        ("entire_frame_compile", 0.0, total),
    ]
    out: list[ev.Event] = []
    if reason is not None:
        out.append(ev.RecompileTriggered(run_id=run_id, compile_id=cid, reason=reason, t=start))
    out += [
        ev.PhaseEnded(
            run_id=run_id,
            compile_id=cid,
            name=name,
            thread=1,
            start_t=start + at,
            duration_s=secs,
            t=start + at + secs,
        )
        for name, at, secs in spans
    ]
    out.append(rank_compile(rank, cid, start, total, reason=reason, cache=cache))
    return out


def ranked_program(world_size: int = 2, diverge_rank: int | None = None) -> list[ev.Event]:
    """``torchrun --nproc-per-node N train.py`` from t=1000 to its exit at 1040:
    each rank compiles 0/0 (rank N starts N s later), ``diverge_rank`` alone
    recompiles 0/1 at t=1020, as tests/programs/ddp_train.py --diverge-rank
    does, and every rank ends at 1039."""
    out: list[ev.Event] = [
        ev.ProgramStarted(
            argv=["torchrun", "--nproc-per-node", str(world_size), "train.py"],
            cwd="/",
            pid=99,
            t=1000.0,
        )
    ]
    out += [rank_attached(r, world_size, t=1001.0 + r * 0.1) for r in range(world_size)]
    for r in range(world_size):
        out += rank_compile_phases(r, "0/0", 1002.0 + r)
    if diverge_rank is not None:
        why = "tensor 'x' size mismatch at index 0. expected 8, actual 6"
        out += rank_compile_phases(diverge_rank, "0/1", 1020.0, reason=why)
    out += [rank_finished(r, 1039.0) for r in range(world_size)]
    out.append(
        ev.ProgramExited(returncode=0, signal=None, wall_s=40.0, message="exited 0", t=1040.0)
    )
    return out


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
    return [
        ev.ProgramStarted(
            argv=["torchrun", f"--node-rank={rank}"], cwd="/", pid=pid - 1, t=1000.0 + skew
        ),
        dataclasses.replace(
            rank_attached(rank, world_size, host=f"host{rank}", cache_dir=None, t=1021.0 + skew),
            run_id=run,
            pid=pid,
            ppid=pid - 1,
            local_rank=0,
            started_t=1001.0 + skew,
        ),
        *joined,
        compile_finished("0/0", 1020.0 + skew, 2.0, run_id=run),
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
