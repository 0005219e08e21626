"""The session in Chrome trace format (opens in Perfetto and chrome://tracing).

Layout: one process per run (pid = run number), one track per thread that
ran compile phases (X events, properly nested), plus synthetic tracks for the
run itself, compiles, and benchmark/sweep steps; pid 10000 carries the device
monitor's counters (C events). ``ts``/``dur`` are µs since the session start.
"""

from __future__ import annotations

import dataclasses
from typing import Any

import dlcprof
from dlcprof import events as ev
from dlcprof.figures import phases as fp
from dlcprof.figures.device import finite
from dlcprof.figures.runs import run_label
from dlcprof.report.model import Report
from dlcprof.report.run import RunModel
from dlcprof.report.schema import benchmark_dict
from dlcprof.session import Run

# Synthetic track ids: small ints never collide with real thread idents.
TID_RUN, TID_COMPILES, TID_STEPS, TID_MARKS = 1, 2, 3, 4
TID_THREADS = 10  # compile threads: 10, 11, ... in order of first phase
# The device monitor's process: not 0, which Perfetto keeps for the idle task.
PID_DEVICE = 10_000
ALLOWED_PH = frozenset("XBEiICM")


def _fields(e: ev.Event | None) -> dict[str, Any]:
    """An event's payload for ``args`` (without the bookkeeping: time, run id)."""
    if e is None:
        return {}
    return {k: v for k, v in dataclasses.asdict(e).items() if k not in ("t", "run_id")}


def _us(t: float, origin: float) -> float:
    return round((t - origin) * 1e6, 3)


def _meta(
    pid: int, tid: int, what: str, name: str, sort: int | None = None
) -> list[dict[str, Any]]:
    out = [{"name": what, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"name": name}}]
    if sort is not None:
        key = "process_sort_index" if what == "process_name" else "thread_sort_index"
        out.append(
            {"name": key, "ph": "M", "ts": 0, "pid": pid, "tid": tid, "args": {"sort_index": sort}}
        )
    return out


