"""One ``TORCH_TRACE`` log read through the shared parser (``TraceDispatcher``,
the one the live probe feeds), in a worker process of the import's pool.

Each process that wrote to the log (its pid, from each record's prefix) gets
its own dispatcher and ``Session``; its rank is the ``rank`` torch puts in
each record once the process group is up, so the records it wrote before
``init_process_group`` are its rank's too. What comes back is compact: the
process's ``RankSignature`` and counts (``ProcessSummary``), and its events
only when the import keeps them (``read_log``'s ``keep``), its kernels read
from Inductor's output code as the live probe reads them (but for one thing:
with no torch to ask which names are aten ops, a kernel whose fused ops torch
gave only in its name, a lazily compiled backward's, has none).
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass, field

from dlcprof import events as ev
from dlcprof.figures.job.groups import RankSignature, signature
from dlcprof.session import Session
from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.trace_records.kernels import KernelCollector
from dlcprof.trace_records.log_file import Damage, read_records


class _Stamped:
    """Collects a process's events, each stamped with the time its record was
    written (the dispatcher stamps phases from torch's own clock; the rest
    would carry the time of the import)."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self.clock: float | None = None  # the current record's, on the epoch clock

    def emit(self, event: ev.Event) -> None:
        if self.clock is not None and not isinstance(event, ev.PhaseStarted | ev.PhaseEnded):
            event.t = self.clock
        self.events.append(event)


@dataclass
class _Process:
    run_id: str
    sink: _Stamped
    dispatcher: TraceDispatcher
    rank: int | None = None
    torch_version: str = ""
    offset: float | None = None  # epoch seconds minus the log's own clock
    first: float | None = None
    last: float | None = None


@dataclass
class ProcessSummary:
    """What one process of a log did, reduced to what the import compares."""

    source: str
    pid: int
    rank: int | None
    signature: RankSignature
    compile_s: float
    first_t: float | None
    last_t: float | None
    events: list[ev.Event] = field(default_factory=list)  # only those kept


@dataclass
class LogSummary:
    source: str
    bytes: int
    processes: list[ProcessSummary]
    damage: list[str]  # Damage.words


def read_log(path: str, host: str, keep: dict[int, str] | None = None) -> LogSummary:
    """Every process of the log at ``path``. ``keep``: pid -> run id of the
    processes whose events come back (None: none)."""
    damage = Damage()
    procs: dict[int, _Process] = {}
    for rec in read_records(path, damage):
        p = procs.get(rec.pid)
        if p is None:
            sink = _Stamped()
            run_id = (keep or {}).get(rec.pid, f"pid{rec.pid}")
            # Kernels only for a process kept: the summary compares none.
            kept = keep is not None and rec.pid in keep
            kernels = KernelCollector(sink, run_id) if kept else None
            p = procs[rec.pid] = _Process(run_id, sink, TraceDispatcher(sink, run_id, kernels))
        md = rec.metadata
        if p.rank is None and isinstance(md.get("rank"), int):
            p.rank = md["rank"]
        if p.offset is None and "chromium_event" in md and rec.payload:
            ts = _chromium_ts(rec.payload)
            if ts is not None:
                p.offset = ts - rec.clock
        p.sink.clock = rec.clock + p.offset if p.offset is not None else None
        if p.sink.clock is not None:
            p.first = p.sink.clock if p.first is None else p.first
            p.last = p.sink.clock
        if not p.torch_version and (md.get("artifact") or {}).get("name") == "torch_version":
            p.torch_version = _torch_version(rec.payload)
        p.dispatcher.feed(md, rec.payload, rec.pid)
    out = []
    for pid, p in procs.items():
        p.dispatcher.flush()
        run = Session.from_events(p.sink.events).run(p.run_id)
        kept = keep is not None and pid in keep
        out.append(
            ProcessSummary(
                source=path,
                pid=pid,
                rank=p.rank,
                signature=signature(run),
                compile_s=run.compile_wall_s,
                first_t=p.first,
                last_t=p.last,
                events=_framed(p, pid, host, path) if kept else [],
            )
        )
    return LogSummary(path, os.path.getsize(path), out, damage.words(os.path.basename(path)))


def _framed(p: _Process, pid: int, host: str, path: str) -> list[ev.Event]:
    """The process's events between a ProcessAttached (who it is) and a
    RunFinished (its log ended), as an attached process's run reads."""
    start = p.first if p.first is not None else 0.0
    end = p.last if p.last is not None else start
    return [
        ev.ProcessAttached(
            run_id=p.run_id,
            pid=pid,
            ppid=0,
            argv=[os.path.basename(path)],
            host=host,
            started_t=None,
            torch_version=p.torch_version,
            python_version="",
            rank=p.rank,
            t=start,
        ),
        *p.sink.events,
        # How the process ended is not in its log: only that its log ended.
        ev.RunFinished(run_id=p.run_id, status=ev.LOG_ENDED, wall_s=end - start, t=end),
    ]


def _chromium_ts(payload: str) -> float | None:
    try:
        ts = json.loads(payload).get("ts")
    except (ValueError, AttributeError):
        return None
    return float(ts) / 1e6 if isinstance(ts, int | float) else None


def _torch_version(payload: str | None) -> str:
    try:
        return str(json.loads(payload or "").get("pytorch_version") or "")
    except (ValueError, AttributeError):
        return ""
