"""Signals that end the UI process: Ctrl-C, SIGTERM (a CI timeout, ``kill``)
and SIGHUP (the terminal or SSH session closed).

Python's default for SIGTERM and SIGHUP is to die at once: no ``finally``, no
report, and the worker, in a session of its own, compiles on. Within
``stop_on_signals`` each of them is only noted; the caller stops the worker
group, writes what was captured and exits with ``Stopped.exit_code`` (128 +
the signal number, as a shell reports it).
A signal that was ignored when we started (``nohup``, a background job's
SIGINT) stays ignored, except those a caller takes anyway: the TUI takes
SIGHUP, since without its terminal it can only spin. Main thread only, as
Python requires.
"""

from __future__ import annotations

import contextlib
import os
import select
import signal
from collections.abc import Callable, Iterator

SIGNALS = tuple(
    getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP") if hasattr(signal, name)
)
HANGUP = getattr(signal, "SIGHUP", None)  # the terminal closed (none on Windows)


class Stopped:
    """A stop signal that arrived."""

    def __init__(self, signum: int) -> None:
        self.signum = signum
        self.name = signal.Signals(signum).name

    @property
    def exit_code(self) -> int:
        return 128 + self.signum

    @property
    def said(self) -> str:
        """How the user knows it: "Ctrl-C", "SIGTERM", "SIGHUP (terminal closed)"."""
        if self.signum == signal.SIGINT:
            return "Ctrl-C"
        if self.signum == HANGUP:
            return "SIGHUP (terminal closed)"
        return self.name


@contextlib.contextmanager
def stop_on_signals(
    on_stop: Callable[[Stopped], None] | None = None,
    even_if_ignored: tuple[int | None, ...] = (),
) -> Iterator[list[Stopped]]:
    """Within: stop signals are noted in the yielded list (the first decides the
    exit code), for a loop to notice; the first also calls ``on_stop``. Nothing
    is raised, so no event is lost half-folded and writing the report is never
    cut short by a second signal. ``even_if_ignored``: signals taken even when
    they were ignored at start."""
    arrived: list[Stopped] = []

    def handler(signum: int, frame: object) -> None:
        stop = Stopped(signum)
        arrived.append(stop)
        if signum == HANGUP:
            silence_terminal()
        if len(arrived) == 1 and on_stop is not None:
            on_stop(stop)

    previous = {}
    for sig in SIGNALS:
        try:
            if sig in even_if_ignored or signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, handler)
        except (ValueError, OSError):  # not the main thread, or not settable here
            pass
    try:
        yield arrived
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


def silence_terminal() -> None:
    """Point stdout and stderr at /dev/null: the terminal is gone, and writing to
    it raises (EIO) where a report is still to be written."""
    try:
        null = os.open(os.devnull, os.O_WRONLY)
    except OSError:
        return
    for fd in (1, 2):
        with contextlib.suppress(OSError):
            os.dup2(null, fd)
    os.close(null)


def input_hung_up(fd: int = 0) -> bool:
    """Whether the pipe on ``fd`` lost every writer (POLLHUP), seen without
    reading it: a served page's dlcprof whose server went away (killed, or
    crashed) gets no quit and no signal, only this."""
    try:
        poll = select.poll()
        poll.register(fd, select.POLLIN)
        return any(mask & select.POLLHUP for _, mask in poll.poll(0))
    except (AttributeError, OSError, ValueError):  # no poll() here, or no such fd
        return False
