"""The TUI on a live program (``dlcprof -- CMD``): shown as it compiles; q
asks stop or detach; detach leaves the program running to its end."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS
from helpers.proc import gone, pyspy_on
from helpers.tui import SIZE, shown, wait_for
from textual.widgets import Static

from dlcprof.tui.attached import AttachedApp
from dlcprof.tui.program_dialog import StopOrDetachScreen

FAULTS = PROGRAMS / "faults.py"


async def test_live_program_then_detach(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    flag = tmp_path / "go"
    request.addfinalizer(flag.touch)  # the program ends even if the test fails half-way
    app = AttachedApp([sys.executable, str(FAULTS), "survive", str(flag)], deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(r.compiles for r in app.session.runs.values()), 120)
        run = app.session.runs[app.selected_run_id or ""]
        assert run.process is not None and run.process.pid == app.session.program.pid
        assert app.worker_state()[0] in ("running", "compiling")
        note = app.query_one("#program-note", Static)
        await wait_for(pilot, lambda: "compiles took" in str(note.render()), 10)
        # The program decides its shapes: no "press s to sweep" in its Recompiles pane.
        body = shown(app.query_one("#recompiles-body", Static))
        assert "no recompile so far" in body and "sweep" not in body
        spy = run.monitors.get
        await wait_for(pilot, lambda: spy("py-spy") and spy("py-spy").available, 60)
        await pilot.press("q")
        assert isinstance(app.screen, StopOrDetachScreen)
        await pilot.press("d")
    assert app.detached
    program = app.program
    assert program is not None and program.output_dir is not None
    assert not pyspy_on(program.pid, 10)  # dlcprof let go: py-spy stopped with it
    assert not gone(program.pid, 0.5)  # detached: it runs on
    flag.touch()
    assert program.proc.wait(120) == 0  # (our child here: a zombie until reaped)
    assert (program.output_dir / "stdout.log").read_text().splitlines()[-1] == "finished"


async def test_stop_from_the_dialog(tmp_path: Path) -> None:
    app = AttachedApp([sys.executable, str(FAULTS), "signals"], deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(r.compiles for r in app.session.runs.values()), 120)
        await pilot.press("q")
        await pilot.press("s")
        await wait_for(pilot, lambda: app.session.program_exit is not None, 60)
    end = app.session.program_exit
    assert end is not None and end.returncode == 130  # KeyboardInterrupt in the program
    assert any("KeyboardInterrupt in the program" in lg.message for lg in app.session.logs)
