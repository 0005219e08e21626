"""The TUI on a live program (``dlcprof -- CMD``): shown as it compiles; q
asks stop or detach; detach leaves the program running to its end."""

from __future__ import annotations

import os
import signal
import sys
import time
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS
from helpers.proc import Terminal, dlcprof_argv, gone, pyspy_on
from helpers.tui import SIZE, shown, wait_for
from textual.widgets import Static

from dlcprof.report import load_session
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.program_dialog import StopOrDetachScreen

FAULTS = PROGRAMS / "faults.py"


async def test_live_program_then_detach(tmp_path: Path, request: pytest.FixtureRequest) -> None:
    flag = tmp_path / "go"
    request.addfinalizer(flag.touch)  # the program ends even if the test fails half-way
    app = DlcprofApp(
        command=[sys.executable, str(FAULTS), "survive", str(flag)], deterministic=True
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(r.compiles for r in app.session.runs.values()), 120)
        run = app.session.runs[app.selected_run_id or ""]
        started = app.session.program
        assert run.process is not None and started is not None
        assert run.process.pid == started.pid
        assert app.worker_state()[0] in ("running", "compiling")
        note = app.query_one("#program", Static)
        await wait_for(pilot, lambda: "compiles took" in str(note.render()), 10)
        # The program decides its shapes: no "press s to sweep" in its Recompiles pane.
        body = shown(app.query_one("#recompiles-body", Static))
        assert "no recompile so far" in body and "sweep" not in body
        spy = run.monitors.get
        await wait_for(pilot, lambda: (s := spy("py-spy")) is not None and s.available, 60)
        await pilot.press("q")
        assert isinstance(app.screen, StopOrDetachScreen)
        await pilot.press("d")
    assert app.program is not None and app.program.detached
    program = app.program.spawned
    assert program is not None and program.output_dir is not None
    assert not pyspy_on(program.pid, 10)  # dlcprof let go: py-spy stopped with it
    assert not gone(program.pid, 0.5)  # detached: it runs on
    flag.touch()
    assert program.proc.wait(120) == 0  # (our child here: a zombie until reaped)
    assert (program.output_dir / "stdout.log").read_text().splitlines()[-1] == "finished"


async def test_stop_from_the_dialog(tmp_path: Path) -> None:
    app = DlcprofApp(command=[sys.executable, str(FAULTS), "signals"], deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: any(r.compiles for r in app.session.runs.values()), 120)
        await pilot.press("q")
        await pilot.press("s")
        await wait_for(pilot, lambda: app.session.program_exit is not None, 60)
    end = app.session.program_exit
    assert end is not None and end.returncode == 130  # KeyboardInterrupt in the program
    assert any("KeyboardInterrupt in the program" in lg.message for lg in app.session.logs)


@pytest.mark.slow
def test_a_signal_to_dlcprof_ends_the_program_then_saves_the_session(tmp_path: Path) -> None:
    """SIGTERM to ``dlcprof -- CMD``: the program gets it too, and the session
    saved after it ended holds its end."""
    argv = dlcprof_argv("--", sys.executable, str(FAULTS), "signals")
    term = Terminal(argv, tmp_path, {**os.environ, "TERM": "xterm-256color"})
    deadline = time.monotonic() + 120
    while b"compiles took" not in term.output and time.monotonic() < deadline:
        time.sleep(0.1)
    term.proc.send_signal(signal.SIGTERM)
    assert term.proc.wait(60) == 128 + signal.SIGTERM
    assert b"SIGTERM: the session is saved to" in term.output
    (folder,) = (tmp_path / "dlcprof-reports").iterdir()
    end = load_session(folder / "session.json").program_exit
    assert end is not None and end.returncode == 128 + signal.SIGTERM
    assert end.stopped_by == "SIGTERM"
