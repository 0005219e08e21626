"""A job's ``TORCH_TRACE`` logs as one session: ranks from the records, ranks
grouped by what they did, the events of a bounded number of ranks kept.

Two passes over the logs, each in parallel on every core (a process pool;
each log streamed, each process reduced to its ``ProcessSummary`` before the
next stage, so memory grows with the summaries, not the logs):

1. every log: each process's rank and signature;
2. the logs of the ranks kept (every rank of a job of up to ``FULL_RANKS``;
   past that the first rank of each group, every group's): their events.

A log is one run of a process (a pid is no name: two hosts, or a container
run twice, give two logs one pid). Its rank is the ``rank`` torch writes in
each record once the process group is up; a log that holds no such record
takes the rank that the same (host, pid) wrote under in another log; one that
has none is a process without a rank (a single-process script's). Logs of one
rank twice are two runs of the job (a re-run into the same folder): told
apart by their clocks, the newest imported unless ``run`` picks another.
"""

from __future__ import annotations

import gc
import os
import time
from collections.abc import Callable, Iterable
from typing import TypeVar

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.job.groups import rank_groups, rank_span
from dlcprof.report.errors import ReportError
from dlcprof.session import Session
from dlcprof.trace_import.process_log import LogSummary, ProcessSummary, read_log
from dlcprof.trace_import.sources import find_logs
from dlcprof.trace_records.log_file import clock_words

# A job of up to this many ranks (its highest rank below it, the job's size as
# ``_missing`` reads it) keeps every rank's events.
FULL_RANKS = 16
_DAMAGE_SHOWN = 3  # logs named in the skipped line before "and N more"

T = TypeVar("T")
Placed = tuple[str, ProcessSummary]  # a log's process and its host


def _read(args: tuple[str, str, str | None]) -> LogSummary:
    return read_log(*args)


