"""An independent timing harness in its own process: no dlcprof import at all.

    python benchmarks/timing_child.py WORKLOAD.py --threads N [--size S]

Loads the workload file itself, calls it eagerly once, compiles it (the first
compiled call is timed), warms both up, prints one JSON line ``{"ready": ...}``
and then answers JSON commands on stdin, one per line:

    {"cmd": "time", "reps": R, "iters": N}
        -> {"eager": [block, ...], "compiled": [block, ...]}, one block per rep:
           {"ms": wall ms per call, "cpu_ms": on a CPU, "stopped_ms": neither
            on a CPU nor waiting for one (see timed_block)}
    {"cmd": "quit"}

Each repetition times ``iters`` back-to-back calls of eager, then of compiled
(alternating, so a burst of load hits both), with ``perf_counter`` at a fixed
thread count under ``no_grad`` (docs/torch-notes.md §7). The parent attaches
and detaches monitors between commands, so one process measures every variant.
"""

from __future__ import annotations

import argparse
import importlib.util
import inspect
import json
import os
import sys
import threading
import time


def load(path: str):
    spec = importlib.util.spec_from_file_location("_workload", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def build(path: str, size: str, threads: int):  # type: ignore[no-untyped-def]
    """(fn, args) of the workload file at ``path``, torch at ``threads`` threads."""
    import torch

    torch.set_num_threads(threads)
    module = load(path)
    kwargs = {"size": size} if "size" in inspect.signature(module.build).parameters else {}
    return module.build("cpu", torch.float32, **kwargs)


def compile_first(fn, args):  # type: ignore[no-untyped-def]
    """(compiled fn, seconds of its first call): call eagerly first, as dlcprof does."""
    import torch

    fn(*args)
    compiled = torch.compile(fn)
    t0 = time.perf_counter()
    compiled(*args)
    return compiled, time.perf_counter() - t0


def schedstat() -> tuple[int, int]:
    """(ns on a CPU, ns waiting for one) of this thread, from the kernel's scheduler."""
    with open(f"/proc/self/task/{threading.get_native_id()}/schedstat") as f:
        run, wait, _ = f.read().split()
    return int(run), int(wait)


def timed_block(fn, args, iters: int) -> dict[str, float]:
    """ms per call: wall, on a CPU, and neither on a CPU nor waiting for one.

    The third is time the thread was stopped (a ptrace stop, e.g. py-spy's
    blocking samples) or blocked: unlike wall time it does not grow with the
    machine's load, so it shows a sampler's cost on a busy machine too.
    """
    r0, w0 = schedstat()
    t0 = time.perf_counter()
    for _ in range(iters):
        out = fn(*args)
    wall = time.perf_counter() - t0
    r1, w1 = schedstat()
    del out
    run, wait = (r1 - r0) / 1e9, (w1 - w0) / 1e9
    k = 1e3 / iters
    return {"ms": wall * k, "cpu_ms": run * k, "stopped_ms": max(0.0, wall - run - wait) * k}


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--size", default="default")
    ap.add_argument("--warmup", type=int, default=10)
    a = ap.parse_args()
    import torch

    fn, args = build(a.workload, a.size, a.threads)
    with torch.no_grad():
        compiled, first_s = compile_first(fn, args)
        for _ in range(a.warmup):
            fn(*args)
            compiled(*args)
        print(
            json.dumps(
                {
                    "ready": os.getpid(),
                    "first_call_s": first_s,
                    "threads": torch.get_num_threads(),
                    "os_threads": threading.active_count(),
                    "tasks": len(os.listdir(f"/proc/{os.getpid()}/task")),
                }
            ),
            flush=True,
        )
        for line in sys.stdin:
            cmd = json.loads(line)
            if cmd["cmd"] != "time":
                break
            eager, comp = [], []
            for _ in range(cmd["reps"]):
                eager.append(timed_block(fn, args, cmd["iters"]))
                comp.append(timed_block(compiled, args, cmd["iters"]))
            print(json.dumps({"eager": eager, "compiled": comp}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
