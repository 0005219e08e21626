"""The benchmark again, with the allocator held steady (dlcprof/allocator.py).

It runs in the same worker right after the default benchmark: the same
compiled code, tensors and thread pools, so the two measurements differ by
the allocator's policy alone, and it costs one more timed phase rather than a
second worker that imports torch and compiles again. Pinning cannot be
undone (glibc stops adapting its threshold for good), so nothing that is
timed may follow it: a run that sweeps shapes next skips it.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import Any

from dlcprof import allocator
from dlcprof import events as ev
from dlcprof.settings import RunSettings
from dlcprof.worker import bench


class NotMeasured(Exception):
    """Why there is no steady-allocator measurement, in one line."""


def measure(
    run_id: str,
    eager: Callable[..., Any],
    compiled: Callable[..., Any],
    args: tuple,
    settings: RunSettings,
    timer: bench.Timer,
) -> ev.SteadyAllocatorMeasured:
    if timer.device == "cuda":
        raise NotMeasured("on CUDA, tensors come from PyTorch's caching allocator, not from malloc")
    if settings.sweeping:
        raise NotMeasured(
            "this run sweeps shapes next, and pinning the allocator would change the sweep's "
            "timings"
        )
    m = allocator.current()
    if m.steady:
        raise NotMeasured(f"the worker's allocator is held steady already ({m.label})")
    t0 = time.perf_counter()
    try:
        how = allocator.pin()
    except allocator.CannotPin as e:
        raise NotMeasured(str(e)) from e
    r = bench.benchmark(eager, compiled, args, settings.iters, settings.reps, timer)
    del r["timer"]  # the default benchmark's, already reported
    return ev.SteadyAllocatorMeasured(run_id=run_id, how=how, wall_s=time.perf_counter() - t0, **r)
