"""A real run: every monitor paused while the worker times, and every view
says what watched it and what that cost."""

from __future__ import annotations

import io
import queue

from rich.console import Console

from dlcprof import events as ev
from dlcprof.console import run_summary
from dlcprof.engine import LiveRun
from dlcprof.figures import hotspots as fh
from dlcprof.figures import observer as fo
from dlcprof.monitors.samples import load_samples
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Session
from dlcprof.settings import RunSettings


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
