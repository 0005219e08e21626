"""How long a monitor has watched the worker, pauses excluded (the time its
CPU cost is a share of)."""

from __future__ import annotations

import threading
import time


class WatchClock:
    """Seconds of watching; ``watching(False)`` while paused. Thread-safe."""

    def __init__(self) -> None:
        self._done = 0.0
        self._since: float | None = None
        self._lock = threading.Lock()

    def watching(self, on: bool) -> None:
        with self._lock:
            now = time.monotonic()
            if on and self._since is None:
                self._since = now
            elif not on and self._since is not None:
                self._done += now - self._since
                self._since = None

    @property
    def seconds(self) -> float:
        with self._lock:
            running = time.monotonic() - self._since if self._since is not None else 0.0
            return self._done + running
