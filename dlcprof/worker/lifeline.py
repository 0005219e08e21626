"""The worker dies with its parent, whatever killed the parent.

The parent keeps the worker's stdin open after sending the run request and
never writes to it again: end of file on that pipe means the parent is gone
(SIGKILL, a crash, a closed terminal), even while the worker sits deep in a
compile.

On Linux the pipe is armed with O_ASYNC and owned by the worker's process
group: when the parent's end closes, the kernel sends SIGIO to the group,
whose default action ends the worker and its g++ children at once, with no
thread of ours in the profile and no Python code that must get to run.
Elsewhere a daemon thread waits for end of file and kills the group.

Not PR_SET_PDEATHSIG: it fires when the parent *thread* that spawned the
worker ends, and the TUI spawns its standby worker from a short-lived thread.
"""

from __future__ import annotations

import os
import signal
import sys
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


def watch(fd: int) -> None:
    """End the worker (and its process group) when the parent's end of ``fd`` closes."""
    if sys.platform.startswith("linux") and _arm_sigio(fd):
        return
    threading.Thread(target=_wait_for_eof, args=(fd,), name="dlcprof-lifeline", daemon=True).start()


def _arm_sigio(fd: int) -> bool:
    import fcntl

    if os.getpgrp() != os.getpid() or signal.getsignal(signal.SIGIO) is not signal.SIG_DFL:
        return False  # not leading a group of our own, or SIGIO is in use
    try:
        fcntl.fcntl(fd, fcntl.F_SETOWN, -os.getpgrp())  # negative: the whole group
        fcntl.fcntl(fd, fcntl.F_SETFL, fcntl.fcntl(fd, fcntl.F_GETFL) | os.O_ASYNC)
    except OSError:
        return False
    return True


def _wait_for_eof(fd: int) -> None:
    try:
        while os.read(fd, 4096):
            pass  # the parent never writes after the request; ignore anything else
    except OSError:
        pass
    if os.getpgrp() == os.getpid():  # leading its own group (as the runner starts it)
        try:
            os.killpg(0, signal.SIGKILL)
        except OSError:
            pass
    os._exit(1)
