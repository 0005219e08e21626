"""The observer must not move what it measures: the timed repetitions run with
every monitor paused (worker/quiet.py, LiveRun), and every view says what
watched the run and what it cost (figures/observer.py)."""

from __future__ import annotations

import io
import os

import pytest
from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof.figures import observer as fo
from dlcprof.session import Session
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
