"""One ``TORCH_TRACE`` log read through the shared parser (``TraceDispatcher``,
the one the live probe feeds), in a worker process of the import's pool.

A log is one run: torch opens one per process, and a pid is no name (two
hosts, or a container run twice, give two logs one pid). Its rank is the
``rank`` torch puts in each record once the process group is up, so the
records it wrote before ``init_process_group`` are its rank's too. What comes
back is compact: the log's ``RankSignature`` and counts (``ProcessSummary``),
where the log ends, and its events only when the import keeps them
(``read_log``'s ``run_id``), its kernels read from Inductor's output code as
the live probe reads them (but for one thing: with no torch to ask which names
are aten ops, a kernel whose fused ops torch gave only in its name, a lazily
compiled backward's, has the ones its graph holds).

What a log does not hold is not made up: a compile whose
``compilation_metrics`` record is missing (an older torch, a log cut after its
span ended) takes its time from torch's chromium span of it; one still open
when the log ends is named as where the log ends; phases outside any compile
(torch's ``compile_file`` of a module, whose compile id is None) are no compile.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import field

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.figures.job.groups import RankSignature, signature
from dlcprof.session import Session
from dlcprof.trace_import.log_kind import LogKind
from dlcprof.trace_records.dispatcher import SUMMARY_PAYLOADS, TraceDispatcher
from dlcprof.trace_records.kernels import KernelCollector
from dlcprof.trace_records.log_file import CUT, Damage, read_records
from dlcprof.trace_records.payloads import compile_wall_s

# Events stamped with torch's own clock (a tuple, not a union: one per event).
_PHASES = (ev.PhaseStarted, ev.PhaseEnded)


class _Stamped:
    """Collects a log's events, each stamped with the time its record was
    written (the dispatcher stamps phases from torch's own clock; the rest
    would carry the time of the import). Phases with no compile id before any
    compile began are no compile's: dropped."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self.clock = 0.0  # the current record's, on the glog clock (read_log places it)
        self.compiling = False

    def emit(self, event: ev.Event) -> None:
        if isinstance(event, _PHASES):
            if event.compile_id is None and not self.compiling:
                return
            self.compiling = self.compiling or event.compile_id is not None
        else:
            event.t = self.clock
        self.events.append(event)


@data
class ProcessSummary:
    """What one log's process did, reduced to what the import compares."""

    source: str
    pid: int
    rank: int | None
    signature: RankSignature
    compile_s: float
    first_t: float  # on the epoch clock, else (not dated) on the glog clock
    last_t: float
    dated: bool  # a record placed the log's clock on the epoch
    # The glog prefix's clock (seconds into the writer's year, local time) of the
    # log's first and last records: what tells two runs of one job apart.
    clock: tuple[float, float]
    ends: str  # where the log ends, when that is inside a compile or a record ("")
    kind: list[str]  # what kind of log, when not torch.compile's (LogKind.words)
    # Compile ids records name with no compile record or span of them (a log of
    # artifacts alone, or cut in a compile without phases): tlparse lists them.
    recordless: list[str] = field(default_factory=list)
    events: list[ev.Event] = field(default_factory=list)  # only when kept


@data
class LogSummary:
    source: str
    bytes: int
    process: ProcessSummary | None  # None: no readable record
    damage: list[str]  # Damage.words


