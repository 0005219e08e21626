"""The program's wall time under ``dlcprof run --`` ÷ bare (issue 21's overhead goal).

Three programs: one that only imports torch (dlcprof's fixed cost: its own
start and the probe's install), the training script of the tests
(tests/programs/train.py) and a bundled workload driven as a script
(benchmarks/drive_workload.py). Each is
run first once bare and once attached, untimed: both warm the one Inductor
cache they share (dlcprof keeps its provenance tracking out of the cache key,
benchmarks/warm_attach.py). Then, per round, bare
and attached alternate (rotated), each a fresh process tree on the shared warm
cache. The figures: the whole command's wall time, and the CPU time of its
whole process tree (dlcprof's own start, reading and drain included), which
moves less than wall time with the machine's load; and attached − bare in
seconds. Then how soon the first compile reaches dlcprof (torch's timestamp of
Dynamo's start → the parent holding the event) and the screen (the program's
clock just before its first compiled call → dlcprof's first live line on stderr).

    .venv/bin/python benchmarks/attach_overhead.py [--rounds N]
    .venv/bin/python benchmarks/attach_overhead.py --pyspy [--rounds N]   # py-spy's cost
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

from common import ROOT, load_line, machine, median, ratio_line, ratios, rotated, spread, timed

PROGRAMS = {
    # dlcprof's start and the probe's install, with nothing compiled: the fixed cost.
    "torch imported, nothing compiled (python -c 'import torch')": ["-c", "import torch"],
    "training script (tests/programs/train.py --steps 40)": [
        str(ROOT / "tests" / "programs" / "train.py"),
        "--steps",
        "40",
    ],
    "training-step workload as a script (400 calls)": [
        str(ROOT / "benchmarks" / "drive_workload.py"),
        "training-step",
        "400",
    ],
}
VARIANTS = ("bare", "attached")


def command(variant: str, program: list[str]) -> list[str]:
    run = [sys.executable, *program]
    if variant == "bare":
        return run
    return [sys.executable, "-m", "dlcprof.cli", "run", "--quiet", "--", *run]


def first_line_latency(env: dict[str, str], rounds: int) -> list[float]:
    """Seconds from the program's first compiled call (its own clock, printed
    just before the call: Dynamo starts inside it) to dlcprof's first live line
    on the screen (stderr, read as it comes)."""
    out = []
    program = [str(ROOT / "benchmarks" / "drive_workload.py"), "training-step", "1"]
    for _ in range(rounds):
        proc = subprocess.Popen(
            [sys.executable, "-m", "dlcprof.cli", "run", "--", sys.executable, *program],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        seen: list[float] = []

        def watch(stream=proc.stderr, seen=seen) -> None:  # type: ignore[no-untyped-def]
            for line in stream:
                if "compiling:" in line and not seen:
                    seen.append(time.time())

        reader = threading.Thread(target=watch, daemon=True)
        reader.start()
        assert proc.stdout is not None
        stdout = proc.stdout.read()  # stderr is the reader's alone
        proc.wait(timeout=1800)
        reader.join(10)
        called = [
            float(ln.split()[-1]) for ln in stdout.splitlines() if ln.startswith("first call")
        ]
        if seen and called:
            out.append(seen[0] - called[0])
    return out


def first_event_latency(env: dict[str, str], rounds: int) -> list[float]:
    """Seconds from Dynamo starting the first compile (torch's own timestamp of
    its `dynamo` phase, in the program) to dlcprof holding the event."""
    from dlcprof import events as ev
    from dlcprof.attach.program import AttachedProgram

    out = []
    program = [str(ROOT / "tests" / "programs" / "faults.py"), "exit-in-compile"]
    for _ in range(rounds):
        seen: list[float] = []

        def emit(event: ev.Event, seen: list[float] = seen) -> None:
            if isinstance(event, ev.PhaseStarted) and event.name == "dynamo" and not seen:
                seen.append(time.time() - event.t)

        os.environ.update(env)
        AttachedProgram([sys.executable, *program], emit, output="capture").wait(300)
        out += seen[:1]
    return out


def with_options(program: list[str], options: list[str]) -> list[str]:
    """The attached command with dlcprof options before its ``--``."""
    argv = command("attached", program)
    i = argv.index("--")
    return [*argv[:i], *options, *argv[i:]]


def pyspy_cost(env: dict[str, str], rounds: int) -> None:
    """py-spy on the program's compiling process (the default) against
    ``--no-hotspots``, both attached, side by side: the program's wall time
    and its tree's CPU, and py-spy's own CPU as the observer line states it."""
    variants = {"no py-spy": ["--no-hotspots"], "py-spy": []}
    folder = Path(tempfile.mkdtemp(prefix="dlcprof-attach-pyspy-"))
    for name, program in PROGRAMS.items():
        for options in variants.values():  # each variant's cache entries, untimed
            timed(with_options(program, options), env)
        walls: dict[str, list[float]] = {v: [] for v in variants}
        cpus: dict[str, list[float]] = {v: [] for v in variants}
        shares: dict[str, list[float]] = {"py-spy": [], "device sampler": []}
        for rep in range(rounds):
            for variant in rotated(list(variants), rep):
                out = folder / f"{rep}.json"
                options = [*variants[variant], "--json", str(out)]
                wall, cpu = timed(with_options(program, options), env)
                walls[variant].append(wall)
                cpus[variant].append(cpu)
                if variant == "py-spy":  # what the observer line states (MonitorCostMeasured)
                    for run in json.loads(out.read_text())["runs"]:
                        for w in run["observer"]["watchers"]:
                            if w["cpu_share"] is not None:
                                shares[w["name"]].append(w["cpu_share"])
        off, on = "no py-spy", "py-spy"
        print(
            f"\n{name}, py-spy on its compiling process: without {median(walls[off]):.2f} s "
            f"wall, {median(cpus[off]):.2f} s CPU; with {median(walls[on]):.2f} s "
            f"wall, {median(cpus[on]):.2f} s CPU (medians); own CPU, of a core: py-spy "
            f"{median(shares['py-spy']):.1%}, the device sampler "
            f"{median(shares['device sampler']):.1%}"
        )
        print(ratio_line("py-spy ÷ no py-spy (wall)", ratios(walls["py-spy"], walls["no py-spy"])))
        print(ratio_line("py-spy ÷ no py-spy (CPU)", ratios(cpus["py-spy"], cpus["no py-spy"])))


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument(
        "--pyspy", action="store_true", help="py-spy's cost (pyspy_cost) instead of the overall"
    )
    args = parser.parse_args()
    cache = tempfile.mkdtemp(prefix="dlcprof-attach-bench-cache-")
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": cache,
        "PYTHONPATH": str(ROOT),
        "OMP_NUM_THREADS": "1",
    }
    # As an installed dlcprof runs: its bytecode cached. Where PYTHONDONTWRITEBYTECODE
    # is set (this sandbox), every process would compile dlcprof's sources again:
    # about 0.3 s of CPU in dlcprof's process and in each probed one.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    print(machine())
    if args.pyspy:
        pyspy_cost(env, args.rounds)
        print(load_line())
        return
    for name, program in PROGRAMS.items():
        for variant in VARIANTS:  # fill each variant's cache entries, untimed
            timed(command(variant, program), env)
        walls: dict[str, list[float]] = {v: [] for v in VARIANTS}
        cpus: dict[str, list[float]] = {v: [] for v in VARIANTS}
        for rep in range(args.rounds):
            for variant in rotated(VARIANTS, rep):
                wall, cpu = timed(command(variant, program), env)
                walls[variant].append(wall)
                cpus[variant].append(cpu)
        print(
            f"\n{name}: bare {median(walls['bare']):.2f} s wall, {median(cpus['bare']):.2f} s "
            f"CPU; attached {median(walls['attached']):.2f} s wall, "
            f"{median(cpus['attached']):.2f} s CPU (medians)"
        )
        print(ratio_line("attached ÷ bare (wall)", ratios(walls["attached"], walls["bare"]), 1.05))
        print(ratio_line("attached ÷ bare (CPU)", ratios(cpus["attached"], cpus["bare"]), 1.05))
        added = [a - b for a, b in zip(walls["attached"], walls["bare"], strict=True)]
        print(f"{'attached − bare (wall, s)':<34} {median(added):6.2f}  ({spread(added)})")
    for what, latency in (
        (
            "first compile event in dlcprof after Dynamo began it",
            first_event_latency(env, args.rounds),
        ),
        (
            "first live line on the screen after the first compiled call",
            first_line_latency(env, args.rounds),
        ),
    ):
        print(
            f"\n{what}: median {median(latency) * 1e3:.0f} ms (max "
            f"{max(latency, default=float('nan')) * 1e3:.0f} ms, {len(latency)} runs), "
            "goal ≤ 300 ms"
        )
    print(load_line())


if __name__ == "__main__":
    main()
