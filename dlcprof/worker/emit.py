"""Thread-safe event writer: one JSON line per event on the events fd.

Events come from the main thread and from torch's compile pool threads (the
structured-trace handler runs wherever torch logs). Each event is written with
``os.write`` under a lock, so lines never interleave, and it reaches the parent
at once (no Python buffering to flush). The workload's prints go to fds 1/2 and
can never land in this stream.
"""

from __future__ import annotations

import os
import threading

from dlcprof import events as ev


class Emitter:
    """Writes events to one file descriptor; safe to call from any thread."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self._lock = threading.Lock()
        self.closed = False
        # g++ children (and any process the workload spawns) must not inherit the
        # pipe: a straggler holding it would keep the parent from seeing EOF.
        try:
            os.set_inheritable(fd, False)
        except OSError:
            pass

    def emit(self, event: ev.Event) -> None:
        data = ev.encode(event)
        with self._lock:
            if self.closed:
                return
            try:
                view = memoryview(data)
                while view:
                    n = os.write(self.fd, view)
                    view = view[n:]
            except (BrokenPipeError, OSError):
                # The parent went away: nobody is listening, keep the run alive
                # until it ends or is killed rather than crash a compile thread.
                self.closed = True

    def close(self) -> None:
        with self._lock:
            if not self.closed:
                self.closed = True
                try:
                    os.close(self.fd)
                except OSError:
                    pass


class ListEmitter:
    """Collects events in memory (unit tests of the probes)."""

    def __init__(self) -> None:
        self.events: list[ev.Event] = []
        self._lock = threading.Lock()

    def emit(self, event: ev.Event) -> None:
        with self._lock:
            self.events.append(event)
