"""Our own work inside the measured process, kept out of its garbage
collector's schedule.

Python collects when allocations outnumber deallocations past a threshold,
and a full collection walks every object the process holds: half a million in
a program with a Hugging Face GPT-2, 0.3 s each. The probes' work (an AST of
a graph's wrapper, the trace's payloads, events) allocates thousands of
short-lived objects; counted, they bring the program's next full collection
forward into its own time (benchmarks/RESULTS.md §11: the training step
whose calls were first sampled took 0.35 s instead of 0.03 s). With the
collector off while our code runs, none of ours starts a collection, and what
it frees again leaves the counts as they were. The program's own setting is
put back (one that switched it off keeps it off).
"""

from __future__ import annotations

import gc
from types import TracebackType


class paused_gc:  # noqa: N801 - used as a function: `with paused_gc():`
    """The collector off for the block, the program's setting put back after.
    A class, not a generator: it wraps every trace record of every compile."""

    __slots__ = ("_was",)

    def __enter__(self) -> None:
        self._was = gc.isenabled()
        gc.disable()

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        if self._was:
            gc.enable()
