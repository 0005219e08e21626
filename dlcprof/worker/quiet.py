"""Timing with nothing watching: the worker asks the parent to pause its monitors.

A sampler that stops the worker to read its stacks, or competes with it for a
core, adds to every call it catches (benchmarks/RESULTS.md measures how much).
So the timed repetitions run in a quiet window:

1. the worker emits ``TimingStarted`` and waits for one line on its control
   pipe (``--control-fd``; stdin is the lifeline and carries nothing after the
   run request);
2. the parent pauses py-spy and the device sampler and answers "quiet" once
   none of them touches the worker any more ("busy" if one would not stop);
3. the worker times, then emits ``TimingEnded(quiet=...)``: True when the
   parent confirmed the pause before the first timed call. The parent
   resumes its monitors.

A parent that watches nothing does not ask for the handshake (the request
has no ``quiet``): the worker then times at once.
"""

from __future__ import annotations

import contextlib
import select
import time
from collections.abc import Iterator
from typing import IO

from dlcprof import events as ev

# Pausing py-spy means stopping its process (it writes its profile first): a
# second or two on a loaded machine. Past this the parent is stuck: time anyway.
ACK_TIMEOUT_S = 30.0


class QuietWindow:
    """``with quiet("benchmark"): ...`` times inside a window the parent keeps quiet."""

    def __init__(self, sink: ev.Sink, run_id: str, control: IO[str] | None) -> None:
        self.sink = sink
        self.run_id = run_id
        self.control = control  # None: nobody to ask (no monitors)

    @contextlib.contextmanager
    def __call__(self, what: str) -> Iterator[None]:
        self.sink.emit(ev.TimingStarted(run_id=self.run_id, what=what))
        quiet = self._wait_for_parent()
        start = time.time()  # the window: from here, not from the request
        try:
            yield
        finally:
            self.sink.emit(
                ev.TimingEnded(run_id=self.run_id, what=what, start_t=start, quiet=quiet)
            )

    def _wait_for_parent(self) -> bool:
        """True once the parent says its monitors are paused."""
        if self.control is None:
            return False
        try:
            ready, _, _ = select.select([self.control], [], [], ACK_TIMEOUT_S)
            line = self.control.readline() if ready else ""
        except (OSError, ValueError):
            line = ""
        if line.strip() == "quiet":
            return True
        self.sink.emit(
            ev.LogEmitted(
                run_id=self.run_id,
                level="warning",
                source="dlcprof",
                message="the monitors did not confirm their pause: timed with them running",
            )
        )
        if not line:
            self.control = None  # no answer, or the parent closed the stream: do not wait again
        return False
