"""The attached program's controller driven directly (no Textual): stop,
detach, the signal after the TUI closed, the save and the exit code, with the
program scripted through ``Engine.program``."""

from __future__ import annotations

import queue
import signal
from collections.abc import Callable
from pathlib import Path

import pytest
from helpers.engine import fold_until
from helpers.scripted_program import ScriptedProgram, launcher

from dlcprof import events as ev
from dlcprof.engine import Engine
from dlcprof.session import Session
from dlcprof.signals import Stopped
from dlcprof.tui.attached import ProgramController
from dlcprof.tui.controller import RunController


@pytest.fixture
def program() -> type[ScriptedProgram]:
    return type("Scripted", (ScriptedProgram,), {"instances": []})


def started(engine: Engine) -> tuple[ProgramController, RunController, queue.Queue]:
    """A controller whose program runs, its first events folded."""
    inbox: queue.Queue[ev.Event] = queue.Queue()
    session = Session()
    c = ProgramController(session, inbox.put, ["python", "train.py"], hotspots=False, engine=engine)
    runs = RunController(session, inbox.put, engine, standby=False)  # folds, as the app's tick
    c.start()
    fold_until(runs, inbox, lambda: session.runs.get("pid7") and session.runs["pid7"].compiles)
    return c, runs, inbox


def saving_to(folder: Path, saved: list[Path | None]) -> Callable[[Session, Path | None], Path]:
    def save(session: Session, directory: Path | None) -> Path:
        saved.append(directory)
        return folder

    return save


def test_the_program_is_started_captured_and_shown_as_running(
    program: type[ScriptedProgram],
) -> None:
    c, runs, inbox = started(Engine(program=launcher(program)))
    (spawned,) = program.instances
    assert (spawned.argv, spawned.output, spawned.hotspots) == (
        ["python", "train.py"],
        "capture",
        False,
    )
    assert c.running and c.state(None)[0] in ("running", "compiling")
    spawned.finish(3)
    fold_until(runs, inbox, lambda: not c.running)
    c.close(None)
    assert spawned.asked == []  # it ended by itself: nothing to stop
    assert c.finish(None) == (3, None)  # its own status, nothing saved


def test_stop_ends_the_program_and_then_the_tui(program: type[ScriptedProgram]) -> None:
    c, runs, inbox = started(Engine(program=launcher(program)))
    c.stop()
    assert c.stopping
    fold_until(runs, inbox, lambda: not c.running)
    end = c.session.program_exit
    assert c.ended(end) and program.instances[0].asked == ["stop"]
    assert c.finish(None) == (130, None)


def test_detach_lets_go_and_saves_what_was_seen(
    program: type[ScriptedProgram], tmp_path: Path
) -> None:
    saved: list[Path | None] = []
    c, runs, inbox = started(Engine(program=launcher(program), save=saving_to(tmp_path, saved)))
    c.detach()
    assert c.detached and program.instances[0].asked == ["detach"]
    c.close(None)
    fold_until(runs, inbox, lambda: c.session.program_exit is not None)
    code, line = c.finish(None)
    assert code == 0 and line == f"dlcprof: the session is saved to {tmp_path.resolve()}"
    assert saved == [None]


def test_the_signal_that_closed_the_tui_reaches_the_program_first(
    program: type[ScriptedProgram], tmp_path: Path
) -> None:
    saved: list[Path | None] = []
    c, runs, inbox = started(Engine(program=launcher(program), save=saving_to(tmp_path, saved)))
    stop = Stopped(signal.SIGTERM)
    c.close(stop)
    fold_until(runs, inbox, lambda: c.session.program_exit is not None)
    assert program.instances[0].asked[0] == "SIGTERM"
    code, line = c.finish(stop)
    assert code == 128 + signal.SIGTERM
    assert line == f"dlcprof: SIGTERM: the session is saved to {tmp_path.resolve()}"
    assert c.session.program_exit.returncode == 128 + signal.SIGTERM  # saved after its end


def test_a_save_that_fails_goes_elsewhere_then_says_both(
    program: type[ScriptedProgram], tmp_path: Path
) -> None:
    def refuse(session: Session, directory: Path | None) -> Path:
        raise OSError(f"cannot write {directory}")

    engine = Engine(program=launcher(program), save=refuse, elsewhere=lambda s: tmp_path / "else")
    c, runs, inbox = started(engine)
    stop = Stopped(signal.SIGHUP)
    c.close(stop)
    fold_until(runs, inbox, lambda: c.session.program_exit is not None)
    code, line = c.finish(stop)
    assert code == 128 + signal.SIGHUP
    assert line == (
        "dlcprof: error: SIGHUP (terminal closed): the session could not be saved "
        f"(cannot write None; cannot write {tmp_path / 'else'})"
    )
