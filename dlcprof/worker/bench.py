"""Timing eager vs compiled calls without letting the harness trigger a recompile.

Rules (docs/torch-notes.md §7): never torch.utils.benchmark.Timer (it changes the thread
count, a guarded global); the caller keeps one grad mode for the compile, the
warm-up and the timing; warm up at least 5 calls (the first calls after a
compile are ~2x slower); repetitions alternate eager and compiled so a burst of
background load hits both; median and IQR over repetitions. Each repetition's
values are kept, and its minor page faults counted around its calls (outside
the timed loop: the allocator's signature, docs/torch-notes.md §7).
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from dlcprof.data import data
from dlcprof.stats import median_iqr

resource: ModuleType | None
try:
    import resource
except ImportError:  # not on Windows: no page-fault counts there
    resource = None

MIN_WARMUP = 5
WARMUP_MIN_S = 0.05  # keep warming tiny functions until this much time has passed
WARMUP_MAX_CALLS = 200


class LastOutput:
    """Holds the latest output of every call, so no result is ever unused."""

    __slots__ = ("value",)

    def __init__(self) -> None:
        self.value: Any = None


@data
class Timer:
    """perf_counter on CPU; CUDA events plus a synchronize on CUDA."""

    device: str

    @property
    def name(self) -> str:
        return "cuda_events" if self.device == "cuda" else "perf_counter"

    def sync(self) -> None:
        if self.device == "cuda":
            import torch

            torch.cuda.synchronize()

    def per_call_ms(
        self, fn: Callable[..., Any], args: tuple, iters: int, sink: LastOutput
    ) -> float:
        """Mean ms per call over ``iters`` back-to-back calls."""
        if self.device == "cuda":
            import torch

            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            for _ in range(iters):
                sink.value = fn(*args)
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / iters
        t0 = time.perf_counter()
        for _ in range(iters):
            sink.value = fn(*args)
        return (time.perf_counter() - t0) * 1e3 / iters

    def one_call_s(self, fn: Callable[..., Any], args: tuple, sink: LastOutput) -> float:
        """Wall seconds of a single call, device work included."""
        self.sync()
        t0 = time.perf_counter()
        sink.value = fn(*args)
        self.sync()
        return time.perf_counter() - t0


def warm_up(fn: Callable[..., Any], args: tuple, timer: Timer, sink: LastOutput) -> int:
    """At least MIN_WARMUP calls, more for functions that take microseconds."""
    t0 = time.perf_counter()
    n = 0
    while n < MIN_WARMUP or (time.perf_counter() - t0 < WARMUP_MIN_S and n < WARMUP_MAX_CALLS):
        sink.value = fn(*args)
        n += 1
    timer.sync()
    return n


def minor_faults() -> int | None:
    """Minor page faults of the whole process so far (all threads: OpenMP's too)."""
    if resource is None:
        return None
    return resource.getrusage(resource.RUSAGE_SELF).ru_minflt


def steady_call_s(
    fn: Callable[..., Any], args: tuple, timer: Timer, sink: LastOutput, n: int = 5
) -> float:
    """Median of ``n`` single calls (the caller has warmed ``fn`` up)."""
    return statistics.median(timer.one_call_s(fn, args, sink) for _ in range(n))


def benchmark(
    eager: Callable[..., Any],
    compiled: Callable[..., Any],
    args: tuple,
    iters: int,
    reps: int,
    timer: Timer,
) -> dict[str, Any]:
    """What the benchmark measured, by the names of ``BenchmarkMeasured``'s fields
    (the event that reports it; ``SteadyAllocatorMeasured`` takes all but ``timer``)."""
    sink = LastOutput()
    warm = min(warm_up(eager, args, timer, sink), warm_up(compiled, args, timer, sink))
    eager_ms: list[float] = []
    compiled_ms: list[float] = []
    faults: tuple[list[float], list[float]] = ([], [])
    for _ in range(reps):
        f0 = minor_faults()
        eager_ms.append(timer.per_call_ms(eager, args, iters, sink))
        f1 = minor_faults()
        compiled_ms.append(timer.per_call_ms(compiled, args, iters, sink))
        f2 = minor_faults()
        if f0 is not None and f1 is not None and f2 is not None:
            faults[0].append((f1 - f0) / iters)
            faults[1].append((f2 - f1) / iters)
    timer.sync()
    e, e_spread = median_iqr(eager_ms)
    c, c_spread = median_iqr(compiled_ms)
    return {
        "eager_ms": e,
        "compiled_ms": c,
        "eager_spread_ms": e_spread,
        "compiled_spread_ms": c_spread,
        "reps": reps,
        "iters": iters,
        "warmup": warm,
        "timer": timer.name,
        "eager_reps_ms": eager_ms,
        "compiled_reps_ms": compiled_ms,
        "eager_faults": faults[0],
        "compiled_faults": faults[1],
    }
