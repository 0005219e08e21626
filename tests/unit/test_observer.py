"""The observer must not move what it measures: the timed repetitions run with
every monitor paused (worker/quiet.py, LiveRun), and every view says what
watched the run and what it cost (figures/observer.py)."""

from __future__ import annotations

import io
import os
import queue

import pytest
from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof import events as ev
from dlcprof.console import run_summary
from dlcprof.engine import LiveRun
from dlcprof.figures import hotspots as fh
from dlcprof.figures import observer as fo
from dlcprof.monitors.hotspots import load_samples
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.quiet import QuietWindow


def _window(answer: str | None) -> tuple[QuietWindow, ListEmitter]:
    sink = ListEmitter()
    control = None
    if answer is not None:
        r, w = os.pipe()
        os.write(w, answer.encode())
        os.close(w)  # after the answer: EOF
        control = io.TextIOWrapper(io.FileIO(r, "r"))
    return QuietWindow(sink, "r1", control), sink


@pytest.mark.parametrize(
    ("answer", "quiet", "warned"),
    [("quiet\n", True, False), ("busy\n", False, True), ("", False, True), (None, False, False)],
    ids=["paused", "would-not-pause", "parent-gone", "nobody-watches"],
)
def test_the_worker_times_once_the_parent_answers(answer, quiet, warned) -> None:
    window, sink = _window(answer)
    with window("benchmark"):
        sink.emit(ev.LogEmitted("r1", "info", "dlcprof", "timing"))
    kinds = [type(e).__name__ for e in sink.events if not isinstance(e, ev.LogEmitted)]
    assert kinds == ["TimingStarted", "TimingEnded"]
    start, end = sink.events[0], sink.events[-1]
    assert isinstance(end, ev.TimingEnded) and end.quiet is quiet and end.what == "benchmark"
    assert start.t <= end.start_t <= end.t  # the window starts once the answer is in
    warnings = [e for e in sink.events if isinstance(e, ev.LogEmitted) and e.level == "warning"]
    assert bool(warnings) is warned


@pytest.mark.slow
def test_a_real_run_pauses_every_monitor_while_it_times(tmp_path) -> None:
    # Enough timed calls that 25 Hz py-spy and the 4 Hz device sampler would
    # both have sampled the window many times had they been running.
    settings = RunSettings(target="pointwise-chain", size="small", reps=5, iters=4000)
    inbox: queue.Queue[ev.Event] = queue.Queue()
    live = LiveRun(settings.validate(), inbox.put)
    live.start()
    session = Session()
    while not isinstance(e := inbox.get(timeout=600), ev.WorkerExited):
        session.apply(e)
    session.apply(e)
    assert live.wait(30)
    run = session.runs[live.run_id]
    assert run.benchmark is not None, [x.message for x in run.errors]

    # Every timed window (the benchmark, the kernel profile, the steady-allocator
    # benchmark) was quiet.
    windows = {w.what: w for w in run.timed}
    assert "benchmark" in windows and all(w.quiet for w in windows.values()), windows
    window = windows["benchmark"]
    assert window.t - window.start_t > 0.5
    inside = lambda t: any(w.start_t <= t <= w.t for w in windows.values())  # noqa: E731
    device = [s.t for s in run.device_samples]
    assert device and not [t for t in device if inside(t)]
    assert [t for t in device if t < window.start_t]  # it sampled the compile

    # py-spy: the saved profile has samples in the compile phases, none in the window.
    assert run.profile is not None
    samples = load_samples(run.profile.path)
    assert samples and not [s for s in samples if inside(s.t)]
    compiling = [p for c in run.compiles.values() for p in c.phases]
    in_compile = [s for s in samples if any(p.start_t <= s.t <= p.end_t for p in compiling)]
    assert len(in_compile) > 10
    assert any(r.phase for r in fh.hot_rows(run, 50))  # rows attributed to compile phases

    # What watched it, what that cost, and that timing was quiet: in every view.
    watchers = {w.name: w for w in fo.watchers(run)}
    assert set(watchers) == {"py-spy", "device sampler"}
    assert watchers["py-spy"].how == "25 Hz, non-blocking"
    for w in watchers.values():
        assert w.cpu_share is not None and 0 < w.cpu_share < 1, w
    line = fo.line(run)
    assert "py-spy 25 Hz, non-blocking (" in line and "of a core" in line
    assert "paused while the benchmark" in line and "timed" in line
    assert line in render_markdown(build_model(session))
    out = Console(width=400, file=io.StringIO())
    out.print(run_summary(run, session))
    assert line in out.file.getvalue()


@pytest.mark.parametrize(
    ("fixture", "says"),
    [
        # Recorded before the monitors paused: they ran while it was timed.
        ("pointwise_chain", "the monitors RAN while the benchmark was timed"),
        ("variable_length_static", "the monitors ran through the shape sweep"),
    ],
)
def test_the_observer_line_says_what_ran_while_timing(fixture, says) -> None:
    events = load_fixture(fixture)
    run_id = next(e.run_id for e in events if isinstance(e, ev.RunStarted))
    watched = ev.MonitorStatus("py-spy", True, "py-spy sampling", run_id, t=events[0].t)
    run = Session.from_events([*events, watched]).runs[run_id]
    assert says in fo.line(run) and "py-spy n/a (rate not recorded)" in fo.line(run)
    # Before its first cost measurement, the status bar says so, as the line does.
    assert "py-spy n/a (not measured yet)" in (fo.short(run) or "")
    bare = Session.from_events(events).runs[run_id]
    assert fo.line(bare) == "observer: worker probes (trace, kernels) only"
    assert fo.short(bare) is None