def read_log(path: str, host: str, run_id: str | None = None) -> LogSummary:
    """The log at ``path`` as one run; its events come back under ``run_id``
    when given (None: its summary only)."""
    damage = Damage()
    sink = _Stamped()
    rid = run_id or "log"
    # Kernels only for a log kept: the summary compares none.
    kernels = KernelCollector(sink, rid) if run_id is not None else None
    pid = rank = offset = None
    # A record is written at the time its glog prefix says, placed on the epoch
    # once a record has dated the log (the import's own clock is no compile's).
    dispatcher = TraceDispatcher(sink, rid, kernels, now=lambda: sink.clock + (offset or 0.0))
    first_clock = 0.0
    torch_version = ""
    kind = LogKind()
    reads = dispatcher.reads
    # (prefix, frame id, frame compile id) of the records the dispatcher skips.
    named: set[tuple[str, object, object]] = set()
    # A log not kept is read without the payloads its summary does not read (a
    # cache lookup's key, Inductor's code and graphs: most of a log's bytes),
    # neither decoded nor checked against their md5; a log kept is read whole,
    # every payload checked (its damage supersedes the summary's: job.py).
    for rec in read_records(path, damage, None if run_id is not None else SUMMARY_PAYLOADS):
        md = rec.metadata
        kind.feed(rec)
        if pid is None:
            pid, first_clock = rec.pid, rec.clock
        if rank is None and isinstance(md.get("rank"), int):
            rank = md["rank"]
        if offset is None:
            ts = _epoch(md, rec.payload)
            if ts is not None:
                offset = ts - rec.clock
        sink.clock = rec.clock
        if rec.name == "torch_version" and not torch_version:
            torch_version = _torch_version(rec.payload)
        if rec.name in reads:
            dispatcher.feed(md, rec.payload, rec.pid, rec.name)
        elif "frame_compile_id" in md:
            named.add((dispatcher.prefix, md.get("frame_id"), md["frame_compile_id"]))
    clock = (first_clock, sink.clock)
    size = os.path.getsize(path)
    words = damage.words(os.path.basename(path))
    if pid is None:
        return LogSummary(path, size, None, words)
    dispatcher.flush()
    # Placed on the epoch by the first record that holds an epoch time; none
    # does: the glog clock, undated.
    shift = offset or 0.0
    for e in sink.events:
        if not isinstance(e, _PHASES):
            e.t += shift
    first, last = clock[0] + shift, clock[1] + shift
    open_ids = _spans_as_records(sink.events, rid)
    # Its summary's session: a phase's start changes none of what it reads.
    run = Session.from_events([e for e in sink.events if type(e) is not ev.PhaseStarted]).run(rid)
    summary = ProcessSummary(
        source=path,
        pid=pid,
        rank=rank,
        signature=signature(run),
        compile_s=run.compile_wall_s,
        first_t=first,
        last_t=last,
        dated=offset is not None,
        clock=clock,
        ends=_ends(open_ids, damage),
        kind=kind.words(os.path.basename(path)),
        recordless=_recordless(named, dispatcher.named, [*run.compiles, *open_ids]),
    )
    if run_id is not None:
        summary.events = _framed(
            sink.events, run_id, pid, rank, host, path, torch_version, first, clock
        )
    return LogSummary(path, size, summary, words)


def _spans_as_records(events: list[ev.Event], run_id: str) -> list[str]:
    """A CompileFinished, from torch's chromium span of it, for each compile
    whose phases all ended but whose ``compilation_metrics`` record the log
    lacks, and that span's time for a record that holds none; the compile ids
    still open (a phase begun, never ended), which is where a log cut short ends."""
    spans: dict[str, tuple[float, float]] = {}
    finished: set[str] = set()
    open_ids: dict[str, None] = {}
    walls: list[ev.CompileFinished] = []  # records that hold no time of the compile
    depth: dict[tuple[int, str], list[str | None]] = {}  # phases begun, by thread and name
    for e in events:
        if isinstance(e, ev.CompileFinished):
            finished.add(ev.backward_id(e.compile_id) if e.is_backward else e.compile_id)
            if not e.wall_s:
                walls.append(e)
        elif isinstance(e, ev.PhaseStarted):
            depth.setdefault((e.thread, e.name), []).append(e.compile_id)
            if e.compile_id is not None:
                open_ids[e.compile_id] = None
        elif isinstance(e, ev.PhaseEnded):
            began = depth.get((e.thread, e.name))
            if began:
                began.pop()
            if e.compile_id is not None:
                a, b = spans.get(e.compile_id, (e.start_t, e.start_t + e.duration_s))
                spans[e.compile_id] = (min(a, e.start_t), max(b, e.start_t + e.duration_s))
    # Compile ids of phases begun and never ended.
    still = {c for stack in depth.values() for c in stack if c is not None}
    for e in walls:
        a, b = spans.get(ev.backward_id(e.compile_id) if e.is_backward else e.compile_id, (0, 0))
        e.wall_s = b - a
    for cid, (a, b) in spans.items():
        if cid in finished or cid in still:
            continue
        events.append(
            ev.CompileFinished(
                run_id=run_id,
                compile_id=cid,
                wall_s=b - a,
                start_t=a,
                is_backward=cid.endswith(ev.BACKWARD),
                recompile_reason=None,
                fail_type=None,
                fail_reason=None,
                graph_op_count=None,
                guard_count=None,
                cache=None,
                metrics={},
                t=b,
            )
        )
    return [c for c in open_ids if c in still and c not in finished]


