"""Which py-spy settings watch a compile at the least cost? (chooses PySpySampler's defaults)

Runs the same torch.compile in a fresh child process several times, with the
sampler off and in several settings, alternating (rotated each repetition, so
machine-load drift hits every variant alike), and prints the compile time
side by side with what py-spy itself burned (its CPU as a share of one core:
on a machine with few cores that CPU is taken from the compile, and unlike
the compile time it barely moves with background load).

Variants:
  off       no sampler
  block1s   100 Hz, 1 s windows, py-spy's default mode (stops the worker per sample)
  nb1s      the same, --nonblocking (reads the stacks without stopping the worker)
  nb2s      --nonblocking, 2 s windows (half the re-attaches)
  nb1s50    --nonblocking, 1 s windows, 50 Hz
  nb2s50    --nonblocking, 2 s windows, 50 Hz
  nb1s25    --nonblocking, 1 s windows, 25 Hz (dlcprof's default)
  nbsingle  --nonblocking, one window for the whole run (no live rows, no re-attach)

Caches (--cache):
  fresh   a new TORCHINDUCTOR_CACHE_DIR per run: every compile is fully real
          (also the one-time CPU ISA probes; TMPDIR and its header stay warm)
  shapes  one warm cache dir, new static shapes per run: only the per-graph
          work (Dynamo, Inductor, g++) is redone; shorter, Python-heavier

Usage: .venv/bin/python benchmarks/pyspy_overhead.py [--quick] [--reps 5] [--cache shapes]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import machine, rotated  # noqa: E402

from dlcprof.monitors.hotspots import PySpySampler  # noqa: E402

CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    t_import = time.time()
    import torch
    torch.set_num_threads(1)
    t_import = time.time() - t_import

    def f(x):
        y = torch.sin(x) * 2 + torch.cos(x)
        y = torch.relu(y) - x.exp() / (1 + x * x)
        return y.tanh() + y.sigmoid()

    cf = torch.compile(f, dynamic=False)
    base = int(sys.argv[2])
    t = time.time()
    for i in range(int(sys.argv[1])):
        cf(torch.randn(8 + i, base + i))
    print(json.dumps({"compile_s": time.time() - t, "import_s": t_import}), flush=True)
    """
)

# Sampler settings per variant (PySpySampler keyword arguments, all explicit).
VARIANTS: dict[str, dict[str, Any]] = {
    "off": {},
    # dlcprof before issue 15: stops the worker per sample
    "block1s": {"rate_hz": 100, "live_interval_s": 1.0, "nonblocking": False},
    "nb1s": {"rate_hz": 100, "live_interval_s": 1.0, "nonblocking": True},
    "nb2s": {"rate_hz": 100, "live_interval_s": 2.0, "nonblocking": True},
    "nb1s50": {"rate_hz": 50, "live_interval_s": 1.0, "nonblocking": True},
    "nb2s50": {"rate_hz": 50, "live_interval_s": 2.0, "nonblocking": True},
    "nb1s25": {"rate_hz": 25, "live_interval_s": 1.0, "nonblocking": True},  # the default
    "nbsingle": {"rate_hz": 100, "live_interval_s": 0.0, "nonblocking": True},  # no live rows
}
DEFAULT_VARIANTS = ",".join(VARIANTS)


