"""Replay renders the same screen as live.

``dlcprof replay session.json`` promises the TUI "looking as it did live": the
saved event stream is replayed through the same Session. Here real recorded
event streams go through the live path (the scripted engine emits them from
its thread → ``emit`` → batching → Session), the session is saved and loaded
back, a replay app opens on it, and the panes are compared as drawn on screen.
"""

from __future__ import annotations

import io
from functools import partial
from pathlib import Path

from helpers.engine import ScriptedLiveRun
from helpers.events import of_run
from helpers.program import process_attached
from helpers.recorded import load_fixture
from helpers.tui import SIZE, make_app, painted, wait_for
from rich.console import Console

from dlcprof import events as ev
from dlcprof.report import load_session, save_session
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.view import View
from dlcprof.tui.widgets.log import LogPane
from dlcprof.tui.widgets.modes import ModesReport
from dlcprof.tui.widgets.status_bar import device_words

# Real runs: one fused kernel; a static shape sweep with two recompiles.
RECORDED = ["pointwise_chain", "variable_length_static"]
# Each compared pane (its border, title and subtitle included) and what scrolls in it.
TOP = {"#phases": "#phases", "#benchmark": "#benchmark", "#kernels": "#kernels-table"}
TABS = {"log": "#log", "recompiles": "#recompiles"}  # shown in "#tabs", tab strip included
# The one line that differs on purpose, when the session holds no sweep of the
# run's workload: live offers the key, a replay has no worker to run it.
NO_SWEEP = "static vs dynamic: n/a"
SWEEP_HINT = {"live": "press s to sweep", "replay": "no shape sweep of this workload"}

Shots = dict[tuple[str, str], list[list[str]]]  # (run id, pane) -> pages of screen rows


def screen_rows(app: DlcprofApp) -> list[str]:
    """What the compositor draws on the terminal, row by row."""
    return [strip.text for strip in app.screen._compositor.render_strips()]


def pane_rows(app: DlcprofApp, selector: str) -> list[str]:
    """The pane's rectangle, cropped out of the screen."""
    region = app.screen.query_one(selector).region
    assert region.area > 0, f"{selector} is not on screen"
    strips = app.screen._compositor.render_strips()[region.y : region.bottom]
    return [strip.crop(region.x, region.right).text for strip in strips]


async def settle(pilot) -> None:
    """Wait until the screen stops changing: layout, scrolls, repaints and
    animations (a tab's underline slides to it) all done. Not a bound on time:
    two alike frames in a row count only once nothing is left to animate."""
    await painted(pilot)
    shown = screen_rows(pilot.app)
    for _ in range(50):
        await pilot.wait_for_scheduled_animations()
        await painted(pilot)
        now = screen_rows(pilot.app)
        if now == shown:
            return
        shown = now
    raise AssertionError("the screen does not settle")


async def pages(pilot, pane: str, scroller: str) -> list[list[str]]:
    """The pane as shown, a screenful per page, from the top to the end of its content.

    From the top: a live app leaves the Phases pane where it followed the run
    (its end), a replay opens at the top. Where a pane is scrolled is not what
    is compared; everything it can show is."""
    app = pilot.app
    widget = app.screen.query_one(scroller)
    out, y = [], 0
    while True:
        widget.scroll_to(y=y, animate=False, immediate=True)
        await settle(pilot)
        out.append(pane_rows(app, pane))
        if y >= widget.max_scroll_y:
            return out
        y = min(y + max(1, widget.scrollable_content_region.height), widget.max_scroll_y)


async def capture(pilot) -> Shots:
    """Every run of the session: each bottom tab, then the panes above, paged through.

    The Log tab comes first, before this scrolls any pane. With Textual 8.2.8,
    showing a tab for the first time right after a scroll-only repaint sends
    its RichLog no Resize (the compositor's lazily rebuilt full map already
    holds it), and a RichLog draws nothing until its first Resize: the Log
    would stay blank in both apps. The content checks in the test catch that."""
    app = pilot.app
    app.set_focus(None)  # the focused pane's frame stands out: alike in both apps
    shots: Shots = {}
    for rid in app.session.runs:
        app.select_run(rid)
        for tab, scroller in TABS.items():
            app.show_tab(tab)
            await settle(pilot)
            if tab == "log":  # lines are drawn a few per tick while the tab shows
                log = app.query_one(LogPane)
                await wait_for(pilot, partial(lambda log: not log.has_pending, log))
                await settle(pilot)
            shots[rid, tab] = await pages(pilot, "#tabs", scroller)
        for pane, scroller in TOP.items():
            shots[rid, pane] = await pages(pilot, pane, scroller)
    return shots


def without_sweep_hint(shots: Shots, mode: str) -> Shots:
    """Drop the line that differs on purpose, checking it says what it should."""
    for key, shown in shots.items():
        hints = [row for page in shown for row in page if NO_SWEEP in row]
        assert all(SWEEP_HINT[mode] in row for row in hints), (mode, key, hints)
    return {
        key: [[row for row in page if NO_SWEEP not in row] for page in shown]
        for key, shown in shots.items()
    }


