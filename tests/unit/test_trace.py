"""trace.json is a valid Chrome trace that Perfetto opens."""

from __future__ import annotations

import json
from collections import defaultdict

import pytest
from helpers.events import run_started
from helpers.report import full_session, with_monitors

from dlcprof import events as ev
from dlcprof.report.model import build as build_model
from dlcprof.report.trace import PID_DEVICE, render_chrome_trace
from dlcprof.session import Session

ALLOWED_PH = {"X", "B", "E", "i", "I", "C", "M"}


def check_trace(trace: dict) -> list[dict]:
    """Assert the structure viewers rely on; the events, for more checks."""
    assert isinstance(trace, dict) and isinstance(trace["traceEvents"], list)
    json.loads(json.dumps(trace, allow_nan=False))  # strict JSON: no NaN/Infinity
    events = trace["traceEvents"]
    for x in events:
        for key in ("name", "ph", "ts", "pid", "tid"):
            assert key in x, (key, x)
        assert x["ph"] in ALLOWED_PH, x
        # Perfetto reads pid/tid as uint32: a Python thread ident would not fit.
        assert isinstance(x["pid"], int) and 0 <= x["pid"] < 2**32, x
        assert isinstance(x["tid"], int) and 0 <= x["tid"] < 2**32, x
        assert isinstance(x["ts"], (int, float)) and x["ts"] >= 0, x
        if x["ph"] == "X":
            assert isinstance(x["dur"], (int, float)) and x["dur"] >= 0, x
        if x["ph"] == "C":
            assert x["args"] and all(isinstance(v, (int, float)) for v in x["args"].values())
    # Per track, as written: timestamps never go back.
    tracks: dict[tuple[int, int, str], list[dict]] = defaultdict(list)
    for x in events:
        if x["ph"] != "M":
            kind = "C" if x["ph"] == "C" else "X" if x["ph"] == "X" else "i"
            tracks[(x["pid"], x["tid"], kind + (x["name"] if kind == "C" else ""))].append(x)
    for track, xs in tracks.items():
        ts = [x["ts"] for x in xs]
        assert ts == sorted(ts), f"track {track} not monotonic"
    # X events of a thread are nested or disjoint, never partly overlapping.
    for (pid, tid, kind), xs in tracks.items():
        if kind != "X":
            continue
        stack: list[float] = []
        for x in xs:
            start, end = x["ts"], x["ts"] + x["dur"]
            while stack and stack[-1] <= start + 1e-6:
                stack.pop()
            if stack:
                assert end <= stack[-1] + 1e-6, f"{x['name']} overlaps its parent on {pid}/{tid}"
            stack.append(end)
    return events


@pytest.mark.parametrize("monitors", [False, True])
def test_full_session_trace_is_valid(monitors: bool) -> None:
    session = with_monitors(full_session()) if monitors else full_session()
    trace = render_chrome_trace(build_model(session))
    events = check_trace(trace)
    names = {x["name"] for x in events if x["ph"] == "X"}
    assert "inductor_compile" in names or "dynamo" in names
    meta = [x for x in events if x["ph"] == "M"]
    assert any(x["name"] == "process_name" for x in meta)
    assert any(x["name"] == "thread_name" for x in meta)
    # One process per run, named.
    # Each compile thread has its own named track.
    threads = {
        (p.thread, i)
        for i, r in enumerate(session.runs.values(), 1)
        for c in r.compiles.values()
        for p in c.phases
    }
    tracks = {(x["pid"], x["tid"]) for x in events if x["ph"] == "X" and x["tid"] >= 10}
    assert len(tracks) == len(threads)
    named = {(x["pid"], x["tid"]) for x in meta if x["name"] == "thread_name"}
    assert tracks <= named
    pids = {x["pid"] for x in events if x["ph"] == "X"}
    assert pids <= {x["pid"] for x in meta if x["name"] == "process_name"}
    assert len(pids) == len(session.runs)
    if session.all_device_samples():
        counters = [x for x in events if x["ph"] == "C"]
        assert counters and all(x["pid"] == PID_DEVICE for x in counters)
    if any(r.sweep for r in session.runs.values()):
        assert any(x.get("cat") == "sweep" for x in events)


def test_phases_relative_to_session_start() -> None:
    session = full_session()
    events = render_chrome_trace(build_model(session))["traceEvents"]
    origin = min(e.t for e in session.events)
    # A compile phase keeps its start (µs since the session's first event) and duration.
    phase = next(p for r in session.runs.values() for c in r.compiles.values() for p in c.phases)
    match = [x for x in events if x["ph"] == "X" and x["name"] == phase.name]
    assert any(
        x["ts"] == pytest.approx((phase.start_t - origin) * 1e6, abs=1.0)
        and x["dur"] == pytest.approx(phase.duration_s * 1e6, abs=1.0)
        for x in match
    )


def test_overlapping_phases_are_clamped() -> None:
    # Two clocks or µs rounding can push a child past its parent's end.
    t = 1000.0
    events: list[ev.Event] = [
        run_started(target="w", workload="w", iters=1, torch_version="2.13"),
        ev.PhaseEnded("r", "0/0", "child", 7, start_t=t + 0.5, duration_s=0.6),
        ev.PhaseEnded("r", "0/0", "parent", 7, start_t=t, duration_s=1.0),
        ev.PhaseEnded("r", "0/0", "later", 7, start_t=t + 2, duration_s=0.1),
    ]
    for e in events:
        e.t = t
    trace = render_chrome_trace(build_model(Session.from_events(events)))
    xs = check_trace(trace)
    child = next(x for x in xs if x["name"] == "child")
    assert child["ts"] + child["dur"] <= 1_000_000 + 1e-6


def test_empty_session() -> None:
    trace = render_chrome_trace(build_model(Session()))
    assert check_trace(trace) == []


def test_nan_samples_are_dropped() -> None:
    events = list(with_monitors(full_session()).events)
    events.append(ev.DeviceSampled("cpu", {"cpu_util_pct": float("nan"), "x": None}))
    check_trace(render_chrome_trace(build_model(Session.from_events(events))))
