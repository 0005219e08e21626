"""What the mode probes cost per call, against what they observe.

    python benchmarks/modes_probe_cost.py [--quick]

1. CUDA-graph replay counting (GPU runs): the wrapper around
   ``CUDAGraphTreeManager.execute_node`` adds one Python call and a locked dict
   update to every replay. Measured here as wrapped minus bare calls of a
   method with the same signature (no GPU needed); a reduce-overhead replay
   itself runs tens of µs of torch's Python before the graph launches.
2. The autotune feedback saver: once per autotuned op (two choices), against
   the seconds torch spends benchmarking that op (RESULTS.md has both).

The post_compile wrapper runs once per compiled graph, beside seconds of
compile: not measured. Prints µs per call.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import types
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dlcprof.worker.emit import ListEmitter  # noqa: E402
from dlcprof.worker.probes import ProbeNotes  # noqa: E402
from dlcprof.worker.probes import autotune as A  # noqa: E402
from dlcprof.worker.probes import cudagraphs as C  # noqa: E402


def per_call_us(fn, n: int, reps: int) -> float:  # type: ignore[no-untyped-def]
    """Median over ``reps`` of the mean µs per call of ``fn`` over ``n`` calls."""
    out = []
    for _ in range(reps):
        t0 = time.perf_counter()
        for _ in range(n):
            fn()
        out.append((time.perf_counter() - t0) / n * 1e6)
    return statistics.median(out)


def replay_cost(n: int, reps: int) -> tuple[float, float]:
    class CUDAGraphTreeManager:
        compile_id = "0/0"

        def record_function(self, new_inputs, function_id):  # type: ignore[no-untyped-def]
            return None

        def execute_node(self, node, new_inputs):  # type: ignore[no-untyped-def]
            return None

    bare = CUDAGraphTreeManager()
    bare_us = per_call_us(lambda: bare.execute_node(None, ()), n, reps)
    sink = ListEmitter()
    probe = C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r"))
    probe._wrap_trees(types.SimpleNamespace(CUDAGraphTreeManager=CUDAGraphTreeManager))
    wrapped = CUDAGraphTreeManager()
    wrapped_us = per_call_us(lambda: wrapped.execute_node(None, ()), n, reps)
    probe.uninstall()
    return bare_us, wrapped_us


def feedback_cost(n: int, reps: int) -> float:
    sink = ListEmitter()
    collector = A.AutotuneCollector(sink, "r")
    timings = [("cpp_CppMicroGemmFP32Vec_0", 0.0259, ""), ("_mkl_linear", 0.0551, "")]
    return per_call_us(
        lambda: collector.autotuned(
            "packed_linear", ["4x256", "1024x256"], ["float32"] * 2, timings, 1
        ),
        n,
        reps,
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer calls (checks the script)")
    args = parser.parse_args()
    n, reps = (20_000, 3) if args.quick else (500_000, 7)
    bare, wrapped = replay_cost(n, reps)
    print(
        f"replay counting: {wrapped - bare:.3f} µs added per CUDA-graph replay "
        f"(bare call {bare:.3f} µs, wrapped {wrapped:.3f} µs)"
    )
    fb = feedback_cost(max(1, n // 50), reps)
    print(f"autotune feedback saver: {fb:.1f} µs per autotuned op")
    return 0


if __name__ == "__main__":
    sys.exit(main())
