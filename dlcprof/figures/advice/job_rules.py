"""The rules read from a distributed job's ranks: a rank that recompiled alone
(``figures/job/divergence.py``'s compile-id check) while its peers waited for it
at their next collective; the ranks of one host building kernels on more
workers than it has cores (``figures/job/hosts.py``). Listed before the rules
of one process: on a job it is the cost every rank pays."""

from __future__ import annotations

import re

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures.advice.compile_rules import passed_tensor, size_mismatch
from dlcprof.figures.advice.model import Advice, Prediction
from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job import hosts as fhosts
from dlcprof.figures.job.blocked import blocked
from dlcprof.figures.job.divergence import Divergence, divergences, frame_words, solo_ids
from dlcprof.figures.job.rank_runs import by_rank, rank_names
from dlcprof.session import Compile, Run, Session

_SIZES = re.compile(r"expected (\d+), actual (\d+)")


def _seconds(run: Run, c: Compile) -> float:
    """A frame's compile with its backward's (training compiles both)."""
    bwd = run.compiles.get(ev.backward_id(c.compile_id))
    return (c.wall_s or 0.0) + (bwd.wall_s or 0.0 if bwd is not None else 0.0)


def _reason(run: Run, c: Compile) -> str:
    reason = c.record.recompile_reason if c.record else None
    found = (rc.reason for rc in run.recompiles if rc.compile_id == c.compile_id)
    return reason or next(found, "")


def _fix(run: Run, c: Compile, reason: str) -> tuple[str, str]:
    """(the change, its snippet) for what made the rank recompile."""
    dim = size_mismatch(reason)
    if dim is not None:
        name, index = dim
        # What the program's call passed, not the compiled code's name for it.
        call = next((rc for rc in run.recompiles if rc.compile_id == c.compile_id), None)
        passed = passed_tensor(call, reason)
        mark = f"torch._dynamo.mark_dynamic({passed}, {index})" if passed else ""
        sizes = _SIZES.search(reason)
        expected, actual = (int(x) for x in sizes.groups()) if sizes else (None, None)
        static = not any(d.compile_id == c.compile_id for d in run.dynamic_dims)
        why = (
            "it compiled static again (torch made no dim dynamic: the program compiles "
            "with dynamic=False, as `accelerate launch` does without --dynamo_use_dynamic, "
            "or automatic dynamic shapes off), so each new size is a new compile; "
            if static and expected not in (0, 1)
            else ""
        )
        if index == 0 and actual is not None and expected is not None and actual < expected:
            return (
                f"this rank's batch came {actual} where every earlier one was {expected}: a "
                f"partial last batch; {why}give every rank full batches: drop_last=True on "
                f"the DataLoader (or the DistributedSampler), or pad the last batch to "
                f"{expected}; or mark the dim dynamic so one compile serves both sizes",
                f"DataLoader(dataset, batch_size={expected}, drop_last=True)"
                + (f"\n# or, before the compiled call: {mark}" if mark else ""),
            )
        return (
            f"{why}feed every rank the same shapes: pad {name}'s dim {index} to a fixed "
            f"size, or mark it dynamic so one compile serves every size",
            mark,
        )
    if "grad_mode" in reason:
        return (
            "the frame ran under another grad mode (an eval under torch.no_grad() on "
            "this rank alone) and compiled again: evaluate the uncompiled module "
            "(ddp_model.module) or run the eval on every rank, so no rank waits on a "
            "compile the others skip",
            "",
        )
    return (
        "make this rank's inputs match the other ranks' (the guard above says what differed)",
        "",
    )


def _waited(session: Session, found: list[Divergence], rank: int, paid: float) -> str:
    """A peer's wait at the next collective (DDP's gradient all-reduce, FSDP's
    reduce-scatter, as the peer wrapped its model): the Ranks table's estimate,
    or at most the recompiles' seconds when there is none."""
    wait = blocked(session, solo_ids(found), rank)
    peer = by_rank(session).get(rank)
    wrapper = fddp.wrapped(peer) if peer is not None else "distributed"
    which = {"DDP": " (DDP's gradient all-reduce)"}.get(wrapper, "")
    if wrapper.startswith("FSDP") and " " not in wrapper:
        which = f" ({wrapper}'s gradient reduce-scatter)"
    head = f"rank {rank} waited for it at the next collective{which}: "
    if wait.s is not None:
        return head + wait.said
    return head + f"up to {text.secs(paid)}, its recompiles' seconds ({text.na(wait.words)})"