def _nest(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """X events of one track sorted, each clamped inside its parent: the
    viewers require proper nesting, and µs rounding or two clocks can leave a
    child a hair past its parent's end."""
    events.sort(key=lambda x: (x["ts"], -x["dur"]))
    stack: list[float] = []  # end times of open parents
    for x in events:
        while stack and stack[-1] <= x["ts"]:
            stack.pop()
        end = x["ts"] + x["dur"]
        if stack and end > stack[-1]:
            x["dur"] = round(stack[-1] - x["ts"], 3)
            end = stack[-1]
        stack.append(end)
    return events


class _Trace:
    """The trace being built: track metadata, X events per track (nested at the
    end), and instants and counters."""

    def __init__(self, origin: float) -> None:
        self.origin = origin
        self.meta: list[dict[str, Any]] = []
        self.tracks: dict[tuple[int, int], list[dict[str, Any]]] = {}
        self.others: list[dict[str, Any]] = []

    def name(self, pid: int, tid: int, what: str, name: str, sort: int | None = None) -> None:
        self.meta += _meta(pid, tid, what, name, sort)

    def span(
        self,
        pid: int,
        tid: int,
        name: str,
        cat: str,
        start: float,
        dur_s: float,
        args: dict[str, Any],
    ) -> None:
        self.tracks.setdefault((pid, tid), []).append(
            {
                "name": name,
                "cat": cat,
                "ph": "X",
                "ts": _us(start, self.origin),
                "dur": round(max(dur_s, 0.0) * 1e6, 3),
                "pid": pid,
                "tid": tid,
                "args": args,
            }
        )

    def instant(
        self, pid: int, tid: int, name: str, cat: str, t: float, args: dict[str, Any]
    ) -> None:
        self.others.append(
            {
                "name": name,
                "cat": cat,
                "ph": "i",
                "s": "t",
                "ts": _us(t, self.origin),
                "pid": pid,
                "tid": tid,
                "args": args,
            }
        )

    def events(self) -> list[dict[str, Any]]:
        out = list(self.meta)
        for key in sorted(self.tracks):
            out += _nest(self.tracks[key])
        return out + sorted(self.others, key=lambda x: (x["pid"], x["tid"], x["ts"]))


def _run_track(tr: _Trace, pid: int, run: Run) -> None:
    tr.name(pid, 0, "process_name", f"run {pid}: {run_label(run)}", pid)
    tr.name(pid, TID_RUN, "thread_name", "run", 0)
    if run.started_t is not None and run.finished_t is not None:
        tr.span(
            pid,
            TID_RUN,
            f"run {run.run_id} ({run.status})",
            "run",
            run.started_t,
            run.finished_t - run.started_t,
            {"settings": _fields(run.settings)},
        )


def _compile_tracks(tr: _Trace, pid: int, run: Run) -> None:
    """One track per thread that ran compile phases, and one span per compile."""
    # Python thread idents are pointers (~1.4e14): Perfetto reads tids as
    # uint32 and would fold every thread onto one track. Number them.
    threads: dict[int, tuple[int, str]] = {}
    for c in run.compiles.values():
        main = fp.main_thread(c.phases)
        for p in c.phases:
            if p.thread not in threads:
                role = "compile (main thread)" if p.thread == main else "pool thread"
                threads[p.thread] = (TID_THREADS + len(threads), f"{role} {p.thread}")
            stage = fp.stage_of(p.name).name
            args = {"compile_id": c.compile_id, "stage": stage, "thread": p.thread}
            if p.cache_state:
                args["cache_state"] = p.cache_state
            tr.span(pid, threads[p.thread][0], p.name, stage, p.start_t, p.duration_s, args)
        rec = c.record
        if rec is not None:
            args = {
                "cache": c.cache,
                "recompile_reason": rec.recompile_reason,
                "kernels": [k.name for k in c.kernels],
            }
            if rec.fail_type:
                args["fail"] = f"{rec.fail_type}: {rec.fail_reason}"
            tr.span(
                pid,
                TID_COMPILES,
                f"compile {c.compile_id}",
                "compile",
                rec.start_t,
                rec.wall_s,
                args,
            )
    tr.name(pid, TID_COMPILES, "thread_name", "compiles", 1)
    named = sorted(threads.values(), key=lambda tn: (not tn[1].startswith("compile"), tn[0]))
    for i, (tid, name) in enumerate(named, 2):
        tr.name(pid, tid, "thread_name", name, i)


def _step_track(tr: _Trace, pid: int, m: RunModel) -> None:
    """The benchmark (a marker: only its end is recorded) and the sweep's steps."""
    run = m.run
    if m.benchmark is not None:
        tr.instant(
            pid,
            TID_STEPS,
            "benchmark",
            "benchmark",
            m.benchmark.event.t,
            benchmark_dict(m.benchmark),
        )
    prev: float | None = None
    for st in run.sweep:
        if prev is None:
            tr.instant(pid, TID_STEPS, f"size {st.size}", "sweep", st.t, _fields(st))
        else:
            # A step runs from the end of the one before to its own event.
            tr.span(pid, TID_STEPS, f"size {st.size}", "sweep", prev, st.t - prev, _fields(st))
        prev = st.t
    if run.benchmark is not None or run.sweep:
        tr.name(pid, TID_STEPS, "thread_name", "benchmark & sweep", 90)


def _mark_track(tr: _Trace, pid: int, run: Run) -> None:
    """Recompiles, graph breaks and errors, as instants."""
    for rc in run.recompiles:
        tr.instant(
            pid,
            TID_MARKS,
            "recompile",
            "recompile",
            rc.t,
            {"reason": rc.reason, "compile_id": rc.compile_id},
        )
    for g in run.graph_breaks:
        tr.instant(
            pid,
            TID_MARKS,
            "graph break",
            "graph_break",
            g.t,
            {"reason": g.reason, "location": g.location},
        )
    for err in run.errors:
        tr.instant(
            pid, TID_MARKS, "error", "error", err.t, {"stage": err.stage, "message": err.message}
        )
    if run.recompiles or run.graph_breaks or run.errors:
        tr.name(pid, TID_MARKS, "thread_name", "recompiles & graph breaks", 91)


def _device_track(tr: _Trace, samples: list[ev.DeviceSampled]) -> None:
    """The device monitor's counters, in a process of their own."""
    if not samples:
        return
    tr.name(PID_DEVICE, PID_DEVICE, "process_name", "device monitor", PID_DEVICE)
    for s in samples:
        for k, v in s.values.items():
            if finite(v):
                tr.others.append(
                    {
                        "name": k,
                        "cat": s.source,
                        "ph": "C",
                        "ts": _us(s.t, tr.origin),
                        "pid": PID_DEVICE,
                        "tid": PID_DEVICE,
                        "args": {k: v},
                    }
                )


def render_chrome_trace(model: Report) -> dict[str, Any]:
    """A JSON-ready Chrome trace ({"traceEvents": [...]}) of a session's model."""
    origin = model.origin_t or 0.0
    tr = _Trace(origin)
    for m in model.runs:
        _run_track(tr, m.number, m.run)
        _compile_tracks(tr, m.number, m.run)
        _step_track(tr, m.number, m)
        _mark_track(tr, m.number, m.run)
    _device_track(tr, model.device.samples)
    return {
        "traceEvents": tr.events(),
        "displayTimeUnit": "ms",
        "otherData": {"generator": f"dlcprof {dlcprof.__version__}", "origin_epoch_s": origin},
    }
