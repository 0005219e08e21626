"""Events of an attached program's process, built by hand for the figure tests."""

from __future__ import annotations

from dlcprof import events as ev


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


def rank_attached(
    rank: int, world_size: int = 2, host: str = "h", cache_dir: str | None = "/tmp/cache"
) -> ev.ProcessAttached:
    """Rank ``rank`` of a torchrun job attached (pid 100 + rank, run id "pid<pid>")."""
    pid = 100 + rank
    return ev.ProcessAttached(
        run_id=f"pid{pid}",
        pid=pid,
        ppid=99,
        argv=["train.py"],
        host=host,
        started_t=999.0,
        torch_version="2.13",
        python_version="3.11",
        rank=rank,
        local_rank=rank,
        world_size=world_size,
        cache_dir=cache_dir,
        t=1001.0,
    )


def rank_compile(rank: int, cid: str, start: float, wall: float, **kw) -> ev.CompileFinished:
    """``compile_finished`` on rank ``rank``'s process."""
    return compile_finished(cid, start, wall, run_id=f"pid{100 + rank}", **kw)


def rank_kernel(
    rank: int, cid: str, name: str, order: int, graph: str = "forward"
) -> ev.KernelGenerated:
    """A kernel (or an extern call, e.g. ``torch.ops._c10d_functional.all_reduce_.default``)
    of compile ``cid`` on rank ``rank``: order 0 opens a new Inductor graph."""
    return ev.KernelGenerated(
        run_id=f"pid{100 + rank}",
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
    return ev.RunFinished(run_id=f"pid{100 + rank}", status=status, wall_s=t - 1001.0, t=t)


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
