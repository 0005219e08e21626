"""A bundled workload driven as a plain script (for benchmarks/attach_overhead.py):
``python benchmarks/drive_workload.py NAME CALLS`` builds it, compiles it and
calls it CALLS times, as a user's script would."""

import importlib.util
import sys
import time
from pathlib import Path

import torch

name, calls = sys.argv[1], int(sys.argv[2])
path = Path(__file__).resolve().parent.parent / "workloads" / f"{name.replace('-', '_')}.py"
spec = importlib.util.spec_from_file_location(name, path)
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
fn, args = module.build("cpu", torch.float32, "small")
compiled = torch.compile(fn)
print(f"first call at {time.time():.6f}", flush=True)  # attach_overhead.py: Dynamo starts in it
start = time.perf_counter()
for _ in range(calls):
    compiled(*args)
print(f"{calls} calls in {time.perf_counter() - start:.3f} s")
