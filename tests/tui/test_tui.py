"""Pilot tests of the TUI flows, with a scripted engine in place of a worker.

The scripted ``LiveRun`` emits events from a background thread exactly like the
real one, so batching, selection and error paths are exercised as they run
live; test_tui_live.py drives a real compile end to end.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import textwrap
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, cast

import psutil
import pytest
from helpers.engine import ScriptedLiveRun, live_runs, scripted_run
from helpers.events import of_run
from helpers.paths import REPO
from helpers.tui import SIZE, drawn, make_app, painted, said, text, wait_for
from textual.binding import Binding
from textual.widgets import DataTable, Input, OptionList, Select, TabbedContent

from dlcprof import events as ev
from dlcprof.engine import Engine, Standby
from dlcprof.settings import RunSettings
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.screens import HelpScreen, KernelSourceScreen
from dlcprof.tui.view import View
from dlcprof.tui.widgets.alarm import AlarmBanner
from dlcprof.tui.widgets.log import LogPane
from dlcprof.tui.widgets.status_bar import StatusBar
from dlcprof.tui.widgets.workloads import WorkloadPicker


def status_text(app: DlcprofApp) -> str:
    return text(app.query_one(StatusBar))


def notes(app: DlcprofApp) -> list[str]:
    return said(app)


# --- opening, picking, settings ------------------------------------------------------------


async def test_opens_on_default_workload_with_main_panes_visible() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.target == "pointwise-chain"
        lst = app.query_one("#workload-list", OptionList)
        assert lst.option_count >= 5
        for pane in ("#phases", "#kernels", "#benchmark"):
            assert app.query_one(pane).region.area > 0, pane
        assert "no run yet" in text(app.query_one("#phases-body"))


async def test_select_workload_then_cycle_mode_and_dynamic() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#workload-list").focus()
        await pilot.press("down")
        await pilot.pause()
        assert app.target != "pointwise-chain"
        chosen = app.target
        await pilot.press("m")
        assert app.query_one("#set-mode", Select).value == "reduce-overhead"
        await pilot.press("m", "m", "m")
        assert app.query_one("#set-mode", Select).value == "default"
        await pilot.press("d")
        assert app.query_one("#set-dynamic", Select).value == "true"
        settings = app.settings_for_run()
        assert settings is not None
        assert (settings.target, settings.mode, settings.dynamic) == (chosen, "default", "true")


async def test_mouse_picks_workload_and_setting() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        lst = app.query_one("#workload-list", OptionList)
        second = lst.get_option_at_index(1).id
        # The first option spans a few wrapped lines; click well inside the second.
        first_lines = sum(1 for line in lst._lines if line[0] == 0)  # (option, line) pairs
        await pilot.click("#workload-list", offset=(3, first_lines + 1))
        await pilot.pause()
        assert app.target == second
        await pilot.click("#set-cache")
        await pilot.pause()
        await pilot.press("down", "enter")
        await pilot.pause()
        assert app.query_one("#set-cache", Select).value == "cold"


async def test_a_file_target_given_at_start_is_kept(
    engine: type[ScriptedLiveRun], tmp_path: Path
) -> None:
    mine = tmp_path / "mine.py"
    mine.write_text("def build(device, dtype):\n    return (lambda x: x), (1,)\n")
    app = make_app(engine=engine, target=str(mine))
    async with app.run_test(size=SIZE) as pilot:
        await painted(pilot)
        assert app.query_one(WorkloadPicker).target == str(mine)
        assert app.query_one("#workload-path", Input).value == str(mine)
        await pilot.press("r")
        await wait_for(pilot, lambda: engine.instances)
        assert engine.instances[0].settings.target == str(mine)
        await wait_for(pilot, lambda: not app.runs.busy)


async def test_cli_settings_are_the_initial_choices() -> None:
    s = RunSettings(target="gelu-mlp", mode="max-autotune", dynamic="false", size="small")
    app = make_app(target="gelu-mlp", settings=s)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one("#set-mode", Select).value == "max-autotune"
        assert app.query_one("#set-size", Select).value == "small"
        lst = app.query_one("#workload-list", OptionList)
        assert lst.get_option_at_index(lst.highlighted or 0).id == "gelu-mlp"


async def test_bad_file_shows_one_line_error_and_runs_nothing(
    engine: type[ScriptedLiveRun], tmp_path: Path
) -> None:
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        inp = app.query_one("#workload-path", Input)
        inp.focus()
        inp.value = str(tmp_path / "nope.py")
        await pilot.press("enter")
        await pilot.pause()
        err = app.query_one("#workload-error")
        assert err.display
        assert "workload file not found" in text(err)
        assert "\n" not in (app.query_one(WorkloadPicker).error or "\n")
        assert app.target == "pointwise-chain"  # the bad path was not taken
        assert any("workload file not found" in n for n in notes(app))
        assert "workload file not found" in status_text(app)
        app.show_tab("log")
        await pilot.pause()
        assert any("not found" in line.text for line in app.query_one(LogPane).lines)
        # A file without build(): named, with what to add.
        bad = tmp_path / "mine.py"
        bad.write_text("def model(x):\n    return x\n")
        inp.value = str(bad)
        await pilot.press("enter")
        await pilot.pause()
        assert "defines no build(device, dtype) function" in " ".join(text(err).split())
        # A good file is taken; if it vanishes, r reports instead of starting a run.
        bad.write_text("def build(device, dtype):\n    return (lambda x: x), (1,)\n")
        await pilot.press("enter")
        await pilot.pause()
        assert not err.display and app.target == str(bad)
        bad.unlink()
        app.query_one("#kernels-table").focus()
        await pilot.press("r")
        await pilot.pause()
        assert engine.instances == []
        assert any("not found" in n for n in notes(app))
        assert "not found" in status_text(app)
        assert app.is_running


async def test_escape_drops_a_refused_path_and_its_error(
    engine: type[ScriptedLiveRun], tmp_path: Path
) -> None:
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        inp = app.query_one("#workload-path", Input)
        inp.focus()
        inp.value = str(tmp_path / "nope.py")
        await pilot.press("enter")
        await pilot.pause()
        err = app.query_one("#workload-error")
        assert err.display and "not found" in status_text(app)
        await pilot.press("escape")
        await pilot.pause()
        assert not err.display and app.query_one(WorkloadPicker).error is None
        assert inp.value == "" and app.target == "pointwise-chain"
        assert "not found" not in status_text(app)
        # With nothing to drop, Escape is the app's again: it cancels a run.
        engine.hold = True
        app.query_one("#kernels-table").focus()
        await pilot.press("r")
        await wait_for(pilot, lambda: app.runs.busy)
        inp.focus()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.runs.busy)


# --- a run, live ---------------------------------------------------------------------------


async def test_compile_fills_panes_live_and_kernel_source_opens(
    engine: type[ScriptedLiveRun],
) -> None:
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        run = app.session.latest_run
        assert run is not None and run.status == "ok"
        assert engine.instances[0].settings.target == "pointwise-chain"
        table = app.query_one("#kernels-table", DataTable)
        assert table.row_count == 1
        assert "cpp_fused_cos_mul_sin_0" in str(table.get_row_at(0))
        bench = text(app.query_one("#benchmark-body"))
        assert "4.00x" in bench and "break-even" in bench
        assert "compile 0/0" in text(app.query_one("#phases-body"))
        assert "Runs (1)" in str(app.query_one("#runs").border_title)
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, KernelSourceScreen)
        assert app.screen.query_one("#kernel-source").border_title == "generated cpp"
        side = text(app.screen.query_one("#kernel-ops").query_one("Static"))
        assert "aten.sin" in side
        await pilot.press("escape")
        assert not isinstance(app.screen, KernelSourceScreen)


async def test_runs_are_kept_selectable_and_compared(engine: type[ScriptedLiveRun]) -> None:
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        await pilot.press("m", "r")
        await wait_for(pilot, lambda: not app.runs.busy and len(app.session.runs) == 2)
        first, second = app.session.runs
        assert app.selected_run_id == second
        settings = app.session.runs[second].settings
        assert settings is not None and settings.mode == "reduce-overhead"
        bench = text(app.query_one("#benchmark-body"))
        assert "#1" in bench and "#2" in bench and "red-ovh" in bench
        runs = app.query_one("#runs", OptionList)
        runs.focus()
        runs.highlighted = 0
        await pilot.press("enter")
        await pilot.pause()
        assert app.selected_run_id == first and not app._follow


async def test_cancel_kills_the_run_and_keeps_what_was_captured(
    engine: type[ScriptedLiveRun],
) -> None:
    engine.hold = True
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.latest_run and app.session.latest_run.kernels)
        await pilot.press("c")
        await wait_for(pilot, lambda: not app.runs.busy)
        run = app.session.latest_run
        assert run is not None and run.status == "cancelled"
        assert run.kernels and run.compiles  # captured data stays
        assert app.query_one("#kernels-table", DataTable).row_count == 1
        assert engine.instances[0].reason == "cancelled by user"
        await wait_for(pilot, lambda: any("cancelled" in n for n in notes(app)))
        assert app.is_running
        await pilot.press("c")  # nothing left to cancel: says so, stays up
        await wait_for(pilot, lambda: any("nothing to cancel" in n for n in notes(app)))


async def test_q_after_a_cancel_leaves_no_worker(engine: Any) -> None:  # subclassed below
    """The standby worker spawned as a run is cancelled is still importing
    torch when q comes: quitting kills it, it is not left to PID 1."""

    class KillsItsWorker(engine):
        def cancel(self, reason: str = "cancelled by user") -> None:
            self.worker.cancel(reason)  # as LiveRun does with the worker it was handed
            super().cancel(reason)

    KillsItsWorker.hold = True
    app = make_app(engine=Engine(live_run=KillsItsWorker), start_standby=True)

    def workers() -> list[psutil.Process]:
        return [
            p
            for p in psutil.Process().children()
            if "dlcprof.worker" in " ".join(p.cmdline()) and p.status() != psutil.STATUS_ZOMBIE
        ]

    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.runs.standby_ready, timeout=120)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.runs)
        handed = KillsItsWorker.instances[0].worker.pid
        await pilot.press("c")
        # The next standby worker, spawned once the cancelled run exited: q at once.
        await wait_for(pilot, lambda: [p for p in workers() if p.pid != handed])
        await pilot.press("q")
    # The quit itself killed it: polled for the event, 2 s at most.
    deadline = time.monotonic() + 2.0
    while workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert workers() == []


async def test_escape_cancels_too(engine: type[ScriptedLiveRun]) -> None:
    engine.hold = True
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.runs)
        app.query_one("#kernels-table").focus()
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.runs.busy)
        assert app.session.latest_run is not None
        assert app.session.latest_run.status == "cancelled"


async def test_worker_crash_is_one_line_error_and_data_stays(engine: type[ScriptedLiveRun]) -> None:
    engine.exit_event = ev.WorkerExited(
        returncode=-11, signal="SIGSEGV", message="worker died with SIGSEGV: the compile crashed"
    )
    engine.script = staticmethod(lambda rid, s: scripted_run(rid, s)[:-2])  # no RunFinished
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        run = app.session.latest_run
        assert run is not None and run.status == "crashed" and run.kernels
        assert "crashed" in status_text(app) and "SIGSEGV" in status_text(app)
        assert any("SIGSEGV" in n and "press r to retry" in n for n in notes(app))
        app.query_one("#tabs", TabbedContent).active = "tab-log"
        await pilot.pause()
        log = app.query_one(LogPane)
        assert any("SIGSEGV" in line.text for line in log.lines)
        assert app.query_one("#kernels-table", DataTable).row_count == 1
        assert app.is_running


async def test_compile_error_is_reported_with_what_to_do(engine: type[ScriptedLiveRun]) -> None:
    def failing(rid: str, s: RunSettings) -> list[ev.Event]:
        events = scripted_run(rid, s)[:4]
        return events + [
            ev.ErrorRaised(
                run_id=rid,
                stage="compile",
                message="InductorError: boom",
                traceback="Traceback...\nInductorError: boom",
            ),
            ev.RunFinished(run_id=rid, status="error", wall_s=1.0),
        ]

    engine.script = staticmethod(failing)
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        assert any("compile failed: InductorError: boom" in n for n in notes(app))
        assert any("aot_eager" in n for n in notes(app))
        assert "failed" in status_text(app)
        assert "Log ⚠ 1" in str(app.query_one("#tabs", TabbedContent).get_tab("tab-log").label)


async def test_recompile_limit_is_a_red_banner(engine: type[ScriptedLiveRun]) -> None:
    def limited(rid: str, s: RunSettings) -> list[ev.Event]:
        events = scripted_run(rid, s)
        hit = ev.RecompileLimitHit(
            run_id=rid, function="forward", limit=8, message="hit config.recompile_limit (8)"
        )
        return events[:-1] + [hit, events[-1]]

    engine.script = staticmethod(limited)
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        banner = app.query_one(AlarmBanner)
        assert not banner.display
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        await painted(pilot)
        assert banner.display
        assert "RECOMPILE LIMIT HIT" in await drawn(pilot, banner)
        assert "EAGER" in text(banner)


async def test_nothing_compiled_is_the_red_banner_and_no_speedup(
    engine: type[ScriptedLiveRun],
) -> None:
    def refused(rid: str, s: RunSettings) -> list[ev.Event]:
        events = [e for e in scripted_run(rid, s) if not isinstance(e, ev.BenchmarkMeasured)]
        nothing = ev.NothingCompiled(
            run_id=rid,
            frames=1,
            fail_type="Unsupported",
            fail_reason="Attempted to wrap RNN, GRU, or LSTM",
            location="m.py:3",
            hints=["Set torch._dynamo.config.allow_rnn=True"],
        )
        return events[:-1] + [nothing, events[-1]]

    engine.script = staticmethod(refused)
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        banner = app.query_one(AlarmBanner)
        assert banner.display and "NOTHING COMPILED" in text(banner)
        assert "allow_rnn=True" in text(banner)
        assert "nothing compiled" in text(app.query_one("#benchmark-body"))


async def test_shape_sweep_runs_static_then_dynamic_and_compares(
    engine: type[ScriptedLiveRun],
) -> None:
    app = make_app(engine=engine, target="variable-length")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await wait_for(pilot, lambda: len(engine.instances) == 2 and not app.runs.busy)
        first, second = (i.settings for i in engine.instances)
        assert (first.sweep, first.dynamic, first.benchmark) == (True, "false", False)
        assert (second.sweep, second.dynamic, second.benchmark) == (True, "true", False)
        body = text(app.query_one("#recompiles-body"))
        assert "Static vs dynamic" in body
        assert "dynamic shapes cut it by 40%" in body  # 1.0 s static vs 0.6 s dynamic
        # No per-kernel times: said for what the user did (s), not for a flag never given.
        hint = " ".join(text(app.query_one("#kernels-hint")).split())
        assert "a shape sweep skips the benchmark" in hint and "--no-benchmark" not in hint


async def test_a_sweep_of_a_workload_without_inputs_for_is_refused_at_once(
    engine: type[ScriptedLiveRun],
) -> None:
    app = make_app(engine=engine, target="tiny-ops")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("s")
        await wait_for(
            pilot, lambda: any("has no inputs_for(size, device, dtype)" in n for n in notes(app))
        )
        assert not engine.instances  # no worker started


async def test_a_second_run_waits_for_the_first(engine: type[ScriptedLiveRun]) -> None:
    engine.hold = True
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.runs)
        await pilot.press("r")
        assert len(engine.instances) == 1
        assert any("press c to cancel" in n for n in notes(app))
        await pilot.press("c")
        await wait_for(pilot, lambda: not app.runs.busy)


# --- saving -------------------------------------------------------------------------------


async def test_save_writes_the_report_folder_and_shows_the_path(
    engine: type[ScriptedLiveRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)  # reports go to ./dlcprof-reports/<workload>-<stamp>
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("ctrl+s")
        assert any("nothing to save yet" in n for n in notes(app))
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.runs.last_saved)
        folder = app.runs.last_saved
        assert folder is not None and folder.is_relative_to(tmp_path / "dlcprof-reports")
        assert (folder / "session.json").exists() and (folder / "report.html").exists()
        await wait_for(pilot, lambda: any(str(folder) in n for n in notes(app)))
        from dlcprof.report import load_session

        assert len(load_session(folder / "session.json").runs) == 1


async def test_save_failure_is_one_line_and_session_kept(engine: type[ScriptedLiveRun]) -> None:
    from dlcprof.report import ReportError

    def refuse(session, directory):
        raise ReportError(f"cannot create {directory}: No space left on device")

    app = make_app(engine=Engine(live_run=live_runs(engine), save=refuse))
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        before = len(app.session.events)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("save failed" in n for n in notes(app)))
        assert "No space left" in status_text(app)
        assert len(app.session.events) == before and app.is_running


async def test_unwritable_save_asks_where_and_saves_there(
    engine: type[ScriptedLiveRun], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The usual place cannot be created: dlcprof-reports is a file (root or not).
    monkeypatch.chdir(tmp_path)
    (tmp_path / "dlcprof-reports").write_text("not a folder")
    from dlcprof.tui.screens import SaveScreen

    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        events = len(app.session.events)
        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: any("save failed" in n for n in notes(app)))
        (failed,) = [n for n in notes(app) if "save failed" in n]
        assert "cannot create dlcprof-reports" in failed and "\n" not in failed
        assert "press ctrl+s to save it elsewhere" in failed
        assert len(app.session.events) == events and app.is_running  # nothing lost
        failed_why = app.runs.save_failed
        await pilot.press("ctrl+s")  # now it asks where, with a place that works
        await wait_for(pilot, lambda: isinstance(app.screen, SaveScreen))
        field = app.screen.query_one("#save-path", Input)
        assert field.value.startswith(tempfile.gettempdir())
        field.value = str(tmp_path / "elsewhere")
        await pilot.press("enter")
        await wait_for(
            pilot, lambda: app.runs.last_saved or app.runs.save_failed != failed_why, timeout=20
        )
        assert app.runs.last_saved == (tmp_path / "elsewhere").resolve(), notes(app)
        await wait_for(pilot, lambda: "save failed" not in status_text(app))  # no stale error
        from dlcprof.report import load_session

        assert len(load_session(tmp_path / "elsewhere").runs) == 1


async def test_a_key_goes_to_each_pane_and_the_focused_pane_stands_out() -> None:
    from dlcprof.tui.panes import FOCUSABLE

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        assert app.query_one("#tabs").size.height >= app.query_one("#kernels").size.height
        framed = [app.query_one(f"#{p.name}") for p in FOCUSABLE if p.place != "tab"]
        framed.append(app.query_one("#tabs"))
        for pane in FOCUSABLE:
            await pilot.press(pane.key)
            await pilot.pause()
            widget = app.query_one(f"#{pane.name}")
            assert app.focused is not None
            assert app.focused is widget or widget in app.focused.ancestors, pane.name
            holder = app.query_one("#tabs") if pane.place == "tab" else widget
            if pane.place == "tab":
                assert app.query_one("#tabs", TabbedContent).active == f"tab-{pane.name}"
            heavy = [w for w in framed if w.styles.border_top[0] == "heavy"]
            assert heavy == [holder], pane.name
        # z: the focused pane fills the screen; z again (or Escape) puts it back.
        await pilot.press("3", "z")
        await pilot.pause()
        assert app.screen.maximized is app.query_one("#kernels")
        await pilot.press("z")
        assert app.screen.maximized is None
        # The Benchmark pane, 44% of the row in the layout, fills the width too.
        await pilot.press("2", "z")
        await pilot.pause()
        benchmark = app.query_one("#benchmark")
        assert app.screen.maximized is benchmark
        assert benchmark.outer_size.width == app.screen.size.width
        await pilot.press("z", "4", "z")
        await pilot.pause()
        assert app.screen.maximized is app.query_one("#tabs")
        await pilot.press("escape")
        await pilot.pause()
        assert app.screen.maximized is None


async def test_help_lines_wrap_inside_their_column() -> None:
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("question_mark")
        await pilot.pause()
        lines = [line.rstrip() for line in text(app.screen.query_one("#help-text")).splitlines()]
    keyed = [line for line in lines if line.strip() and "  " in line.strip()[:10]]
    assert len(keyed) > 10
    # No word left alone on a line, and a wrapped key line goes on under its text.
    assert all(len(line.split()) > 1 for line in lines if line.strip()), lines
    column = len(keyed[0]) - len(keyed[0].split("  ", 1)[1].lstrip())
    for line in lines:
        if line and line[0] == " " and line.strip():
            assert line[:column].strip() == "", line


async def test_the_paper_screen_repaints_as_the_plan_runs(engine: type[ScriptedLiveRun]) -> None:
    """No polling: the paper pane is repainted from the events folded, like the others."""
    from helpers.paper import paper_events

    from dlcprof.tui.panes import AFFECTS
    from dlcprof.tui.screens import PaperScreen

    assert "paper" in AFFECTS[ev.PaperPlanned] and "paper" in AFFECTS[ev.RunFinished]
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        app.push_screen(PaperScreen())
        await pilot.pause()
        progress = app.screen.query_one("#paper-progress")
        assert "no paper run in this session" in text(progress)
        for e in paper_events():
            app.emit(e)
        await wait_for(pilot, lambda: "done: 6 of 6 runs" in text(progress))
        assert "Per workload" in text(app.screen.query_one("#paper-tables"))


def test_the_runs_table_gives_a_workload_its_whole_name_when_there_is_room() -> None:
    from rich.console import Console

    from dlcprof.session import Session
    from dlcprof.tui.view import View
    from dlcprof.tui.widgets.benchmark import runs_table

    session = Session.from_events(scripted_run("r1", RunSettings(target="pointwise-chain")))
    console = Console(width=90, record=True)
    console.print(runs_table(View(session, session.latest_run, None), 90))
    assert "pointwise-chain" in console.export_text()


def test_kernel_source_lines_name_the_file_not_the_build_machines_folders() -> None:
    from dlcprof.tui.screens import source_lines

    line = "/home/ci/build/workloads/chain.py:3 y = x.sin()"
    k = ev.KernelGenerated(
        run_id="r",
        compile_id="0/0",
        name="k",
        kind="pointwise",
        fused_ops=[],
        source="",
        order=0,
        t=0.0,
        source_lines=[line],
    )
    shown = source_lines(k).plain
    assert shown == "chain.py:3  y = x.sin()" and "/home" not in shown


# --- keys, help, replay, determinism --------------------------------------------------------


def _keys_of(line: str, key: str) -> bool:
    """Whether a help line is the one for ``key``: its key column names it."""
    keys = line.strip().split("  ")[0]
    if "-" in keys and keys[0].isdigit():
        lo, hi = keys.split("-")
        return key.isdigit() and (lo <= key <= hi or key == "0")
    return key in keys.split(" / ")


async def test_every_action_is_bound_in_the_palette_in_help_and_in_the_replay_check(
    engine: type[ScriptedLiveRun],
) -> None:
    """One table (tui/actions.py) feeds the keys, the palette, the help screen
    and what a replay allows: every action must appear in each."""
    from textual.actions import parse

    from dlcprof.session import Session
    from dlcprof.tui.actions import ACTIONS

    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        bound = {(b.key, b.action) for b in app.BINDINGS if isinstance(b, Binding)}
        titles = [c.title for c in app.get_system_commands(app.screen)]
        await pilot.press("question_mark")
        assert isinstance(app.screen, HelpScreen)
        help_lines = text(app.screen.query_one("#help-text")).splitlines()
        await pilot.press("escape")
        assert not isinstance(app.screen, HelpScreen)
        footer_keys = {b.key for _, b, enabled, _ in app.active_bindings.values() if b.show}
    assert {"r", "m", "d", "s", "c", "ctrl+s", "question_mark", "q"} <= footer_keys
    for a in ACTIONS:
        assert (a.key, a.action) in bound, a
        keyed = (f"({a.display}", f" {a.display})", f"-{a.display}", f"{a.display}-")
        # (The rank keys come with ranks: tests/tui/test_tui_ranks.py.)
        assert any(k in t for k in keyed for t in titles) is (not a.ranks), a
        # Its key starts a line of the help (alone, beside another key, or in a
        # range); the rank keys only with ranks (tests/tui/test_tui_ranks.py).
        rows = [i for i, line in enumerate(help_lines) if _keys_of(line, a.display)]
        assert bool(rows) is (not a.ranks), a
        if not rows:
            continue
        row = rows[0]
        wrapped = " ".join(" ".join(help_lines[row : row + 3]).split())
        assert a.help.split(":")[0] in wrapped, a
    assert len(titles) == len(set(titles))  # Textual's own Quit, Maximize: replaced by ours

    events = scripted_run("r1", RunSettings(target="pointwise-chain"))
    replay = make_app(engine=engine, session=Session.from_events(events), replay=True)
    async with replay.run_test(size=SIZE):
        allowed = {t for t in (c.title for c in replay.get_system_commands(replay.screen))}
        for a in ACTIONS:
            shown = a.replay and not a.ranks  # those need a torchrun job's ranks
            assert replay.check_action(a.name, parse(a.action)[2]) is shown, a
            if a.title:
                assert any(t.startswith(a.title + " (") for t in allowed) is shown, a


async def test_replay_shows_a_saved_session_without_compile_keys(
    engine: type[ScriptedLiveRun],
) -> None:
    from dlcprof.session import Session

    events = scripted_run("r1", RunSettings(target="pointwise-chain"))
    app = make_app(engine=engine, session=Session.from_events(events), replay=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r", "s", "m")
        await pilot.pause()
        assert engine.instances == []
        assert app.query_one("#kernels-table", DataTable).row_count == 1
        assert "replay" in status_text(app)
        assert not app.query("#workload-list")
        shown = {b.key for _, b, enabled, _ in app.active_bindings.values() if b.show}
        assert "r" not in shown and "ctrl+s" in shown


async def test_deterministic_mode_prints_no_elapsed_time(engine: type[ScriptedLiveRun]) -> None:
    engine.hold = True
    engine.script = staticmethod(lambda rid, s: scripted_run(rid, s)[:4])  # dynamo left open
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: "compiling" in status_text(app))
        assert " s" not in status_text(app).split("│")[1]  # "run run1 · dynamo", no seconds
        assert "running" in text(app.query_one("#phases-body"))
        await pilot.press("c")
        await wait_for(pilot, lambda: not app.runs.busy)


async def test_standby_worker_is_prepared_on_open() -> None:
    prepared = threading.Event()

    class FakeStandby:
        def prepare(self) -> None:
            prepared.set()

        def take(self) -> None:
            return None

        def close(self) -> None:
            pass

    standby = cast(Callable[[], Standby], FakeStandby)  # a stand-in
    app = make_app(engine=Engine(standby=standby), start_standby=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, prepared.is_set)
        await wait_for(pilot, lambda: "standby ready" in status_text(app))


async def test_events_are_batched_and_keys_answered_during_a_flood(
    engine: type[ScriptedLiveRun], monkeypatch: pytest.MonkeyPatch
) -> None:
    def flood(rid: str, s: RunSettings) -> list[ev.Event]:
        events = scripted_run(rid, s)
        logs = [
            ev.LogEmitted(run_id=rid, level="info", source="stdout", message=f"line {i}")
            for i in range(20000)
        ]
        return events[:3] + logs + events[3:]

    engine.script = staticmethod(flood)
    engine.pause_s = 0.0
    engine.hold = True  # keys are pressed while the run is still live
    app = make_app(engine=engine)
    repaints = 0
    original_repaint, original_cycle = app._repaint, app.action_cycle
    handled: list[bool] = []  # per key: was the run still streaming when it was handled?

    def counting() -> None:
        nonlocal repaints
        repaints += 1
        original_repaint()

    def cycle(name: str) -> None:
        handled.append(app.runs.busy)
        original_cycle(name)

    monkeypatch.setattr(app, "_repaint", counting)
    monkeypatch.setattr(app, "action_cycle", cycle)
    async with app.run_test(size=SIZE) as pilot:
        app.query_one("#tabs", TabbedContent).active = "tab-log"  # the costly pane, shown
        await pilot.press("r")
        await wait_for(pilot, lambda: len(app.session.events) > 500)
        # Keys are answered mid-flood, not after it: (benchmarks/tui_latency.py
        # measures how fast).
        for _ in range(4):
            await pilot.press("m")
        await wait_for(pilot, lambda: len(handled) == 4)
        assert handled == [True] * 4
        # Cycled all the way round.
        await wait_for(pilot, lambda: app.query_one("#set-mode", Select).value == "default")
        await wait_for(pilot, lambda: not app.pending_events)
        assert repaints < 20000 / 20  # folded in batches, not one repaint per event
        assert app.query_one(LogPane).lines  # and the log did draw
        await pilot.press("c")
        await wait_for(pilot, lambda: not app.runs.busy)


def test_the_ui_process_never_imports_torch(tmp_path: Path) -> None:
    """Run the app under Pilot (standby on, keys pressed) and look at sys.modules."""
    script = textwrap.dedent(
        """
        import asyncio, sys
        from dlcprof.tui.app import DlcprofApp

        async def main():
            app = DlcprofApp(deterministic=True)
            async with app.run_test(size=(160, 48)) as pilot:
                await pilot.press("m", "d", "question_mark", "escape", "down")
                await pilot.pause(0.5)
            assert "torch" not in sys.modules, "torch imported"
            print("ok")

        asyncio.run(main())
        """
    )
    root = REPO
    done = subprocess.run(
        [sys.executable, "-c", script],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
        env={**__import__("os").environ, "PYTHONPATH": str(root)},
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert "ok" in done.stdout


def test_running_phases_nest_with_finished_ones() -> None:
    from dlcprof.tui.widgets.phases import _rows

    def opened_at(name: str, t: float) -> ev.PhaseStarted:
        return ev.PhaseStarted(run_id="r", compile_id=None, name=name, thread=1, t=t)

    def done(name: str, start: float, dur: float, thread: int, cid: str | None) -> ev.PhaseEnded:
        return ev.PhaseEnded(
            run_id="r", compile_id=cid, name=name, thread=thread, start_t=start, duration_s=dur
        )

    opened = [
        opened_at("dynamo", 10.0),
        opened_at("entire_frame_compile", 10.1),
        opened_at("inductor_compile", 10.5),
    ]
    finished = [
        done("bytecode_tracing", 10.2, 0.1, 1, "0/0"),
        done("compile_file", 10.6, 0.2, 2, None),
    ]
    rows = {r.name: r for r in _rows(finished, opened)}
    assert [rows[n].depth for n in ("dynamo", "entire_frame_compile", "bytecode_tracing")] == [
        0,
        1,
        2,
    ]
    assert rows["inductor_compile"].depth == 2 and rows["inductor_compile"].duration is None
    assert rows["compile_file"].depth == 0  # another thread (the g++ pool)
    pooled = {r.name: r.pool for r in _rows(finished, opened, main=1)}
    assert pooled == {n: n == "compile_file" for n in pooled}


def test_a_phase_line_says_pool_thread_and_cuts_a_long_name_in_its_middle() -> None:
    """The pane labels a g++ build off the compiling thread as report.md does,
    and a name longer than its column keeps its end ("…fw_compiler_base")."""
    from types import SimpleNamespace

    from dlcprof.tui.widgets.phases import PhaseTimeline, _Row

    timeline = PhaseTimeline(cast(View, SimpleNamespace(now=None)))  # all it reads
    timeline.name_w = 40
    pool = timeline._line(_Row("compile_file", 0, 0.0, 1.0, 2, pool=True), 0.0, 1.0, 1.0, 8)
    assert "compile_file (pool thread)" in pool.plain
    timeline.name_w = 24
    name = "compile_fx.<locals>.fw_compiler_base"
    line = timeline._line(_Row(name, 4, 0.0, 1.0, 1), 0.0, 1.0, 1.0, 8).plain
    cell = line[13 + 4 : 13 + 24]  # after the stage label and the indent
    head, tail = cell.split("…")
    assert name.startswith(head) and name.endswith(tail) and len(cell) == 24 - 4


async def test_log_draws_when_shown_after_scrolling_another_pane(
    engine: type[ScriptedLiveRun],
) -> None:
    # Textual 8.2 skipped the Log's first resize in this order, leaving it blank.
    from helpers.recorded import load_fixture

    recorded = [e for e in load_fixture("pointwise_chain") if not isinstance(e, ev.WorkerExited)]
    engine.script = staticmethod(lambda rid, s: [of_run(e, rid) for e in recorded])
    app = make_app(engine=engine)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: not app.runs.busy and app.session.runs)
        app.query_one("#phases").focus()
        await pilot.press("down", "down", "up")
        await pilot.pause()
        await pilot.press("5")
        await wait_for(pilot, lambda: app.query_one(LogPane).lines)
