"""One compile in a fresh process, with chosen dlcprof probes installed as the worker installs them.

    python benchmarks/compile_child.py WORKLOAD.py --threads N [--size S]
        [--probes trace,kernels,provenance]

Prints ``{"compiled": s, "cpu_s": s}`` after the first compiled call (compile
= that call minus a steady call; cpu_s = this process's CPU through the eager
and the first compiled call, which the probes add to), then waits for one line on stdin (the parent
pauses its monitors meanwhile, as LiveRun does before timing), times steady
calls and prints ``{"steady_ms": [...]}``. Events go to /dev/null through the
worker's own Emitter, so serialising them is part of the cost.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from timing_child import build, compile_first, timed_block  # noqa: E402

PROBES = ("trace", "kernels", "provenance")


def install(probes: set[str]) -> None:
    """What dlcprof/worker/run.py: Run._install_probes does, one piece at a time."""
    from dlcprof.trace_records.dispatcher import TraceDispatcher
    from dlcprof.trace_records.kernels import KernelCollector
    from dlcprof.worker.emit import Emitter
    from dlcprof.worker.probes import ProbeNotes, provenance
    from dlcprof.worker.probes import trace as trace_probe
    from dlcprof.worker.probes.kernels import aten_op_exists

    sink = Emitter(os.open(os.devnull, os.O_WRONLY))
    notes = ProbeNotes(sink, "bench")
    if "provenance" in probes:
        provenance.enable_provenance(notes)
    if "trace" in probes or "kernels" in probes:
        kernels = None
        if "kernels" in probes:
            kernels = KernelCollector(sink, "bench", aten_op_exists())
        trace_probe.install(TraceDispatcher(sink, "bench", kernels), notes)


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("workload")
    ap.add_argument("--threads", type=int, required=True)
    ap.add_argument("--size", default="default")
    ap.add_argument("--probes", default="")
    ap.add_argument("--reps", type=int, default=7)
    ap.add_argument("--iters", type=int, default=20)
    a = ap.parse_args()
    import torch

    install({p for p in a.probes.split(",") if p})
    fn, args = build(a.workload, a.size, a.threads)
    with torch.no_grad():
        cpu0 = time.process_time()
        compiled, first_s = compile_first(fn, args)
        cpu_s = time.process_time() - cpu0  # this process only: its g++ children are apart
        steady = [timed_block(compiled, args, 1)["ms"] for _ in range(5)]
        compile_s = max(0.0, first_s - sorted(steady)[2] / 1e3)
        print(json.dumps({"compiled": compile_s, "cpu_s": cpu_s}), flush=True)
        sys.stdin.readline()  # the parent has paused its monitors
        for _ in range(10):
            compiled(*args)
        blocks = [timed_block(compiled, args, a.iters) for _ in range(a.reps)]
    print(json.dumps({"steady_ms": [b["ms"] for b in blocks]}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
