"""Each rank's wall time under ``dlcprof run -- torchrun`` ÷ bare ``torchrun``
(issue 22's overhead, per rank).

The job: tests/programs/ddp_train.py, 2 ranks on gloo. Each variant is run
once untimed first (the first warms the shared Inductor cache; dlcprof keeps
its provenance tracking out of the cache key), then bare and attached alternate, rotated,
each a fresh job on the shared warm cache. A rank's wall time is read where
the job's output shows it: from the launch to that rank's own "rank R done"
line (torchrun's start included, which both variants pay). CPU: the whole
process tree (torchrun, the ranks, dlcprof's own process).

    .venv/bin/python benchmarks/ranks_overhead.py [--rounds N] [--steps N] [--no-hotspots-too]
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import subprocess
import sys
import tempfile
import time

from common import ROOT, load_line, machine, median, ratio_line, ratios, rotated

RANKS = 2
VARIANTS = ("bare", "attached")
NO_HOTSPOTS = "attached, --no-hotspots"  # --no-hotspots-too: py-spy's part
# Anywhere in a line: the ranks share one pipe, and a line may hold another's start.
_DONE = re.compile(r"rank (\d+) done")


def command(variant: str, steps: int) -> list[str]:
    job = [
        sys.executable,
        "-m",
        "torch.distributed.run",
        "--standalone",
        "--nproc-per-node",
        str(RANKS),
        str(ROOT / "tests" / "programs" / "ddp_train.py"),
        "--steps",
        str(steps),
    ]
    if variant == "bare":
        return job
    options = ["--no-hotspots"] if variant == NO_HOTSPOTS else []
    return [sys.executable, "-m", "dlcprof.cli", "run", "--quiet", *options, "--", *job]


def timed(argv: list[str], env: dict[str, str]) -> tuple[dict[int, float], float]:
    """(each rank's seconds from the launch to its "done" line, the tree's CPU seconds)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(
        argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    done: dict[int, float] = {}
    assert proc.stdout is not None
    for line in proc.stdout:
        for m in _DONE.finditer(line):
            done[int(m.group(1))] = time.perf_counter() - start
    if proc.wait(timeout=1800) != 0 or len(done) != RANKS:
        raise SystemExit(f"{' '.join(argv)}: status {proc.returncode}, ranks done {sorted(done)}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return done, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument(
        "--no-hotspots-too", action="store_true", help="a third variant: attached, no py-spy"
    )
    args = parser.parse_args()
    variants = (*VARIANTS, NO_HOTSPOTS) if args.no_hotspots_too else VARIANTS
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="dlcprof-ranks-bench-cache-"),
        "PYTHONPATH": str(ROOT),
    }
    print(machine())
    for variant in variants:  # each variant's cache entries, untimed
        timed(command(variant, args.steps), env)
    walls: dict[str, dict[int, list[float]]] = {v: {r: [] for r in range(RANKS)} for v in variants}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    for rep in range(args.rounds):
        for variant in rotated(list(variants), rep):
            done, cpu = timed(command(variant, args.steps), env)
            for rank, s in done.items():
                walls[variant][rank].append(s)
            cpus[variant].append(cpu)
    print(f"\nddp_train.py --steps {args.steps}, {RANKS} ranks (gloo), medians:")
    for variant in variants[1:]:
        for rank in range(RANKS):
            bare, attached = walls["bare"][rank], walls[variant][rank]
            print(
                f"rank {rank}: bare {median(bare):.2f} s, {variant} {median(attached):.2f} s wall"
            )
            print(ratio_line(f"rank {rank} {variant} ÷ bare (wall)", ratios(attached, bare), 1.05))
        bare_cpu, attached_cpu = median(cpus["bare"]), median(cpus[variant])
        print(f"whole tree: bare {bare_cpu:.2f} s, {variant} {attached_cpu:.2f} s CPU")
        print(ratio_line(f"tree {variant} ÷ bare (CPU)", ratios(cpus[variant], cpus["bare"]), 1.05))
    print(load_line())


if __name__ == "__main__":
    main()
