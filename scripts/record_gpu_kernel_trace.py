#!/usr/bin/env python
"""Record, on a GPU box, the torch.profiler trace the kernel profiling stage reads.

    .venv/bin/python scripts/record_gpu_kernel_trace.py [--out tests/fixtures/gpu]

Runs the real worker (``--device cuda``, size small) on two bundled workloads:
pointwise-chain (one Triton kernel) and transformer-block (Triton kernels,
cuBLAS GEMMs, flash attention). For each it writes ``<name>/trace.json`` (the
Chrome trace torch.profiler exported inside the profiling stage),
``<name>/launches.json`` (which kernel each ``dlcprof:G:I`` range launched) and
``<name>/events.jsonl`` (the run's events). ``tests/unit/test_kernel_profile.py``
checks the GPU path on them when they are there. Takes under two minutes on a
warm cache; prints what it found.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "tests"))

from helpers.worker import run_worker  # noqa: E402

from dlcprof import events as ev  # noqa: E402
from dlcprof.settings import RunSettings  # noqa: E402
from dlcprof.worker.gpu_trace import device_times  # noqa: E402
from dlcprof.worker.launches import RANGE_PREFIX  # noqa: E402
from dlcprof.worker.profile import GPU_TRACE_ENV  # noqa: E402

WORKLOADS = ("pointwise-chain", "transformer-block")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(ROOT / "tests" / "fixtures" / "gpu"))
    args = parser.parse_args()
    for name in WORKLOADS:
        where = Path(args.out) / name
        settings = RunSettings(target=name, device="cuda", size="small", reps=3, iters=10)
        r = run_worker(settings, timeout_s=600, env={GPU_TRACE_ENV: str(where)})
        if r.returncode != 0:
            errors = [e.message for e in r.of(ev.ErrorRaised)]
            print(f"{name}: worker exited {r.returncode}: {errors or r.stderr[-2000:]}")
            return 1
        kept = sorted(where.glob("*/trace.json"))  # one folder per run: move it up
        for f in kept[-1].parent.iterdir() if kept else ():
            f.replace(where / f.name)
        if kept:
            kept[-1].parent.rmdir()
        (where / "events.jsonl").write_bytes(b"".join(ev.encode(e) for e in r.events))
        prof = r.one(ev.KernelsProfiled)
        trace = json.loads((where / "trace.json").read_text())
        launches = json.loads((where / "launches.json").read_text())
        times = device_times(trace, RANGE_PREFIX)
        print(
            f"{name}: {len(launches)} launches, {len(prof.kernels)} kernels, device busy "
            f"{prof.device_busy_ms} ms per call, compiled {prof.compiled_ms} ms"
        )
        for label, info in launches.items():
            names = times.names.get(label, [])
            print(
                f"  {label:<14} {info['kernel']:<50} {times.by_label.get(label, 0):9.1f} µs  "
                f"device: {', '.join(names) or '-'}"
            )
        for k in prof.kernels:
            if k["time_ms"] is None:
                print(f"  no time for {k['name']}: {k['why']}")
        size = sum(f.stat().st_size for f in where.iterdir()) / 1024
        print(f"  written to {where} ({size:.0f} KB)")
    return 0


if __name__ == "__main__":
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", "/tmp/dlcprof-test-cache")
    sys.exit(main())
