"""One small adapter per private torch API.

Every probe degrades: when the attribute or module it needs is missing (torch
versions move these around), it says so once with ``ProbeUnavailable`` and the
run carries on without that view. The payload parsers are pure functions of
strings so they can be tested on payloads recorded from real runs.
"""

from __future__ import annotations

import threading

from dlcprof import events as ev


class ProbeNotes:
    """Emits ``ProbeUnavailable`` at most once per probe."""

    def __init__(self, sink: ev.Sink, run_id: str | None) -> None:
        self.sink = sink
        self.run_id = run_id
        self._said: set[str] = set()
        self._lock = threading.Lock()

    def unavailable(self, probe: str, reason: str) -> None:
        with self._lock:
            if probe in self._said:
                return
            self._said.add(probe)
        self.sink.emit(ev.ProbeUnavailable(run_id=self.run_id, probe=probe, reason=reason))

    def said(self, probe: str) -> bool:
        return probe in self._said
