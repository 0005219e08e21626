"""The monitors on an attached program's compiling processes (dlcprof's side):
each process, from its first compile (``ProcessAttached``) to its end, gets
what a run's worker gets (monitors/process.py): the device sampler and py-spy,
their events in the process's run.

At most ``MAX_WATCHED`` processes are watched at once (torchrun's ranks: each
py-spy costs CPU); a process past that says so in its run. A process's
monitors stop when its stream ends (it finished or died; py-spy also ends on
its own when its target does) and, at the latest, at ``close``: when the
program ended, dlcprof detached or stops. ``close`` returns once every
monitor reported, so their events come before ``ProgramExited``.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import TYPE_CHECKING

from dlcprof import events as ev

if TYPE_CHECKING:
    from dlcprof.monitors.process import ProcessMonitors

Emit = Callable[[ev.Event], None]
MAX_WATCHED = 8


def not_watched(cap: int) -> str:
    return (
        f"not sampled: {cap} processes of the program are sampled already "
        "(py-spy and the device sampler watch at most that many at once)"
    )


class ProgramMonitors:
    """``see`` every event of the program's streams, stamped with its run."""

    def __init__(
        self,
        emit: Emit,
        hotspots: bool = True,
        device: bool = True,
        cap: int = MAX_WATCHED,
        watch: Callable[..., ProcessMonitors] | None = None,
    ) -> None:
        self.emit = emit
        self.hotspots = hotspots
        self.device = device
        self.cap = cap
        self._watch = watch
        self._live: dict[str, ProcessMonitors] = {}
        self._stopping: list[threading.Thread] = []
        self._lock = threading.Lock()
        self._closed = False

    @property
    def on(self) -> bool:
        return self.hotspots or self.device

    def see(self, event: ev.Event) -> None:
        if not self.on:
            return
        run_id = getattr(event, "run_id", None)
        if isinstance(event, ev.ProcessAttached):
            self._attached(event)
        elif run_id in self._live:
            self._live[run_id].see(event)
            if isinstance(event, ev.RunFinished):
                self._stop(run_id)

    def _attached(self, e: ev.ProcessAttached) -> None:
        with self._lock:
            if self._closed:
                return
            if len(self._live) >= self.cap:
                missed = (("py-spy", self.hotspots), ("cpu", self.device))
                for monitor in [name for name, on in missed if on]:
                    self.emit(
                        ev.MonitorStatus(
                            monitor=monitor,
                            available=False,
                            message=not_watched(self.cap),
                            run_id=e.run_id,
                        )
                    )
                return
            if self._watch is None:
                # Imported at the first compile, not before the program starts (~0.1 s).
                from dlcprof.monitors.process import ProcessMonitors

                self._watch = ProcessMonitors
            # A rank's GPU is its local rank's (as torchrun's scripts pick it).
            watch = self._watch(
                e.pid, self.emit, e.local_rank or 0, device=self.device, hotspots=self.hotspots
            )
            self._live[e.run_id] = watch
        watch.start(e.run_id)

    def _stop(self, run_id: str) -> None:
        """Stop a process's monitors off the reading thread (py-spy writes its profile)."""
        with self._lock:
            watch = self._live.pop(run_id, None)
            if watch is None:
                return
            t = threading.Thread(target=watch.stop, name="dlcprof-attach-monitors", daemon=True)
            self._stopping.append(t)
        t.start()

    def close(self) -> None:
        """Stop every monitor; returns once all reported."""
        with self._lock:
            self._closed = True
            live, self._live = list(self._live.values()), {}
        for watch in live:
            watch.stop()
        for t in self._stopping:
            t.join()
