"""The worker dies with its parent, whatever killed the parent.

The parent keeps the worker's stdin open after sending the run request and
never writes to it again: end of file on that pipe means the parent is gone
(SIGKILL, a crash, a closed terminal), even while the worker sits deep in a
compile. The worker then kills its own process group (its g++ children go
too) and exits. A pipe, not PR_SET_PDEATHSIG: that signal fires when the
parent *thread* that spawned the worker ends, and the TUI spawns its standby
worker from a short-lived thread.
"""

from __future__ import annotations

import os
import signal
import threading


def take_stdin() -> int:
    """Move the request pipe off fd 0 and put /dev/null there: the workload (and
    any child it starts) reads end of file, never the lifeline. Returns the
    pipe's new fd."""
    fd = os.dup(0)  # not inheritable: compiler children never hold it
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    return fd


def watch(fd: int) -> threading.Thread:
    """A daemon thread that ends the worker when the parent's end of ``fd`` closes."""
    thread = threading.Thread(target=_watch, args=(fd,), name="dlcprof-lifeline", daemon=True)
    thread.start()
    return thread


def _watch(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass  # the parent never writes after the request; ignore anything else
    except OSError:
        pass
    _die()


def _die() -> None:
    if os.getpgrp() == os.getpid():  # leading its own group (as the runner starts it)
        try:
            os.killpg(0, signal.SIGKILL)
        except OSError:
            pass
    os._exit(1)