def _solo(every: list[Divergence], rank: int, run: Run) -> list[Divergence]:
    """``rank``'s recompiles that no other rank made."""
    return [
        d
        for d in every
        if d.check == "compile_ids"
        and d.rank == rank
        and d.subject in run.compiles
        and not d.subject.endswith("/0")
    ]


def solo_recompiles(session: Session, advised: Run, calls: int) -> Advice | None:
    """A rank's recompiles that no other rank made: their seconds (forward and
    backward) are what its peers waited for. The advised rank's own, else the
    first other rank's: the job's cost, said whichever rank's advice is read (the
    rank that compiled the most, which a warm cache leaves to chance); only the
    advised rank's own has a predicted saving of its compile seconds."""
    own = advised.process.rank if advised.process is not None else None
    if own is None:
        return None
    every = divergences(session)
    ranks = by_rank(session)
    for rank in (own, *sorted(r for r in ranks if r != own)):
        run = advised if rank == own else ranks[rank]
        found = _solo(every, rank, run)
        if found:
            break
    else:
        return None
    compiles = [run.compiles[d.subject] for d in found]
    yours = [c for d, c in zip(found, compiles, strict=True) if not d.in_torch] or compiles
    main = yours[0]
    reason = _reason(run, main)
    paid = sum(_seconds(run, c) for c in compiles)
    others = sorted(r for r in ranks if r != rank)
    peers = rank_names(others)
    change, snippet = _fix(run, main, reason)
    file = str(main.record.metrics.get("co_filename") or "") if main.record else ""
    line = main.record.metrics.get("co_firstlineno") if main.record else None
    each = [
        f"{c.compile_id} {frame_words(c)}: {text.secs(c.wall_s)}"
        + (
            f" + its backward {text.secs(bwd.wall_s)}"
            if (bwd := run.compiles.get(ev.backward_id(c.compile_id))) is not None
            else ""
        )
        for c in compiles
    ]
    total = run.compile_wall_s
    return Advice(
        rule="rank-recompile",
        title=f"rank {rank} recompiled alone ({text.secs(paid)}) while {peers} waited",
        change=change,
        evidence=[
            f"rank {rank} recompiled {main.compile_id}, {frame_words(main)}: "
            f"{text.short(reason, 200)}",
            f"its solo recompiles: {'; '.join(each)}",
            *(_waited(session, every, r, paid) for r in others),
        ],
        cost=(
            "drop_last leaves the partial batch's samples out of the epoch; padding computes "
            "on the pad; a dynamic dim's kernels may run slower than static ones"
        ),
        predicted=Prediction(
            "compile",
            total,
            total - paid,
            f"rank {rank}'s solo recompiles no longer happen",
        )
        if rank == own and 0 < paid < total
        else None,
        snippet=snippet,
        where=f"{file}:{line}" if text.users_code(file) and line is not None else "",
    )


def compile_workers(session: Session, run: Run, calls: int) -> Advice | None:
    """This process's host runs more kernel-build workers, summed over its
    processes, than it has cores: each process's compile_threads made to fit."""
    host = run.process.host if run.process is not None else None
    h = next((h for h in fhosts.host_workers(session) if h.host == host), None)
    if h is None or not h.oversubscribed or run not in h.runs:
        return None
    n = h.threads
    return Advice(
        rule="compile-workers",
        title=f"build kernels on {n} worker{'s' if n > 1 else ''} per process on host {h.host}",
        change=(
            f"set TORCHINDUCTOR_COMPILE_THREADS={n} in the job's environment (or "
            f"torch._inductor.config.compile_threads = {n} before the first compile): "
            f"{len(h.runs)} processes × {n} = {len(h.runs) * n} build workers fit "
            f"{text.plural(h.cores or 0, 'core')}"
        ),
        evidence=[
            fhosts.workers_line(h),
            f"this process compiled for {text.secs(run.compile_wall_s)}",
        ],
        cost="a process that compiles alone builds its kernels on fewer workers",
        snippet=f"torch._inductor.config.compile_threads = {n}  # or the environment variable",
    )