def run_once(
    variant: str, shapes: int, base: int, cache_dir: str, script: Path
) -> dict[str, float]:
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=cache_dir, PYTHONWARNINGS="ignore")
    t0 = time.time()
    cpu0 = time.process_time()  # this process: the sampler thread's parsing and aggregation
    child = subprocess.Popen(
        [sys.executable, str(script), str(shapes), str(base)],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=env,
    )
    sampler = None
    if variant != "off":
        sampler = PySpySampler(child.pid, lambda e: None, None, **VARIANTS[variant])
        sampler.start()
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    assert child.stdout is not None
    out = child.stdout.read()
    _, status, usage = os.wait4(child.pid, 0)  # the child's CPU, its g++ included
    child.returncode = os.waitstatus_to_exitcode(status)
    wall = time.time() - t0
    if sampler is not None:
        sampler.wait(30)  # every py-spy process reaped
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if child.returncode != 0:
        raise SystemExit(f"the compile child failed ({child.returncode})")
    result = json.loads(out.strip().splitlines()[-1])
    result["wall_s"] = wall
    # What py-spy itself burned: all reaped children's CPU minus the compile child's.
    children_cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
    result["pyspy_cpu_s"] = max(0.0, children_cpu - (usage.ru_utime + usage.ru_stime))
    result["parent_cpu_s"] = time.process_time() - cpu0
    result["child_cpu_s"] = usage.ru_utime + usage.ru_stime
    if sampler is not None:
        result["ticks"] = sampler.ticks
        result["windows"] = len(sampler.windows)
        covered = sum(b - a for a, b, _ in sampler.windows)
        result["coverage"] = covered / wall if wall > 0 else 0.0
    return result


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--reps", type=int, default=5)
    ap.add_argument("--quick", action="store_true", help="1 rep, 2 shapes: proves it runs")
    ap.add_argument("--shapes", type=int, default=4, help="compiles per run (static shapes)")
    ap.add_argument("--cache", choices=("fresh", "shapes"), default="fresh")
    ap.add_argument("--variants", default=DEFAULT_VARIANTS, help=f"of {', '.join(VARIANTS)}")
    args = ap.parse_args()
    if args.quick:
        args.reps, args.shapes = 1, 2
    variants = [v for v in args.variants.split(",") if v]

    work = Path(tempfile.mkdtemp(prefix="dlcprof-pyspy-bench-"))
    script = work / "child.py"
    script.write_text(CHILD)
    shared_cache = str(work / "shared-cache")
    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    base = 64 + (os.getpid() % 1000) * 7
    try:
        if args.cache == "shapes":  # pay the one-time ISA probes before measuring
            run_once("off", 1, 17, shared_cache, script)
        print(machine())
        print(f"cache={args.cache} shapes/run={args.shapes} reps={args.reps}")
        print(
            f"{'rep':>3} {'variant':>8} {'compile_s':>9} {'wall_s':>7} {'ticks':>6}"
            f" {'cover':>6} {'child_cpu_s':>11} {'spy_cpu_s':>9} {'parent_cpu_s':>12}"
        )
        for rep in range(args.reps):
            for v in rotated(variants, rep):
                base += 2 * args.shapes  # new shapes: never a cache hit
                cache = str(work / f"cache-{rep}-{v}") if args.cache == "fresh" else shared_cache
                r = run_once(v, args.shapes, base, cache, script)
                results[v].append(r)
                ticks = f"{r['ticks']:6.0f}" if "ticks" in r else f"{'-':>6}"
                cover = f"{r['coverage']:6.0%}" if "coverage" in r else f"{'-':>6}"
                print(
                    f"{rep:>3} {v:>8} {r['compile_s']:9.2f} {r['wall_s']:7.2f} {ticks} {cover}"
                    f" {r['child_cpu_s']:11.2f} {r['pyspy_cpu_s']:9.2f} {r['parent_cpu_s']:12.2f}"
                )
                if args.cache == "fresh":
                    shutil.rmtree(cache, ignore_errors=True)
        print()
        ref = statistics.median(r["compile_s"] for r in results[variants[0]])
        ref_min = min(r["compile_s"] for r in results[variants[0]])
        print(
            f"{'variant':>8} {'median compile_s':>16} {'ratio':>6} {'min':>6} {'ratio':>6}"
            f" {'ticks/s':>8} {'py-spy CPU %':>12} {'parent CPU %':>12}"
        )
        for v in variants:
            cs = [r["compile_s"] for r in results[v]]
            med = statistics.median(cs)
            rate = [r["ticks"] / r["wall_s"] for r in results[v] if "ticks" in r]
            rate_s = f"{statistics.median(rate):8.1f}" if rate else f"{'-':>8}"
            # py-spy's own CPU as a share of one core over the sampled wall time.
            cpu = statistics.median(r["pyspy_cpu_s"] / r["wall_s"] for r in results[v])
            parent = statistics.median(r["parent_cpu_s"] / r["wall_s"] for r in results[v])
            print(
                f"{v:>8} {med:16.2f} {med / ref:6.3f} {min(cs):6.2f} {min(cs) / ref_min:6.3f}"
                f" {rate_s} {cpu:12.1%} {parent:12.1%}"
            )
        load = os.getloadavg()
        print(f"load average at the end: {load[0]:.2f} {load[1]:.2f} {load[2]:.2f}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
