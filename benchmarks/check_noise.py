"""``dlcprof check --baseline``: false alarms and the smallest regression caught.

A baseline session of the sample project's training script
(tests/programs/budget_project/train.py, ``--layers L``: at 32 blocks its
compile time grows with the blocks; at 4 the first compile's fixed cost hides
them), recorded by ``dlcprof check --repeat N --json`` (the least compile time
of N runs), then the unchanged program checked against it ``--runs`` times,
each ``--repeat N`` (each a false alarm if it fails), then the program with
more blocks of its one block type (``--layers`` L+25%, L+50%, 2L: on a warm
cache, what such a change adds to Dynamo's and AOTAutograd's work) checked
against the same baseline, ``--reps`` times each. Every configuration runs
once first, untimed, so the Inductor cache is warm for all as it is for the
baseline. Printed: each configuration's compile time in CPU seconds and in
wall seconds, as ratios to the baseline's, and how many of its checks failed
(each failure with its reason); then how many each tolerance would fail
(``--again DIR`` judges an earlier run's sessions so again).

    .venv/bin/python benchmarks/check_noise.py [--layers 32] [--runs 10] [--reps 2] [--repeat 3]
    .venv/bin/python benchmarks/check_noise.py --again DIR
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
from pathlib import Path

from common import ROOT, load_line, machine, median, spread

TRAIN = ROOT / "tests" / "programs" / "budget_project" / "train.py"


def compile_times(report: Path) -> tuple[float, float]:
    """(CPU, wall) seconds of the session's compiles."""
    from dlcprof.figures.check.findings import compile_time
    from dlcprof.report.load import load_session

    run = next(iter(load_session(report).runs.values()))
    return compile_time(run, "cpu").seconds, compile_time(run, "wall").seconds


def dlcprof(*args: str, env: dict[str, str]) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "dlcprof.cli", *args]
    return subprocess.run(argv, env=env, capture_output=True, text=True)


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--layers", type=int, default=32)
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--reps", type=int, default=2)
    p.add_argument("--repeat", type=int, default=3, help="dlcprof check --repeat N")
    p.add_argument("--again", type=Path, default=None, help="judge an earlier run's folder again")
    args = p.parse_args()
    if args.again is not None:
        tolerances(args.again, args.again / "base.json")
        return
    print(machine())
    tmp = Path(tempfile.mkdtemp(prefix="dlcprof-check-noise-"))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp / "cache")}
    program = [sys.executable, str(TRAIN), "--sizes", "4,4"]
    L = args.layers
    variants = [L + L // 4, L + L // 2, 2 * L]
    for layers in (L, *variants):  # warm the cache for each configuration
        dlcprof("run", "--quiet", "--no-hotspots", "--", *program, "--layers", str(layers), env=env)
    base = tmp / "base.json"
    repeat = ("--repeat", str(args.repeat))
    dlcprof(
        "check",
        "--quiet",
        *repeat,
        "--json",
        str(base),
        "--",
        *program,
        "--layers",
        str(L),
        env=env,
    )
    b_cpu, b_wall = compile_times(base)
    print(f"baseline --layers {L}: compile {b_cpu:.3f} s CPU, {b_wall:.3f} s wall")

    def checked(layers: int, i: int) -> tuple[bool, float, float]:
        out = tmp / f"l{layers}-{i}.json"
        proc = dlcprof(
            "check", "--quiet", *repeat, "--baseline", str(base), "--json", str(out), "--",
            *program, "--layers", str(layers), env=env,
        )  # fmt: skip
        cpu, wall = compile_times(out)
        if proc.returncode != 0:  # say why: a false alarm must be explained
            said = [ln for ln in proc.stderr.splitlines() if ln.startswith(("✗", "dlcprof"))]
            print(f"--layers {layers} run {i}: exit {proc.returncode}:", *said[-6:], sep="\n  ")
        return proc.returncode != 0, cpu / b_cpu, wall / b_wall

    rows = [(L, [checked(L, i) for i in range(args.runs)])]
    rows += [(layers, [checked(layers, i) for i in range(args.reps)]) for layers in variants]
    print(f"{'layers':<8} {'runs':>4} {'failed':>6}  {'CPU ratio (median, range)':<30} wall ratio")
    for layers, results in rows:
        failed = sum(f for f, _, _ in results)
        cpu = [c for _, c, _ in results]
        wall = [w for _, _, w in results]
        print(
            f"{layers:<8} {len(results):>4} {failed:>6}  {median(cpu):.3f} ({spread(cpu)}){'':<10} "
            f"{median(wall):.3f} ({spread(wall)})"
        )
    tolerances(tmp, base)
    print(load_line())


def tolerances(folder: Path, base: Path) -> None:
    """The same checks' compile times judged at other tolerances (the judge's own
    ``regressed``): how many each would fail, per configuration."""
    from dlcprof.figures.check.baseline import regressed
    from dlcprof.figures.check.findings import CompileTime

    then = CompileTime(compile_times(base)[0], "cpu")
    runs: dict[int, list[float]] = {}
    for path in folder.glob("l*-*.json"):
        runs.setdefault(int(path.name[1:].split("-")[0]), []).append(compile_times(path)[0])
    shares = (0.2, 0.25, 0.3, 0.35)
    print("failed at --compile-tolerance " + " / ".join(f"{t:.0%}" for t in shares))
    for layers, cpus in sorted(runs.items()):
        failed = [sum(regressed(CompileTime(c, "cpu"), then, t) for c in cpus) for t in shares]
        print(f"  --layers {layers:<4} {len(cpus):>2} runs: " + " / ".join(map(str, failed)))


if __name__ == "__main__":
    main()
