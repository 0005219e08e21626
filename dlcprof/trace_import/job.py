"""A job's ``TORCH_TRACE`` logs as one session: ranks from the records, ranks
grouped by what they did, the events of a bounded number of ranks kept.

Two passes over the logs, each in parallel on every core (a process pool;
each log streamed, each process reduced to its ``ProcessSummary`` before the
next stage, so memory grows with the summaries, not the logs):

1. every log: each process's rank and signature;
2. the logs of the ranks kept (every rank up to ``FULL_RANKS``; past that the
   first rank of each group, every group's): their events.

A rank is the ``rank`` torch writes in each record once the process group is
up; a process whose log holds no such record takes the rank that the same
(host, pid) wrote under in another log; one that has none is a process
without a rank (a single-process script's).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor
from typing import TypeVar

from dlcprof import events as ev
from dlcprof.figures.job.groups import rank_groups
from dlcprof.report.errors import ReportError
from dlcprof.session import Session
from dlcprof.trace_import.process_log import LogSummary, ProcessSummary, read_log
from dlcprof.trace_import.sources import find_logs

FULL_RANKS = 16  # up to this many ranks, the session keeps every rank's events
_DAMAGE_SHOWN = 3  # logs named in the skipped line before "and N more"

T = TypeVar("T")


def _read(args: tuple[str, str, dict[int, str] | None]) -> LogSummary:
    return read_log(*args)


def _parallel(fn: Callable[[T], LogSummary], jobs: list[T], workers: int) -> list[LogSummary]:
    """``fn`` over ``jobs`` on ``workers`` processes (inline for one)."""
    if workers <= 1 or len(jobs) <= 1:
        return [fn(j) for j in jobs]
    with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
        chunk = max(1, len(jobs) // (workers * 4))
        return list(pool.map(fn, jobs, chunksize=chunk))


def import_trace(paths: Iterable[str], workers: int | None = None) -> Session:
    """The session of the logs at ``paths``; ReportError (one line) for paths
    that hold no log, or logs that are not one job's."""
    started = time.monotonic()
    given = [str(p) for p in paths]
    logs = find_logs(given)
    workers = workers or os.cpu_count() or 1
    first = _parallel(_read, [(path, host, None) for host, path in logs], workers)
    host_of = {path: host for host, path in logs}
    procs = [(host_of[s.source], p) for s in first for p in s.processes]
    unread: list[str] = []
    ranks = _ranks(procs, unread)
    summaries = [_summarized(host, p, rank) for rank, (host, p) in sorted(ranks.items())]
    kept_ranks = _kept(summaries)
    kept: dict[str, dict[int, str]] = {}
    for s in summaries:
        if s.rank in kept_ranks:
            s.run_id = f"rank{s.rank}"
            kept.setdefault(s.source, {})[s.pid] = s.run_id
    if not ranks:  # no rank in any log: every process (a single-process script's)
        for _, p in procs[:FULL_RANKS]:
            kept.setdefault(p.source, {})[p.pid] = f"pid{p.pid}"
    second = _parallel(_read, [(path, host_of[path], pids) for path, pids in kept.items()], workers)
    events: list[ev.Event] = [
        ev.TraceImported(
            sources=given,
            files=len(logs),
            bytes=sum(s.bytes for s in first),
            processes=len(procs),
            kept=sorted(kept_ranks),
            skipped=_skipped([w for s in first for w in s.damage] + unread),
            wall_s=time.monotonic() - started,
            rankless=sum(p.rank is None for _, p in procs) if ranks else 0,
            t=min((p.first_t for _, p in procs if p.first_t is not None), default=ev.now()),
        )
    ]
    events += [e for s in second for p in s.processes for e in p.events]
    events += summaries
    return Session.from_events(events)


def _ranks(
    procs: list[tuple[str, ProcessSummary]], unread: list[str]
) -> dict[int, tuple[str, ProcessSummary]]:
    """Each rank's process: its records' rank, else the rank its (host, pid)
        wrote under in another log. A rank two processes claim is two jobs' logs;
        one process's records in a second log are said in ``unread`` (a log is read
    on its own: two logs of one process are not joined)."""
    known = {(host, p.pid): p.rank for host, p in procs if p.rank is not None}
    out: dict[int, tuple[str, ProcessSummary]] = {}
    # A log with the rank in its records first: it holds the rank's work after
    # init_process_group; a log of the same process without one is said unread.
    for host, p in sorted(procs, key=lambda hp: hp[1].rank is None):
        rank = p.rank = p.rank if p.rank is not None else known.get((host, p.pid))
        if rank is None:
            continue
        if rank in out and out[rank][1].pid != p.pid:
            raise ReportError(
                f"{out[rank][1].source} and {p.source} both hold rank {rank}: logs of "
                "different jobs (or one job's folder twice); import one job's logs"
            )
        if rank in out:  # one process's records in two logs: the first one is read
            name = os.path.basename(p.source)
            unread.append(f"{name}: rank {rank}'s process again (its first log is read)")
            continue
        out[rank] = (host, p)
    return out


def _summarized(host: str, p: ProcessSummary, rank: int) -> ev.RankSummarized:
    sig = p.signature
    return ev.RankSummarized(
        rank=rank,
        host=host,
        pid=p.pid,
        source=p.source,
        compiles=list(sig.compiles),
        guard_failures=list(sig.guard_failures),
        cache=list(sig.cache),
        graph_ops=list(sig.graph_ops),
        breaks=list(sig.breaks),
        failures=list(sig.failures),
        compile_s=p.compile_s,
        t=p.last_t if p.last_t is not None else ev.now(),
    )


def _kept(summaries: list[ev.RankSummarized]) -> set[int]:
    """The ranks whose events the session keeps: all up to FULL_RANKS, else the
    first of each group (every group's: a divergence check compares them all)."""
    if len(summaries) <= FULL_RANKS:
        return {s.rank for s in summaries}
    return {g.ranks[0] for g in rank_groups(Session.from_events(list(summaries)))}


def _skipped(damage: list[str]) -> str:
    """What damaged logs lost, in one line ("" when nothing)."""
    if not damage:
        return ""
    more = f"; and {len(damage) - _DAMAGE_SHOWN} more" if len(damage) > _DAMAGE_SHOWN else ""
    return "skipped " + "; ".join(damage[:_DAMAGE_SHOWN]) + more