def _parallel(fn: Callable[[T], LogSummary], jobs: list[T], workers: int) -> list[LogSummary]:
    """``fn`` over ``jobs`` on ``workers`` processes; inline where no worker would
    get more than one (a pool's start and the events' trip back cost more CPU
    than a log or two: a large job's kept ranks are its groups' first few)."""
    if workers <= 1 or len(jobs) <= workers:
        return [fn(j) for j in jobs]
    from concurrent.futures import ProcessPoolExecutor  # a tenth of the import's start

    # The forked workers' collections then skip this process's objects (every
    # module imported): walking them costs each worker CPU and copies their pages.
    gc.freeze()
    try:
        with ProcessPoolExecutor(max_workers=min(workers, len(jobs))) as pool:
            chunk = max(1, len(jobs) // (workers * 4))
            return list(pool.map(fn, jobs, chunksize=chunk))
    finally:
        gc.unfreeze()


def import_trace(paths: Iterable[str], workers: int | None = None, run: int = -1) -> Session:
    """The session of the logs at ``paths``; ReportError (one line) for paths
    that hold no log. ``run``: which run of the job, when the logs hold several
    (1 the oldest, -1 the newest)."""
    started = time.monotonic()
    workers = workers or os.cpu_count() or 1
    node = read_node(paths, workers)

    def events_of(kept: dict[str, str]) -> list[list[ev.Event]]:
        return [s.process.events for s in read_kept(node, kept, workers) if s.process]

    return job_session([node], events_of, run, started)


@data
class NodeRead:
    """The logs at some paths (a job's, or one node's of it), each read once
    for its summary: what the job's session is reduced from."""

    sources: list[str]  # the paths given
    files: int
    bytes: int
    host_of: dict[str, str]  # each log's host, by its path
    ranked: list[Placed]  # the logs whose records name their rank
    rankless: list[ProcessSummary]  # the logs of processes without a rank anywhere
    # What each damaged log lost (Damage.words), by path: a kept log's from its
    # second read, which checks every payload (the first, only those a summary reads).
    damage: dict[str, list[str]]
    unread: list[str]  # logs not read: a ranked process's records split over two logs


def read_node(paths: Iterable[str], workers: int) -> NodeRead:
    """The logs at ``paths`` read once each, in parallel on ``workers`` processes."""
    given = [str(p) for p in paths]
    logs = find_logs(given)
    first = _parallel(_read, [(path, host, None) for host, path in logs], workers)
    host_of = {path: host for host, path in logs}
    procs = [(host_of[s.source], s.process) for s in first if s.process is not None]
    unread: list[str] = []
    procs = _one_log_a_process(procs, unread)
    ranked = _ranked(procs, unread)
    return NodeRead(
        sources=given,
        files=len(logs),
        bytes=sum(s.bytes for s in first),
        host_of=host_of,
        ranked=ranked,
        rankless=[p for _, p in procs if p.rank is None],
        damage={s.source: s.damage for s in first if s.damage},
        unread=unread,
    )


def read_kept(node: NodeRead, kept: dict[str, str], workers: int) -> list[LogSummary]:
    """The logs ``kept`` names read again for their events, each under its run
    id; each one's damage in ``node`` becomes this read's."""
    jobs = [(path, node.host_of[path], rid) for path, rid in kept.items()]
    read = _parallel(_read, jobs, workers)
    damage = {**node.damage, **{s.source: s.damage for s in read}}
    node.damage = {path: damage[path] for path in node.host_of if damage.get(path)}
    return read


def job_session(
    nodes: list[NodeRead],
    events_of: Callable[[dict[str, str]], list[list[ev.Event]]],
    run: int,
    started: float,
    merged: bool = False,
) -> Session:
    """The job's session from its logs read (one ``NodeRead``, or each node's in
    order, ``merged`` from their summaries); ``events_of`` reads the events of
    the logs the session keeps ({path: run id}), each log's, in that order; ``started``: when
    the reading began, on the monotonic clock."""
    ranked = [hp for n in nodes for hp in n.ranked]
    rankless = [p for n in nodes for p in n.rankless]
    runs = _runs(ranked)
    notes = _runs_said(runs, run)
    chosen = runs[run if run < 0 else run - 1] if runs else []
    summaries = [_summarized(host, p) for host, p in sorted(chosen, key=lambda hp: _rank(hp[1]))]
    notes += _missing(sorted(s.rank for s in summaries))
    kept = _keep(summaries, rankless)
    read = [p for _, p in chosen] + ([] if runs else rankless[:FULL_RANKS])
    notes += (
        _ends(read)
        + _recordless(read)
        + list(dict.fromkeys(w for p in read for w in p.kind))[:_DAMAGE_SHOWN]
    )
    second = events_of(kept)  # before the damage is said: it rereads the kept logs'
    events: list[ev.Event] = [
        ev.TraceImported(
            sources=[s for n in nodes for s in n.sources],
            files=sum(n.files for n in nodes),
            bytes=sum(n.bytes for n in nodes),
            processes=len(chosen) + len(rankless),
            kept=sorted(s.rank for s in summaries if s.run_id is not None),
            # Every node's damage, then every node's logs not read: as one read of all.
            skipped=_skipped(
                [w for n in nodes for ws in n.damage.values() for w in ws]
                + [w for n in nodes for w in n.unread]
            ),
            wall_s=time.monotonic() - started,
            rankless=len(rankless) if runs else 0,
            notes=notes,
            dated=all(p.dated for p in read),
            t=min((p.first_t for p in read), default=ev.now()),
            nodes=len(nodes) if merged else 0,
        )
    ]
    events += [e for log in second for e in log]
    events += summaries
    return Session.from_events(events)


def node_kept(node: NodeRead) -> dict[str, str]:
    """The logs of a node whose events the job's session may keep, by path,
    with their run ids: those ``job_session`` keeps of each of the node's runs
    on its own (a rank's group on the node holds its group in the job, so the
    first rank of each group in the job is the first of its group on its node)."""
    out: dict[str, str] = {}
    for run in _runs(node.ranked) or [[]]:
        ranks = sorted(run, key=lambda hp: hp[1].rank or 0)  # ranked: each has one
        out.update(_keep([_summarized(host, p) for host, p in ranks], node.rankless))
    return out


def _keep(summaries: list[ev.RankSummarized], rankless: list[ProcessSummary]) -> dict[str, str]:
    """The logs whose events the session keeps, by path, with their run ids
    (each kept rank's summary names its run): the ranks ``_kept`` keeps; with no
    rank in any log, every process up to FULL_RANKS (a single-process script's)."""
    kept: dict[str, str] = {}
    kept_ranks = _kept(summaries)
    for s in summaries:
        if s.rank in kept_ranks:
            s.run_id = kept[s.source] = f"rank{s.rank}"
    if not summaries:
        for p in rankless[:FULL_RANKS]:
            kept[p.source] = _unique(f"pid{p.pid}", kept.values())
    return kept


def _unique(name: str, taken: Iterable[str]) -> str:
    """``name``, or ``name_2``, ``name_3``... when taken (two logs of one pid)."""
    used, out, n = set(taken), name, 1
    while out in used:
        n += 1
        out = f"{name}_{n}"
    return out


def _one_log_a_process(procs: list[Placed], unread: list[str]) -> list[Placed]:
    """Each process's log once: logs whose first records match (pid, rank and
    time, to the microsecond) are copies of one process's log (a folder gathered
    twice, a log copied under another name), not two runs; the one that reaches
    furthest is read, the others said in ``unread``."""
    kept: dict[tuple[int, int | None, float], Placed] = {}
    for hp in sorted(procs, key=lambda hp: (-hp[1].clock[1], hp[1].source)):
        p = hp[1]
        first = kept.setdefault((p.pid, p.rank, p.clock[0]), hp)[1]
        if first is not p:
            name, of = os.path.basename(p.source), os.path.basename(first.source)
            unread.append(
                f"{name}: a copy of {of} (one process's log: its pid, rank and first record)"
            )
    read = {id(hp) for hp in kept.values()}
    return [hp for hp in procs if id(hp) in read]


def _ranked(procs: list[Placed], unread: list[str]) -> list[Placed]:
    """The logs with a rank: their records', else the one their (host, pid)
    wrote under in another log. A log without one whose process's ranked log
    is here is that process's records before the rank was known, said in
    ``unread`` (a log is read on its own: two logs of one process are not joined)."""
    known = {(host, p.pid): p for host, p in procs if p.rank is not None}
    out = [(host, p) for host, p in procs if p.rank is not None]
    for host, p in procs:
        twin = known.get((host, p.pid)) if p.rank is None else None
        if twin is None:
            continue
        p.rank = twin.rank
        unread.append(
            f"{os.path.basename(p.source)}: rank {p.rank}'s process again (its first log is read)"
        )
    return out


def _runs(ranked: list[Placed]) -> list[list[Placed]]:
    """The job's runs, oldest first: the logs in the order their first records
    were written, a log of a rank the current run already has starting the next
    (a re-run of the job into the same folder)."""
    runs: list[list[Placed]] = []
    seen: set[int] = set()
    for host, p in sorted(ranked, key=lambda hp: (hp[1].clock[0], hp[1].source)):
        if not runs or p.rank in seen:
            runs.append([])
            seen = set()
        runs[-1].append((host, p))
        seen.add(_rank(p))
    return runs


def _rank(p: ProcessSummary) -> int:
    """A placed log's rank (``_ranked`` keeps the logs that have one)."""
    assert p.rank is not None
    return p.rank


def _runs_said(runs: list[list[Placed]], run: int) -> list[str]:
    """One line naming the runs not imported ([] for one run); ReportError for
    a ``run`` that is none of them."""
    if run == 0 or not -len(runs or [[]]) <= run <= len(runs or [[]]):
        raise ReportError(
            f"--run {run}: the logs hold {text.plural(len(runs), 'run')} of the job "
            f"(1 is the oldest, -1 the newest)"
        )
    if len(runs) < 2:
        return []
    chosen = run % len(runs) if run < 0 else run - 1
    others = "; ".join(
        f"run {k + 1} started {_started(r)} ({rank_span([_rank(p) for _, p in r])})"
        for k, r in enumerate(runs)
        if k != chosen
    )
    return [
        f"these logs hold {len(runs)} runs of the job, told apart by their clocks: imported "
        f"run {chosen + 1}, started {_started(runs[chosen])}; not imported: {others} "
        "(dlcprof import --run N imports run N)"
    ]


def _started(run: list[Placed]) -> str:
    return clock_words(min(p.clock[0] for _, p in run))


def _missing(ranks: list[int]) -> list[str]:
    """The ranks of the job with no log. Its size is not in the logs (torch
    records no world size): read from the highest rank, so a missing rank
    above it would not show."""
    if not ranks:
        return []
    size = ranks[-1] + 1
    missing = sorted(set(range(size)) - set(ranks))
    if not missing:
        return []
    return [
        f"{rank_span(missing)} of {text.count(size)} {'has' if len(missing) == 1 else 'have'} "
        f"no log (the job's size, {text.count(size)}, read from its highest rank: a rank above "
        "it without a log would not show)"
    ]


def _ends(procs: list[ProcessSummary]) -> list[str]:
    """Where each log cut short ends, one line for all."""
    cut = [p for p in procs if p.ends]
    if not cut:
        return []
    said = [f"{_who(p)} ends {p.ends}" for p in cut[:_DAMAGE_SHOWN]]
    more = f"; and {len(cut) - _DAMAGE_SHOWN} more logs" if len(cut) > _DAMAGE_SHOWN else ""
    return ["; ".join(said) + more + " (killed, or still running)"]


def _recordless(procs: list[ProcessSummary]) -> list[str]:
    """The compiles records name with no compile record or span of them, one line
    for all: tlparse lists them (a log of artifacts alone, or cut short)."""
    named = [p for p in procs if p.recordless]
    if not named:
        return []
    several = len(named) > 1 or len(named[0].recordless) > 1
    said = [
        f"{_who(p)} names compile{'s' if len(p.recordless) > 1 else ''} " + ", ".join(p.recordless)
        for p in named[:_DAMAGE_SHOWN]
    ]
    more = f"; and {len(named) - _DAMAGE_SHOWN} more logs" if len(named) > _DAMAGE_SHOWN else ""
    them = "them" if several else "it"
    return [
        "; ".join(said) + more + f" but holds no compile record or span of {them}: "
        f"no time or cache state of {them} here"
    ]


def _who(p: ProcessSummary) -> str:
    return f"rank {p.rank}'s log" if p.rank is not None else os.path.basename(p.source)


def _summarized(host: str, p: ProcessSummary) -> ev.RankSummarized:
    sig = p.signature
    assert p.rank is not None
    return ev.RankSummarized(
        rank=p.rank,
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
        t=p.last_t,
    )


def _kept(summaries: list[ev.RankSummarized]) -> set[int]:
    """The ranks whose events the session keeps: all in a job of up to
    FULL_RANKS, else the first of each group (every group's: a divergence check
    compares them all). The job's size is read from its highest rank, so a node
    that holds a rank above FULL_RANKS knows the job keeps groups' first ranks
    (``node_kept``)."""
    if not summaries or max(s.rank for s in summaries) < FULL_RANKS:
        return {s.rank for s in summaries}
    return {g.ranks[0] for g in rank_groups(Session.from_events(list(summaries)))}


def _skipped(damage: list[str]) -> str:
    """What damaged logs lost, in one line ("" when nothing)."""
    if not damage:
        return ""
    more = f"; and {len(damage) - _DAMAGE_SHOWN} more" if len(damage) > _DAMAGE_SHOWN else ""
    return "skipped " + "; ".join(damage[:_DAMAGE_SHOWN]) + more
