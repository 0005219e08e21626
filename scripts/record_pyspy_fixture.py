#!/usr/bin/env python
"""Record a real py-spy profile of a cold compile as a test fixture.

    .venv/bin/python scripts/record_pyspy_fixture.py

Writes ``tests/fixtures/pyspy/cold_compile.speedscope.json.gz``: PySpySampler
(its defaults) on a child that compiles a pointwise function with a fresh
Inductor cache and TMPDIR (so its main thread waits on g++ and on compile
workers) while a helper thread idles the way tqdm's monitor thread does.
The hot-frame presentation tests read it (tests/unit/test_hotspots_presentation.py).
"""

from __future__ import annotations

import gzip
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlcprof.monitors.hotspots import PySpySampler  # noqa: E402
from dlcprof.runner import cache_env  # noqa: E402

OUT = ROOT / "tests" / "fixtures" / "pyspy" / "cold_compile.speedscope.json.gz"
CHILD = """
import threading
import torch

def monitor(cond=threading.Condition()):
    with cond:
        cond.wait()

threading.Thread(target=monitor, name="tqdm_monitor", daemon=True).start()
torch.set_num_threads(1)

def f(x):
    y = torch.sin(x) * 2 + torch.cos(x)
    return (y.relu() - x.exp() / (1 + x * x)).tanh()

torch.compile(f)(torch.randn(16, 64))
"""


def main() -> int:
    env = cache_env("cold")
    work = Path(tempfile.mkdtemp(prefix="dlcprof-fixture-"))
    try:
        child = subprocess.Popen(
            [sys.executable, "-c", CHILD], env={**os.environ, **env, "PYTHONWARNINGS": "ignore"}
        )
        sampler = PySpySampler(child.pid, lambda e: None, work / "p.json")
        sampler.start()
        if child.wait(600) != 0 or not sampler.wait(60):
            raise SystemExit("the compile child or the sampler failed")
        OUT.parent.mkdir(parents=True, exist_ok=True)
        OUT.write_bytes(gzip.compress((work / "p.json").read_bytes(), 9, mtime=0))
        print(f"{OUT.relative_to(ROOT)}: {sampler.ticks} ticks, {OUT.stat().st_size // 1024} KB")
    finally:
        for d in [work, *map(Path, env.values())]:
            shutil.rmtree(d, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
