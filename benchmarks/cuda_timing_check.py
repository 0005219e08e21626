"""dlcprof's steady-state figures on CUDA against a harness of nobody's but torch's.

For the bundled workloads ``scripts/gpu_check.sh`` runs (default sizes,
float32, under ``torch.no_grad()`` as dlcprof's worker runs them): eager,
``torch.compile`` default and reduce-overhead, each timed over ``--iters``
back-to-back calls, ``--reps`` times, two ways: CUDA events around the loop
(as dlcprof's timer does) and wall time with a synchronize at each end.
reduce-overhead is timed three ways, because CUDA graph trees check at each
call whether the last call's outputs are still alive: keeping the last output
(as dlcprof's harness keeps it, so that the work is not optimized away),
dropping it, and marking each step (``torch.compiler.cudagraph_mark_step_begin``).

    python benchmarks/cuda_timing_check.py [--iters 1000] [--reps 7]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "workloads"))
import gelu_mlp  # noqa: E402
import pointwise_chain  # noqa: E402

WORKLOADS = {"gelu-mlp": gelu_mlp, "pointwise-chain": pointwise_chain}


def timed(call, iters: int, reps: int) -> tuple[list[float], list[float]]:
    """µs per call: by CUDA events around each loop, and by wall time with a sync at each end."""
    for _ in range(50):
        call()
    torch.cuda.synchronize()
    events, wall = [], []
    for _ in range(reps):
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        t0 = time.perf_counter()
        start.record()
        for _ in range(iters):
            call()
        end.record()
        end.synchronize()
        wall.append((time.perf_counter() - t0) * 1e6 / iters)
        events.append(start.elapsed_time(end) * 1e3 / iters)
    return events, wall


def line(name: str, events: list[float], wall: list[float], eager: float | None) -> str:
    med = statistics.median(events)
    speedup = f"  {eager / med:5.2f}x" if eager else ""
    return (
        f"  {name:<34} events {med:8.1f} µs ({min(events):.1f}–{max(events):.1f})"
        f"  wall {statistics.median(wall):8.1f} µs{speedup}"
    )


def check(module, iters: int, reps: int) -> None:
    model, inputs = module.build("cuda", torch.float32)
    kept: list = [None]

    def keep(fn):
        def call():
            kept[0] = fn(*inputs)

        return call

    events, wall = timed(keep(model), iters, reps)
    eager = statistics.median(events)
    print(line("eager", events, wall, None))
    print(line("default", *timed(keep(torch.compile(model)), iters, reps), eager))
    graphs = torch.compile(model, mode="reduce-overhead")
    print(line("reduce-overhead, last output kept", *timed(keep(graphs), iters, reps), eager))

    def dropped():
        graphs(*inputs)

    print(line("reduce-overhead, output dropped", *timed(dropped, iters, reps), eager))

    def stepped():
        torch.compiler.cudagraph_mark_step_begin()
        kept[0] = graphs(*inputs)

    print(line("reduce-overhead, step marked", *timed(stepped, iters, reps), eager))


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--iters", type=int, default=1000)
    p.add_argument("--reps", type=int, default=7)
    args = p.parse_args()
    name = torch.cuda.get_device_name()
    print(f"torch {torch.__version__}, {name}, {args.reps} x {args.iters} calls")
    for workload, module in WORKLOADS.items():
        print(workload)
        with torch.no_grad():
            check(module, args.iters, args.reps)
        torch._dynamo.reset()


if __name__ == "__main__":
    main()
