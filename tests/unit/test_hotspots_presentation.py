"""How hot frames are shown (issue: "Hot frames are mostly waiting"), on a real
py-spy profile of a cold compile (tests/fixtures/pyspy, recorded by
scripts/record_pyspy_fixture.py): the compiling thread by default, waiting
named as such, shares within 100% per thread, and no table for a run that
never compiled."""

from __future__ import annotations

import dataclasses
from collections import defaultdict

import pytest
from helpers.events import run_started
from helpers.recorded import load_fixture, pyspy_hot_frames
from rich.console import Console

from dlcprof import events as ev
from dlcprof import text
from dlcprof.console import hotspots_table, run_summary
from dlcprof.figures import hotspots as fh
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Session
from dlcprof.tui.view import View
from dlcprof.tui.widgets.hotspots import body, frame_rows


@pytest.fixture(scope="module")
def hot(tmp_path_factory) -> ev.HotFramesSampled:
    return pyspy_hot_frames("r0", tmp_path_factory.mktemp("pyspy"))


def compiled_session(hot: ev.HotFramesSampled) -> Session:
    """A real compile's event stream with this real profile as its hot frames."""
    events = load_fixture("pointwise_chain")
    run_id = next(e.run_id for e in events if isinstance(e, ev.RunStarted))
    return Session.from_events([*events, dataclasses.replace(hot, run_id=run_id)])


def _plain(renderable) -> str:
    console = Console(width=300, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def _pane(session: Session, run, all_threads: bool = False) -> str:
    """What the Hotspots pane shows: its head, the table's rows, its tail."""
    head, rows, tail = body(View(session, run, None, replay=True), all_threads)
    cells = "\n".join(" ".join(_plain(c).strip() for c in r) for r in frame_rows(rows))
    return f"{_plain(head)}\n{cells}\n{_plain(tail)}"


def test_the_fixture_is_the_case_of_the_issue(hot) -> None:
    # A helper thread that only waits, and a compiling thread mostly waiting on g++:
    # counted against all ticks, the shares used to add up past 100%.
    assert {"main", "tqdm_monitor", "pool"} <= set(hot.threads)
    assert sum(r["own"] for r in hot.rows) / hot.samples > 1.5


def test_the_compiling_thread_by_default_with_waiting_named(hot) -> None:
    run = compiled_session(hot).latest_run
    rows = fh.hot_rows(run, 100)
    assert rows and {r.thread for r in rows} == {"main"}
    assert rows[0].function == text.WAITING_COMPILER and rows[0].waiting
    names = {r.function for r in rows}
    assert text.WAITING_WORKERS in names
    # The subprocess plumbing is folded into the waiting row, not listed as hot.
    assert not names & {"Popen.communicate", "Popen._wait", "Condition.wait", "Future.result"}
    assert sum(r.own or 0 for r in rows) <= 1.0
    assert fh.samples_shown(run) == hot.threads["main"]
    assert set(fh.other_threads(run)) == {"tqdm_monitor", "pool"}


def test_every_thread_on_request_each_within_100_percent(hot) -> None:
    run = compiled_session(hot).latest_run
    rows = fh.hot_rows(run, 1000, all_threads=True)
    own: dict[str, float] = defaultdict(float)
    for r in rows:
        own[r.thread] += r.own or 0
    assert set(own) == {"main", "tqdm_monitor", "pool"}
    assert all(0 < v <= 1.0 + 1e-9 for v in own.values()), own
    idle = [r for r in rows if r.thread == "tqdm_monitor"]
    assert idle[0].function == "Condition.wait" and idle[0].own == pytest.approx(1.0, abs=0.02)
    assert fh.other_threads(run, all_threads=True) == {}


def test_views_show_the_compiling_thread_and_name_the_rest(hot) -> None:
    session = compiled_session(hot)
    run = session.latest_run
    scope = fh.hot_scope("main", hot.threads["main"])
    others = fh.threads_not_shown(fh.other_threads(run))
    tui = _pane(session, run)
    console = _plain(hotspots_table(run))
    md = render_markdown(build_model(session))
    page = render_html(build_model(session))
    for name, out in {"tui": tui, "console": console, "markdown": md, "html": page}.items():
        flat = " ".join(out.split())
        assert scope in flat and others in flat, name
        assert text.WAITING_COMPILER in flat, name
        assert "tqdm_monitor" not in flat.replace(others, ""), name
    assert "t: all threads" in tui
    assert "tqdm_monitor" in _pane(session, run, all_threads=True).split(others)[0]


def test_no_hot_frames_for_a_run_that_failed_before_compiling(hot) -> None:
    # py-spy sampled the worker while it loaded, then the workload failed: the
    # samples are start-up (imports), not the compiler.
    run_id = hot.run_id
    events = [
        run_started(
            run_id=run_id, target="broken.py", workload="broken", size="small", torch_version="2.13"
        ),
        ev.ErrorRaised(run_id, "load", "workload broken raised when called eagerly"),
        ev.RunFinished(run_id=run_id, status="error", wall_s=3.0),
        hot,
    ]
    session = Session.from_events(events)
    run = session.latest_run
    assert run.hot_frames is not None and run.hot_frames.rows  # sampled...
    assert fh.hot_rows(run) == [] and "before compiling" in (fh.why_none(run) or "")
    assert hotspots_table(run) is None and "Compiler hot frames" not in _plain(
        run_summary(run, session)
    )
    report = build_model(session)
    assert not report.hotspot_runs and "before compiling" in report.hotspots_why
    assert "before compiling" in render_markdown(report)
    pane = _pane(session, run)
    assert "before compiling" in pane and "own" not in pane


def test_a_profile_in_the_scratch_folder_is_said_to_be_temporary(tmp_path) -> None:
    """Issue 40, 7: the Log named a profile in a folder removed when the TUI quits."""
    from dlcprof import events as ev
    from dlcprof import scratch
    from dlcprof.figures import hotspots as fh

    kept = tmp_path / "report" / "pyspy.speedscope.json"
    passing = scratch.new_folder("pyspy") / "profile.json"
    assert scratch.holds(passing) and not scratch.holds(kept)
    said = {p: fh.profile_line(ev.ProfileSaved(str(p), "speedscope", 12)) for p in (kept, passing)}
    assert "temporary" in said[passing] and "ctrl+s" in said[passing]
    assert "temporary" not in said[kept] and str(kept) in said[kept]
