"""A scripted attached program: stands in for dlcprof.attach.program.AttachedProgram
through ``Engine.program``, as ``helpers.engine.ScriptedLiveRun`` does for a run."""

from __future__ import annotations

import signal
import threading
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, cast

from dlcprof import events as ev
from helpers.program import compile_finished, program_started

if TYPE_CHECKING:
    from dlcprof.attach.program import AttachedProgram


class ScriptedProgram:
    """Emits a started program, one process and one compile, then waits: a
    signal forwarded or a stop ends it (as SIGINT ends a Python program), a
    detach lets go. Records what it was asked."""

    instances: list[ScriptedProgram] = []

    def __init__(
        self,
        argv: Sequence[str],
        emit: Callable[[ev.Event], None],
        output: str = "inherit",
        hotspots: bool = True,
        **_: object,
    ) -> None:
        self.argv, self.emit, self.output, self.hotspots = list(argv), emit, output, hotspots
        self.pid = 7
        self.asked: list[str] = []
        self.detached = False
        self._end = threading.Event()
        self._returncode: int | None = None
        type(self).instances.append(self)
        for e in [*program_started(), compile_finished("0/0", 1002.0, 1.5)]:
            emit(e)
        self._thread = threading.Thread(target=self._pump, daemon=True)
        self._thread.start()

    def _pump(self) -> None:
        self._end.wait()  # until told: a loaded machine may take minutes to reach q
        if self._returncode is None:  # detached
            self.emit(ev.ProgramExited(None, None, 1.0, "dlcprof detached", detached=True))
            return
        rc = self._returncode
        self.emit(ev.ProgramExited(rc, None, 1.0, f"the program exited with status {rc}"))

    def finish(self, returncode: int = 0) -> None:
        """The program ends by itself."""
        self._returncode = returncode
        self._end.set()

    def forward(self, signum: int, said: str | None = None) -> None:
        self.asked.append(signal.Signals(signum).name)
        self.finish(128 + signum)

    def stop(self) -> None:
        self.asked.append("stop")
        if self._returncode is None:
            self.finish(130)  # KeyboardInterrupt in the program

    def detach(self) -> None:
        self.asked.append("detach")
        self.detached = True
        self._end.set()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


def launcher(program: type[ScriptedProgram]) -> Callable[..., AttachedProgram]:
    """The class as ``Engine.program`` takes it: a stand-in with AttachedProgram's interface."""
    return cast("Callable[..., AttachedProgram]", program)
