"""The TUI on a live program: ``dlcprof -- CMD ARGS…``.

The same panes as a run; each process of the program that compiles is a run
in the runs list (the newest is followed). The program's output goes to the
Log pane. q while it runs asks: stop it, or detach (it runs on, dlcprof saves
what it saw). The workload picker and the run keys are hidden: the program,
not dlcprof, decides what compiles.
"""

from __future__ import annotations

import os
import threading
import time
from collections.abc import Sequence

from rich.text import Text
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.attach.program import AttachedProgram
from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job.program import program_lines, program_state
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.program_dialog import DETACH, STOP, StopOrDetachScreen

# Keys that start or change a run of a workload: none of them apply here.
_RUN_ACTIONS = {"compile", "cycle", "sweep", "all_modes", "paper", "cancel"}
PROGRAM_NOTE_S = 0.5  # the sidebar's program lines: wall time moves, twice a second is plenty


class AttachedApp(DlcprofApp):
    def __init__(self, command: Sequence[str], hotspots: bool = True, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(start_standby=False, **kwargs)
        self.command = list(command)
        self.hotspots = hotspots  # py-spy on the program's processes (--no-hotspots: off)
        self.program: AttachedProgram | None = None
        self.detached = False
        self._quit_when_ended = False

    def on_mount(self) -> None:
        super().on_mount()
        for hidden in ("#workloads", "#settings"):
            self._home.query_one(hidden).display = False
        self._home.query_one("#sidebar").mount(Static(id="program-note"), before=0)
        self.program = AttachedProgram(
            self.command, self.emit, output="capture", hotspots=self.hotspots
        )
        self.set_interval(PROGRAM_NOTE_S, self._paint_program)

    def _paint_program(self) -> None:
        """The program's timeline and graph lives, in the sidebar."""
        now = None if self.deterministic else time.time()
        lines = program_lines(self.session, now) or [
            f"program: {text.command_words(self.command, os.getcwd())}"
        ]
        lines += fddp.session_lines(self.session)
        self._home.query_one("#program-note", Static).update(Text("\n".join(lines)))
        if now is not None and self.program_running:
            # The ranks' axis ends at now, and their skew grows with it.
            self.mark_dirty("ranks")
            self.mark_dirty("divergence")

    @property
    def program_running(self) -> bool:
        return self.program is not None and self.session.program_exit is None

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in _RUN_ACTIONS:
            return False
        return super().check_action(action, parameters)

    def worker_state(self) -> tuple[str, str]:
        return program_state(self.session, None if self.deterministic else time.time())

    def _react(self, e: ev.Event) -> None:
        super()._react(e)
        if isinstance(e, ev.ProcessAttached) and self._follow:
            self._select(e.run_id)
        elif isinstance(e, ev.ProgramExited):
            self.notify(e.message, timeout=10)
            if self._quit_when_ended:
                self.exit()

    async def action_quit(self) -> None:
        if not self.program_running:
            self.exit()
            return
        self.push_screen(
            StopOrDetachScreen(text.command_words(self.command, os.getcwd())), self._chosen
        )

    def _chosen(self, choice: str | None) -> None:
        program = self.program
        if program is None or choice is None:
            return
        if choice == STOP:
            self._quit_when_ended = True
            self.notify("stopping the program: Ctrl-C first, as in a terminal", timeout=5)
            threading.Thread(target=program.stop, name="dlcprof-stop", daemon=True).start()
        elif choice == DETACH:
            self.detached = True
            program.detach()
            program.wait(5)
            self.exit()
