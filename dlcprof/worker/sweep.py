"""Shape sweep: one compiled function fed a sequence of sizes, each transition timed.

What ``transition_s`` includes: the wall time of the first call at a new size
minus one steady call at that size (the steady latency below), i.e. guard evaluation, any recompile
(Dynamo trace, AOTAutograd, Inductor lowering and codegen, kernel build or
load) and first-run overheads (allocations). For the first size it is the
sweep function's initial compile.

Why the numbers are comparable between a static and a dynamic sweep: the sweep
runs in the same process after the main compile and a ``torch._dynamo.reset()``
(a fresh compiled function owning the whole recompile budget), so one-time
process costs (imports, CPU ISA probes, the precompiled header) were already
paid by the main compile and inflate neither; and Inductor's FX / AOTAutograd
graph caches are bypassed during the sweep (probes/caches.py), so no step loads
a graph compiled earlier (in this run or an earlier one) in a fraction of the
time. Kernel binaries may still come from the code cache.

The steady latency at each size is measured like the benchmark: after the
warm-up, ``reps`` repetitions of ``iters`` back-to-back calls, median and
interquartile range over the repetitions.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dlcprof.stats import median_iqr
from dlcprof.trace_records.dispatcher import CompileCounts
from dlcprof.worker.bench import LastOutput, Timer, warm_up


def run_sweep(
    compiled: Callable[..., Any],
    inputs_for: Callable[[int], tuple],
    sizes: list[int],
    timer: Timer,
    counts: Callable[[], CompileCounts],
    on_step: Callable[..., None],
    iters: int,
    reps: int,
) -> tuple[float, int]:
    """Calls ``on_step`` per size with ShapeStepMeasured's fields (but run_id);
    returns (cumulative transition s, compiles)."""
    start = counts()
    total = 0.0
    for n in sizes:
        args = inputs_for(n)
        sink = LastOutput()
        before = counts()
        first_s = timer.one_call_s(compiled, args, sink)
        after = counts()
        # Past the post-compile slow calls, then timed as the benchmark times.
        warm_up(compiled, args, timer, sink)
        steady_ms, spread_ms = median_iqr(
            [timer.per_call_ms(compiled, args, iters, sink) for _ in range(reps)]
        )
        steady_s = steady_ms / 1e3
        compiled_now = (after.compiles - before.compiles) + (
            after.backward_compiles - before.backward_compiles
        ) > 0
        reasons = after.reasons[len(before.reasons) :]
        transition = max(0.0, first_s - steady_s)
        total += transition
        on_step(
            size=n,
            recompiled=compiled_now,
            transition_s=transition,
            latency_ms=steady_ms,
            latency_spread_ms=spread_ms,
            reason="; ".join(reasons) if reasons else None,
            # Past the recompile limit Dynamo runs a call eagerly unless a cached
            # graph's guards match it: counted per call (probes/guards.py).
            ran_eager=after.eager_calls > before.eager_calls,
        )
    end = counts()
    return total, end.compiles - start.compiles
