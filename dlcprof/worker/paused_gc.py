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
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def paused_gc() -> Iterator[None]:
    was = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was:
            gc.enable()
