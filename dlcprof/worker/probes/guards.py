"""Calls that ran eager after Dynamo gave up recompiling a function.

Past ``recompile_limit`` Dynamo marks the code object RUN_ONLY: a call whose
guards match a cached graph runs compiled, any other runs the original Python
eagerly, silently, with no trace record. Dynamo evaluates the guards of every
call of a function with cached graphs and passes the result to
``torch._C._dynamo.eval_frame.set_guard_complete_hook`` (True: a cache hit).
Installed from the moment the limit is first hit (so it costs nothing before,
and then ~1 µs a call), the hook counts misses. A miss Dynamo still compiles
for logs its recompile reasons first: a miss without them ran eager, and so
did each call that hit a limit (the first one before the hook was there).

What each eager call costs: the hook runs just before Dynamo evaluates the
frame, so on a miss it arms ``sys.setprofile``; the first Python call that
follows is that frame. If it is the function that hit the limit (its code's
file:line is the one torch's warning named), its wall is timed to its return,
then the profiler is off again. Anything else (a miss that Dynamo goes on to
compile) disarms it at once. At most ``EAGER_SAMPLES`` calls are timed; the
profile hook runs on each Python call inside the frame too, so a sample is an
upper bound on the call's own cost.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from types import FrameType
from typing import Any

from dlcprof import events as ev
from dlcprof.trace_records.dispatcher import CompileCounts
from dlcprof.worker.probes import ProbeNotes

EAGER_SAMPLES = 16  # eager calls timed after a limit hit; the rest are only counted
NO_EAGER_CALL = "no call ran eager after the limit was hit"


class EagerTimer:
    """The wall of a bounded number of calls of the functions that hit the limit."""

    def __init__(self) -> None:
        self.targets: set[str] = set()  # "file:line" of each function's code
        self.samples: list[float] = []
        self.untimed: str | None = None  # why nothing can be timed
        self._open: tuple[FrameType, float] | None = None
        self._armed = False

    def add(self, location: str) -> None:
        if location:
            self.targets.add(location)
        elif not self.targets:
            self.untimed = "torch's warning named no file:line for the function"

    def arm(self) -> None:
        """A guard miss: the frame Dynamo evaluates next may run eager."""
        if self._armed or self._open is not None or len(self.samples) >= EAGER_SAMPLES:
            return
        if not self.targets:
            return
        if sys.getprofile() is not None:
            self.untimed = "another profiler (sys.setprofile) is on in the program"
            return
        self._armed = True
        sys.setprofile(self._profile)

    def _profile(self, frame: FrameType, event: str, _arg: Any) -> None:
        if self._open is None:
            if event != "call":
                return
            code = frame.f_code
            if f"{code.co_filename}:{code.co_firstlineno}" in self.targets:
                self._open = (frame, time.perf_counter())
            else:
                self._disarm()
        elif event == "return" and frame is self._open[0]:
            self.samples.append(time.perf_counter() - self._open[1])
            self._disarm()

    def _disarm(self) -> None:
        sys.setprofile(None)
        self._armed = False
        self._open = None

    def stop(self) -> None:
        if self._armed:
            self._disarm()

    def why_untimed(self) -> str | None:
        """None when samples exist; else why there are none."""
        if self.samples:
            return None
        return self.untimed or NO_EAGER_CALL


class EagerCalls:
    def __init__(self, notes: ProbeNotes, timed: bool = True) -> None:
        self.notes = notes
        self.misses = 0
        self.timer = EagerTimer()
        self.timed = timed  # False: counted only (the caller times the calls its own way)
        if not timed:
            self.timer.untimed = "not timed one by one: the sweep times each size's calls"
        self._at_start: tuple[int, int] | None = None  # (recompile reasons, limit hits)
        self._set_hook: Callable[[Any], Any] | None = None
        self._previous: Any = None

    @property
    def counting(self) -> bool:
        return self._at_start is not None

    def start(self, counts: CompileCounts, location: str) -> None:
        """The recompile limit was just hit by the function at ``location``
        (file:line); ``counts``: the trace's counts now."""
        self.timer.add(location)
        if self.counting or self.notes.said("guards.eager_calls"):
            return
        try:
            from torch._C._dynamo.eval_frame import set_guard_complete_hook
        except Exception as e:  # noqa: BLE001
            self.notes.unavailable(
                "guards.eager_calls",
                f"torch._C._dynamo.eval_frame.set_guard_complete_hook: {type(e).__name__}: {e}",
            )
            return
        self._set_hook = set_guard_complete_hook
        self._previous = set_guard_complete_hook(self._hook)
        self._at_start = (len(counts.reasons), counts.limit_hits)

    def _hook(self, cache_hit: bool) -> bool:  # the name torch's type gives it
        if not cache_hit:
            self.misses += 1
            if self.timed:
                self.timer.arm()
        previous = self._previous
        return previous(cache_hit) if previous is not None else cache_hit

    def count(self, counts: CompileCounts) -> int | None:
        """Calls that ran eager since the limit was first hit; None when not counting."""
        if self._at_start is None:
            return None
        reasons, hits = self._at_start
        compiled = len(counts.reasons) - reasons
        later_hits = counts.limit_hits - hits
        return 1 + later_hits + max(0, self.misses - compiled)

    def counted(self, run_id: str, counts: CompileCounts) -> ev.EagerCallsCounted | None:
        """The count at the run's end, the hook removed; None when not counting."""
        calls = self.count(counts)
        if calls is None:
            return None
        self.stop()
        return ev.EagerCallsCounted(
            run_id=run_id,
            calls=calls,
            call_s=list(self.timer.samples),
            untimed=self.timer.why_untimed(),
        )

    def stop(self) -> None:
        self.timer.stop()
        if self._set_hook is not None:
            self._set_hook(self._previous)
            self._set_hook = None
