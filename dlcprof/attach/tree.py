"""The program's process tree, as the kernel lists it (Linux ``/proc``).

A stop signal goes to the program's process group, and the program passes it
on, as a terminal would. ``torchrun`` starts each rank in a session of its
own (``start_new_session=True``), so only torchrun itself can reach its ranks:
if it dies before it has stopped them (SIGKILL after the grace periods, or a
crash), they run on, orphaned. dlcprof therefore remembers every process of the
tree while the program runs and, after a stop, ends those still running.
A process is remembered with its start time, so a pid the kernel reused for
another process is never signalled. Where ``/proc`` is absent this does nothing.
"""

from __future__ import annotations

import contextlib
import os
import signal
import time
from pathlib import Path

from dlcprof import proc_tree

_PROC = Path("/proc")


def _stat(pid: int) -> tuple[str, int, int] | None:
    """(state, ppid, start time in clock ticks) of a process, None when gone."""
    try:
        raw = (_PROC / str(pid) / "stat").read_text()
    except OSError:
        return None
    fields = raw.rsplit(")", 1)[-1].split()
    try:
        return fields[0], int(fields[1]), int(fields[19])
    except (IndexError, ValueError):
        return None


def _parents() -> dict[int, tuple[int, int]]:
    """Every live process: pid -> (ppid, start time) (where the kernel lists no
    children: a read of every process on the host)."""
    out = {}
    with contextlib.suppress(OSError):
        for entry in os.scandir(_PROC):
            if entry.name.isdigit():
                st = _stat(int(entry.name))
                if st is not None and st[0] != "Z":
                    out[int(entry.name)] = (st[1], st[2])
    return out


class Tree:
    """The processes seen under ``root`` (the program's first process)."""

    def __init__(self, root: int) -> None:
        self.root = root
        self.seen: dict[int, int] = {}  # pid -> start time

    def update(self) -> None:
        """Remember the root's descendants now running."""
        if proc_tree.SUPPORTED:
            self._walk()
            return
        procs = _parents()
        if self.root not in procs and not self.seen:
            return
        if self.root in procs:
            self.seen.setdefault(self.root, procs[self.root][1])
        grew = True
        while grew:
            grew = False
            for pid, (ppid, start) in procs.items():
                if ppid in self.seen and pid not in self.seen:
                    self.seen[pid] = start
                    grew = True

    def _walk(self) -> None:
        """The descendants of the root and of every remembered process still the
        same process, read from the kernel's lists (an orphan keeps its place:
        it was remembered before its parent ended)."""
        if not self.seen:
            st = _stat(self.root)
            if st is None or st[0] == "Z":
                return
            self.seen[self.root] = st[2]
        for pid in proc_tree.descendants(*self.running()):
            st = _stat(pid) if pid not in self.seen else None
            if st is not None and st[0] != "Z":
                self.seen[pid] = st[2]

    def running(self) -> list[int]:
        """Remembered processes still running (the same processes, not reused pids)."""
        out = []
        for pid, start in self.seen.items():
            st = _stat(pid)
            if st is not None and st[0] != "Z" and st[2] == start:
                out.append(pid)
        return out

    def end(self, grace_s: float) -> list[int]:
        """SIGTERM each process still running, SIGKILL what is left after ``grace_s``;
        returns the pids that were running."""
        left = self.running()
        for sig, wait in ((signal.SIGTERM, grace_s), (signal.SIGKILL, 0.0)):
            for pid in self.running():
                with contextlib.suppress(ProcessLookupError, PermissionError):
                    os.kill(pid, sig)
            deadline = time.monotonic() + wait
            while self.running() and time.monotonic() < deadline:
                time.sleep(0.05)
        return left