def _recordless(
    unread: set[tuple[str, object, object]], read: set[str], compiles: Iterable[str]
) -> list[str]:
    """The compile ids records name (``unread``: those the dispatcher skips;
    ``read``: the others') with no compile record or span among ``compiles``."""
    named = read | {f"{p}{f}/{c}" for p, f, c in unread if f is not None and c is not None}
    seen = {c.removesuffix(ev.BACKWARD) for c in compiles}
    # Shortest first: 2/0 before 10/0, a reset's ids after.
    return sorted({c.removesuffix(ev.BACKWARD) for c in named} - seen, key=lambda c: (len(c), c))


def _ends(open_ids: list[str], damage: Damage) -> str:
    """Where a log ends, when that says it was cut: inside a compile, or mid-record."""
    where = []
    if open_ids:
        where.append(f"during compile {', '.join(open_ids)}")
    if CUT in damage.first:
        where.append(f"mid-record (line {damage.first[CUT]})")
    return " and ".join(where)


def _framed(
    events: list[ev.Event],
    run_id: str,
    pid: int,
    rank: int | None,
    host: str,
    path: str,
    torch_version: str,
    first: float,
    clock: tuple[float, float],
) -> list[ev.Event]:
    """The log's events between a ProcessAttached (who it is) and a
    RunFinished (its log ended), as an attached process's run reads. Its wall
    is its first to its last record on the glog clock, which every record
    carries, from ``first``."""
    start = first
    wall = clock[1] - clock[0]
    return [
        ev.ProcessAttached(
            run_id=run_id,
            pid=pid,
            ppid=0,
            argv=[os.path.basename(path)],
            host=host,
            started_t=None,
            torch_version=torch_version,
            python_version="",
            rank=rank,
            t=start,
        ),
        *events,
        # How the process ended is not in its log: only that its log ended.
        ev.RunFinished(run_id=run_id, status=ev.LOG_ENDED, wall_s=wall, t=start + wall),
    ]


def _epoch(md: dict, payload: str | None) -> float | None:
    """When the record was written on the epoch clock, where it says: a
    chromium event's time, or a compile's end in its compilation_metrics
    (written as the compile ends)."""
    if "chromium_event" in md and payload:
        try:
            ts = json.loads(payload).get("ts")
        except (ValueError, AttributeError):
            return None
        return float(ts) / 1e6 if isinstance(ts, int | float) else None
    metrics = md.get("compilation_metrics") or {}
    end, start = metrics.get("end_time_us"), metrics.get("start_time")
    if isinstance(end, int | float):
        return float(end) / 1e6
    if isinstance(start, int | float):
        return float(start) + compile_wall_s(metrics)
    return None


def _torch_version(payload: str | None) -> str:
    try:
        return str(json.loads(payload or "").get("pytorch_version") or "")
    except (ValueError, AttributeError):
        return ""
