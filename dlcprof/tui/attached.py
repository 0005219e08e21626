"""The user's own program in the TUI (``dlcprof -- CMD ARGS…``): its start,
the stop or detach that q offers, the signal that closed the TUI passed on,
and the save at the end. No Textual: the app routes q here and renders the
session, and ``Engine.program`` spawns the program (scripted in tests, as
``Engine.live_run`` is for a run).

The program, not dlcprof, decides what compiles: each of its processes that
compiles is a run in the runs list, and the panes and keys that need a
workload are left out (``workload`` in tui/panes.py and tui/actions.py).
"""

from __future__ import annotations

import os
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING

from dlcprof import events as ev
from dlcprof import text
from dlcprof.exit_codes import exit_code
from dlcprof.figures.job.program import program_state
from dlcprof.session import Session
from dlcprof.tui.controller import default_engine, save_after_stop

if TYPE_CHECKING:
    from dlcprof.attach.program import AttachedProgram
    from dlcprof.engine import Engine
    from dlcprof.signals import Stopped

# After the TUI closed: how long a stopped program, or a detached one's monitors, may take.
END_WAIT_S = 10.0
DETACH_WAIT_S = 5.0


class ProgramController:
    """The user's program in one TUI session, from its start to the exit code."""

    def __init__(
        self,
        session: Session,
        emit: Callable[[ev.Event], None],
        command: Sequence[str],
        hotspots: bool = True,
        engine: Engine | None = None,
    ) -> None:
        self.session = session
        self.emit = emit
        self.command = list(command)
        self.hotspots = hotspots  # py-spy on the program's processes (--no-hotspots: off)
        self._engine = engine
        self.spawned: AttachedProgram | None = None  # the program, once started
        self.detached = False
        self.stopping = False  # the user chose stop: the TUI closes once the program ended

    @property
    def engine(self) -> Engine:
        self._engine = self._engine or default_engine()
        return self._engine

    @property
    def words(self) -> str:
        """The command as the user would type it here."""
        return text.command_words(self.command, os.getcwd())

    def start(self) -> None:
        """Spawn the program, its output captured for the Log pane (CommandError: it cannot run)."""
        self.spawned = self.engine.program(
            self.command, self.emit, output="capture", hotspots=self.hotspots
        )

    @property
    def running(self) -> bool:
        return self.spawned is not None and self.session.program_exit is None

    def state(self, now: float | None) -> tuple[str, str]:
        """(state, detail) for the status bar."""
        return program_state(self.session, now)

    # --- what q offers ------------------------------------------------------------

    def stop(self) -> None:
        """Ctrl-C first, as in a terminal, then SIGTERM, then SIGKILL (a thread:
        each waits for the program); the TUI closes once it ended."""
        if self.spawned is None:
            return
        self.stopping = True
        threading.Thread(target=self.spawned.stop, name="dlcprof-stop", daemon=True).start()

    def detach(self) -> None:
        """Let go: the program runs on; its monitors stop and the last events come in."""
        if self.spawned is None:
            return
        self.detached = True
        self.spawned.detach()
        self.spawned.wait(DETACH_WAIT_S)

    def ended(self, e: ev.Event) -> bool:
        """Whether ``e`` ends what the user chose to stop: the TUI closes then."""
        return isinstance(e, ev.ProgramExited) and self.stopping

    # --- after the TUI closed -----------------------------------------------------

    def close(self, stop: Stopped | None) -> None:
        """A program still running stops too, the signal that closed the TUI
        first; a detached one's monitors let go of it (py-spy) before dlcprof exits."""
        program = self.spawned
        if program is None:
            return
        if program.running and not self.detached:
            if stop is not None:
                program.forward(stop.signum)
                program.wait(END_WAIT_S)
            program.stop()
            program.wait(END_WAIT_S)
        elif self.detached:
            program.wait(END_WAIT_S)

    def finish(self, stop: Stopped | None) -> tuple[int, str | None]:
        """Once the last events are folded: save what was seen when detached or
        stopped by a signal. (the exit code, the line to print)."""
        if self.detached:
            try:
                saved = self.engine.save(self.session, None).resolve()
            except Exception as e:  # noqa: BLE001 - ReportError (tui/ never imports report/)
                return 0, f"dlcprof: error: the session could not be saved: {e}"
            return 0, f"dlcprof: the session is saved to {saved}"
        if stop is not None:
            return stop.exit_code, save_after_stop(self.engine, self.session, stop.said)
        if self.spawned is None:
            return 0, None  # it never started
        return exit_code(self.session), None
