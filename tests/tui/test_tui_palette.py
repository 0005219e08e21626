"""Every entry of the command palette does something, in each kind of
session: a workload's (live), a saved one's (replay) and an attached
program's, where nothing that needs a workload is listed."""

from __future__ import annotations

import inspect
from pathlib import Path
from typing import Any

import pytest
from helpers.engine import ScriptedLiveRun, scripted_run
from helpers.scripted_program import ScriptedProgram, launcher
from helpers.tui import SIZE, drawn, wait_for
from textual.pilot import Pilot

from dlcprof.engine import Engine
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.tui import actions
from dlcprof.tui.app import DlcprofApp

NEED_A_WORKLOAD = {
    "Compile and run",
    "Cycle mode",
    "Cycle dynamic",
    "Toggle freezing",
    "Shape sweep",
    "All modes",
    "Cancel run",
    "Reproduce the paper",
    "Go to Workload",
}


@pytest.fixture(autouse=True)
def no_editor(monkeypatch: pytest.MonkeyPatch) -> None:
    """e says how to set an editor rather than start the developer's own."""
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)


def engine(tmp_path: Path) -> Engine:
    """Scripted runs and program; a save that writes nothing."""
    live = type("Run", (ScriptedLiveRun,), {"instances": [], "hold": True})
    program = type("Program", (ScriptedProgram,), {"instances": []})
    return Engine(live_run=live, program=launcher(program), save=lambda s, d: tmp_path)


def state(app: DlcprofApp, said: list[str]) -> tuple[object, ...]:
    """What an action can change, as a key press's effect would show."""
    home = app.screen_stack[0]
    live = app.runs
    instances = len(getattr(live._engine, "live_run", ScriptedLiveRun).instances)
    return (
        len(said),
        type(app.screen).__name__,
        home.maximized,
        getattr(app.focused, "id", None),  # / moves it to the filter line
        live.busy,
        live.cancelling,
        instances,
        app._exit,
    )


async def walk(app: DlcprofApp, pilot: Pilot) -> tuple[list[str], list[str]]:
    """Run each of dlcprof's palette entries from the main screen, its focus on
    the kernels: (the titles listed, those that changed nothing)."""
    said: list[str] = []
    notify = app.notify

    def counted(message: str, *args: Any, **kw: Any) -> None:
        said.append(message)
        notify(message, *args, **kw)

    setattr(app, "notify", counted)  # noqa: B010 - count every notification, however brief
    by_title = {title: a for a, title in actions.palette()}
    listed = [c for c in app.get_system_commands(app.screen) if c.title in by_title]
    idle = []
    for command in listed:
        while len(app.screen_stack) > 1:
            app.pop_screen()
        home = app.screen_stack[0]
        if home.maximized is not None:
            home.minimize()
        app.query_one("#kernels-table").focus()
        await pilot.pause()
        before = state(app, said)
        a = by_title[command.title]

        def moved(a: actions.Action = a, before: tuple[object, ...] = before) -> bool:
            if a.name == "focus":
                pane = app.query_one(f"#{a.action.split(chr(39))[1]}")
                return app.focused is not None and (
                    app.focused is pane or pane in app.focused.ancestors
                )
            return state(app, said) != before

        done = command.callback()
        if inspect.isawaitable(done):
            await done
        try:  # the effect, however long a loaded machine takes to show it
            await wait_for(pilot, moved)
        except AssertionError:
            idle.append(command.title)
    return [c.title.split(" (")[0] for c in listed], idle


async def test_every_entry_of_an_attached_program_does_something(tmp_path: Path) -> None:
    scripted = engine(tmp_path)
    app = DlcprofApp(command=["python", "train.py"], engine=scripted, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: app.session.program is not None and app.session.runs)
        # The footer and the help leave them out too.
        assert not {"r", "m", "d", "f", "s", "a", "c", "escape", "P", "0"} & set(
            app.active_bindings
        )
        await pilot.press("question_mark")
        help_text = await drawn(pilot, app.screen.query_one("#help-text"))
        assert "save the session" in help_text and "9 Runs" in help_text
        assert "compile and benchmark" not in help_text and "Workload" not in help_text
        await pilot.press("escape")
        titles, idle = await walk(app, pilot)
        assert not NEED_A_WORKLOAD & set(titles), titles
        assert idle == []
        assert titles[-1] == "Quit" and type(app.screen).__name__ == "StopOrDetachScreen"
        program: Any = scripted.program  # the scripted classes of engine() above
        program.instances[0].finish(0)
    live: Any = scripted.live_run
    assert live.instances == []  # nothing ran a workload


async def test_every_entry_of_a_workload_session_does_something(tmp_path: Path) -> None:
    app = DlcprofApp(engine=engine(tmp_path), start_standby=False, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        titles, idle = await walk(app, pilot)
        assert NEED_A_WORKLOAD <= set(titles)
        assert idle == [], idle
        app.runs.cancel()


async def test_every_entry_of_a_replay_does_something(tmp_path: Path) -> None:
    session = Session.from_events(scripted_run("r1", RunSettings(target="pointwise-chain")))
    app = DlcprofApp(
        session=session,
        replay=True,
        start_standby=False,
        deterministic=True,
        engine=engine(tmp_path),
    )
    async with app.run_test(size=SIZE) as pilot:
        titles, idle = await walk(app, pilot)
        assert "Compile and run" not in titles and "Go to Workload" not in titles
        assert idle == []