def recorded_runs() -> list[tuple[list[ev.Event], ev.WorkerExited]]:
    """Each recorded stream, split into the run's events and how its worker exited."""
    runs = []
    for name in RECORDED:
        events = load_fixture(name)
        assert isinstance(events[-1], ev.WorkerExited), name
        runs.append((events[:-1], events[-1]))
    return runs


def as_text(pages: list[list[str]]) -> str:
    return "\n".join(f"-- page {i}\n" + "\n".join(page) for i, page in enumerate(pages))


def joined(shots: Shots, rid: str, pane: str) -> str:
    return as_text(shots[rid, pane])


async def test_replay_renders_the_same_panes_as_live(
    engine: type[ScriptedLiveRun], tmp_path: Path
) -> None:
    recorded = recorded_runs()

    def script(run_id: str, s: RunSettings) -> list[ev.Event]:
        events, exited = recorded[len(engine.instances) - 1]
        engine.exit_event = exited  # the stand-in ends the run as the real worker did
        return [of_run(e, run_id) for e in events]

    engine.script = staticmethod(script)
    engine.pause_s = 0.0005  # ~470 events: many per UI tick, so batching is exercised
    live = make_app(engine=engine)
    async with live.run_test(size=SIZE) as pilot:

        def ran(n: int) -> bool:
            return not live.runs.busy and len(live.session.runs) == n

        for n in range(1, len(recorded) + 1):
            await pilot.press("r")
            await wait_for(pilot, partial(ran, n))
        assert [r.status for r in live.session.runs.values()] == ["ok"] * len(recorded)
        live_shots = await capture(pilot)
    folder = save_session(live.session, tmp_path / "rep")

    loaded = load_session(folder / "session.json")
    assert loaded.events == live.session.events
    replay = DlcprofApp(session=loaded, replay=True, deterministic=True, start_standby=False)
    async with replay.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert "replay" in screen_rows(replay)[-2]  # the status bar: it is a replay
        replay_shots = await capture(pilot)

    # Not a comparison of blanks: each pane shows its run.
    run1, run2 = live.session.runs
    for rid in (run1, run2):
        assert "compile 0/0" in joined(live_shots, rid, "#phases")
        assert "speedup" in joined(live_shots, rid, "#benchmark")
        assert "cpp_fused" in joined(live_shots, rid, "#kernels")
        assert f"── run {rid} finished: ok" in joined(live_shots, rid, "log")
    assert "size mismatch" in joined(live_shots, run2, "recompiles")
    n = sum(isinstance(e, ev.RecompileTriggered) for e in live.session.events)
    assert f"Recompiles ({n})" in joined(live_shots, run2, "recompiles")

    assert SWEEP_HINT["live"] in joined(live_shots, run1, "recompiles")
    assert SWEEP_HINT["replay"] in joined(replay_shots, run1, "recompiles")

    assert replay_shots.keys() == live_shots.keys()
    live_shots = without_sweep_hint(live_shots, "live")
    replay_shots = without_sweep_hint(replay_shots, "replay")
    for key, shown in live_shots.items():
        # One string per pane, so a failure prints a line diff of what differs.
        assert as_text(replay_shots[key]) == as_text(shown), f"replay differs from live: {key}"


def test_the_status_bar_names_what_a_replay_holds_and_waits_for_no_worker() -> None:
    """A replay has no worker to report its device: an attached program's
    process says its host and torch; a report with neither says so."""
    s = Session()
    s.apply(process_attached(7, host="gpu-node-3", torch_version="2.15.0"))
    assert device_words(s, s.runs["pid7"], replay=True) == "gpu-node-3 · torch 2.15.0"
    s.apply(process_attached(8, host="trace", torch_version=""))  # an imported log without one
    s.apply(ev.RunFinished(run_id="pid8", status=ev.LOG_ENDED, wall_s=1.0))
    assert device_words(s, s.runs["pid8"], replay=True) == "logs' folder trace · torch n/a"
    assert device_words(Session(), None, replay=True) == "device: not in this report"
    assert device_words(Session(), None) == "device: known once a worker reports"
    app = DlcprofApp(session=s, replay=True, start_standby=False, deterministic=True)
    assert app.worker_state() == ("replay", "2 runs from a saved session")
    tests = Session()
    for n in range(12):  # a pytest plugin's session: its runs are tests
        tests.apply(process_attached(7, run_id=f"t.py::test_{n}", argv=["t.py"], test=True))
    app = DlcprofApp(session=tests, replay=True, start_standby=False, deterministic=True)
    assert app.worker_state() == ("replay", "12 tests from a saved session")


def test_a_replays_modes_pane_offers_no_key_it_has_no_worker_for() -> None:
    """Live, the Modes pane offers `a` (every mode, side by side); a replay has
    no worker to run them, and says what the session holds instead."""
    session = Session.from_events(load_fixture("pointwise_chain"))
    run = session.latest_run
    console = Console(width=120, file=io.StringIO(), color_system=None)
    said = {}
    for replay in (False, True):
        with console.capture() as out:
            console.print(ModesReport(View(session=session, run=run, now=None, replay=replay)))
        said[replay] = out.get()
    assert "a runs all four" in said[False]
    assert (
        "a runs" not in said[True]
        and "no other mode of this workload in this session" in said[True]
    )
