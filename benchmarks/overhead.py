"""What each part of dlcprof's observer costs the compile it watches, and the steady latency.

    python benchmarks/overhead.py [--quick] [--workload transformer-block]
        [--cache cold,warm] [--rounds 5]

Every variant compiles the same workload in a fresh process
(benchmarks/compile_child.py), alternating (rotated each round), with one
component of dlcprof switched on as dlcprof runs it:

  bare                      torch.compile, nothing of dlcprof
  structured-trace handler  the trace probe: torch's structured trace at DEBUG, parsed
  kernel probe              the trace probe plus the kernel collector it feeds
  provenance tracking       Inductor's kernel -> node provenance (a config flag)
  device sampler            monitors/device.py on the process (psutil, NVML on a GPU)
  py-spy live               monitors/hotspots.py as a run starts it (engine.monitors_for)
  dlcprof default           every probe and every monitor a user gets by default

compile = the first compiled call minus a steady call; worker CPU = the
compiling process's own CPU seconds (what the probes add to; it moves far less
with background load than wall time; monitors outside the process show their
own CPU in a run's status instead); steady = per-call latency after the
compile, timed as dlcprof times it: the monitors paused first (pause(), as
LiveRun does on TimingStarted). Ratios are per round to that round's bare run;
the goals are ≤1.05 on compile time and ≤1.03 on steady latency for the
default. glibc's allocator is pinned (benchmarks/common.py): without it the
steady latency alone can differ 2x between processes. One unmeasured run comes
first (the OS's file cache). Caches: cold = a fresh Inductor cache dir and
TMPDIR per process (every kernel built, the one-time ISA probes and header
too); warm = one shared cache, filled first by one run per probe set (once
provenance tracking entered the FX graph cache key; dlcprof now keeps it out),
so every variant
measures Dynamo and the cache lookups.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    PINNED_ALLOCATOR,
    ROOT,
    load_line,
    machine,
    median,
    ratio_line,
    ratios,
    rotated,
    spread,
)

from dlcprof.engine import monitors_for  # noqa: E402
from dlcprof.runner import cache_env  # noqa: E402
from dlcprof.settings import RunSettings  # noqa: E402
from dlcprof.workloads import resolve  # noqa: E402

ALL_PROBES = "trace,kernels,provenance"
# variant -> (probes in the child, device sampler, py-spy)
VARIANTS: dict[str, tuple[str, bool, bool]] = {
    "bare": ("", False, False),
    "structured-trace handler": ("trace", False, False),
    "kernel probe": ("trace,kernels", False, False),
    "provenance tracking": ("provenance", False, False),
    "device sampler": ("", True, False),
    "py-spy live": ("", False, True),
    "dlcprof default": (ALL_PROBES, True, True),
}
WHAT = {"compile_s": "compile", "cpu_s": "worker CPU", "steady_ms": "steady"}
GOAL_COMPILE = 1.05
GOAL_STEADY = 1.03


def run_variant(
    variant: str, path: str, settings: RunSettings, env: dict[str, str]
) -> dict[str, float]:
    probes, device, profile = VARIANTS[variant]
    child = subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "compile_child.py"),
            path,
            "--threads",
            str(settings.threads),
            "--size",
            settings.size,
            "--probes",
            probes,
            "--reps",
            str(settings.reps),
            "--iters",
            str(settings.iters),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert child.stdin is not None and child.stdout is not None
    monitors = monitors_for(settings, child.pid, lambda e: None, device, profile)
    for m in monitors:
        m.start()
    try:
        compiled = json.loads(child.stdout.readline())
        for m in monitors:
            m.pause()
        child.stdin.write("go\n")
        child.stdin.flush()
        steady = json.loads(child.stdout.readline())
    finally:
        for m in monitors:
            m.stop()
        child.kill()
        child.wait()
    return {
        "compile_s": compiled["compiled"],
        "cpu_s": compiled["cpu_s"],
        "steady_ms": median(steady["steady_ms"]),
    }


def measure(cache: str, path: str, settings: RunSettings, rounds: int, variants: list[str]) -> None:
    base_env = {**os.environ, **PINNED_ALLOCATOR, "PYTHONWARNINGS": "ignore"}
    shared = tempfile.mkdtemp(prefix="dlcprof-overhead-cache-")
    cleanup = [shared]
    # Runs first, not measured: they fill the shared cache (kernels, FX graphs, the
    # header) for "warm", once per probe set (provenance tracking once
    # entered the FX graph cache key), and the OS's file cache (torch's libraries) for both.
    for probes in dict.fromkeys(VARIANTS[v][0] for v in variants):
        first = next(v for v in variants if VARIANTS[v][0] == probes)
        run_variant(first, path, settings, {**base_env, "TORCHINDUCTOR_CACHE_DIR": shared})
        if cache == "cold":
            break
    results: dict[str, list[dict[str, float]]] = {v: [] for v in variants}
    try:
        for rnd in range(rounds):
            for v in rotated(variants, rnd):
                if cache == "cold":
                    extra = cache_env("cold")
                    cleanup += extra.values()
                else:
                    extra = {"TORCHINDUCTOR_CACHE_DIR": shared}
                results[v].append(run_variant(v, path, settings, {**base_env, **extra}))
                if cache == "cold":
                    for d in extra.values():
                        shutil.rmtree(d, ignore_errors=True)
    finally:
        for d in cleanup:
            shutil.rmtree(d, ignore_errors=True)
    bare = results["bare"]
    print(
        f"\n{cache} cache: {rounds} rounds, compile s and steady ms per variant, ratios to "
        "the same round's bare run"
    )
    print(f"  {'variant':<26} {'compile s':>9} {'(spread)':>14} {'steady ms':>9}")
    for v in variants:
        rows = results[v]
        cs = [r["compile_s"] for r in rows]
        print(
            f"  {v:<26} {median(cs):9.2f} {spread(cs):>14} "
            f"{median([r['steady_ms'] for r in rows]):9.3f}"
        )
    for v in variants[1:]:
        rows = results[v]
        goal_c = GOAL_COMPILE if v == "dlcprof default" else None
        goal_s = GOAL_STEADY if v == "dlcprof default" else None
        for key, goal in (("compile_s", goal_c), ("cpu_s", None), ("steady_ms", goal_s)):
            r = ratios([x[key] for x in rows], [b[key] for b in bare])
            print("  " + ratio_line(f"{v}: {WHAT[key]}", r, goal))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="size small, 1 round: proves it runs")
    ap.add_argument("--workload", default="transformer-block")
    ap.add_argument("--cache", default="cold,warm")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--variants", default=",".join(VARIANTS), help="bare first")
    a = ap.parse_args()
    variants = a.variants.split(",")
    assert variants[0] == "bare", "ratios are to bare: name it first"
    rounds = 1 if a.quick else a.rounds
    settings = RunSettings(target=a.workload, size="small" if a.quick else "default").validate()
    path = str(resolve(a.workload).path)
    print(machine())
    print(
        f"workload {a.workload} (size {settings.size}), threads={settings.threads}, "
        f"steady = median of {settings.reps} reps × {settings.iters} calls"
    )
    t0 = time.time()
    for cache in a.cache.split(","):
        measure(cache, path, settings, rounds, variants)
    print(f"\n{time.time() - t0:.0f} s; {load_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
