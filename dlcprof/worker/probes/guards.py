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
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dlcprof import events as ev
from dlcprof.trace_records.dispatcher import CompileCounts
from dlcprof.worker.probes import ProbeNotes


class EagerCalls:
    def __init__(self, notes: ProbeNotes) -> None:
        self.notes = notes
        self.misses = 0
        self._at_start: tuple[int, int] | None = None  # (recompile reasons, limit hits)
        self._set_hook: Callable[[Any], Any] | None = None
        self._previous: Any = None

    @property
    def counting(self) -> bool:
        return self._at_start is not None

    def start(self, counts: CompileCounts) -> None:
        """The recompile limit was just hit; ``counts``: the trace's counts now."""
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

    def _hook(self, hit: bool) -> bool:
        if not hit:
            self.misses += 1
        previous = self._previous
        return previous(hit) if previous is not None else hit

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
        return ev.EagerCallsCounted(run_id=run_id, calls=calls)

    def stop(self) -> None:
        if self._set_hook is not None:
            self._set_hook(self._previous)
            self._set_hook = None
