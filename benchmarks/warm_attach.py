"""A warm program's first run ever under dlcprof ÷ its bare warm run (issue 29 item 1).

One bare run of the program fills an Inductor cache and TMPDIR (Inductor's
precompiled C++ headers), untimed: the user's earlier runs. Each run after it
starts from both as they were then (restored at the same paths), so each
attached run is the first ever under dlcprof on that warm cache:
each round, the program bare and under ``dlcprof run --`` (order rotated by
round). Two programs: ``train`` (tests/programs/train.py, 6 s, most of it
compiles: the fixed cost of watching weighs most) and ``gpt2``
(examples/train_gpt2.py: Hugging Face's GPT-2, 20 s, a recompile on its second
sequence length). Figures: wall time of each whole command and CPU time of its whole
process tree (which moves less with the machine's load), and the attached
run's compiles by graph-cache state (from its JSON report). Before issue 29
the attached run missed every compile (the provenance level was in the cache
key). ``--no-hotspots-too`` adds a third run each round, under dlcprof
without py-spy (``--no-hotspots``), to tell py-spy's part.

    .venv/bin/python benchmarks/warm_attach.py [--program train|gpt2] [--rounds N] [--steps N]
        [--no-hotspots-too]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections import Counter
from pathlib import Path

from common import (
    ROOT,
    load_line,
    machine,
    median,
    median_ci,
    ratio_line,
    ratios,
    rotated,
    spread,
    timed,
)

# name -> (script, default steps)
PROGRAMS = {
    "train": (ROOT / "tests" / "programs" / "train.py", 40),
    "gpt2": (ROOT / "examples" / "train_gpt2.py", 30),
}
VARIANTS = ("bare", "attached")
NO_PYSPY = "no py-spy"  # attached with --no-hotspots (--no-hotspots-too)


def compiles(report: Path) -> tuple[Counter[str], float]:
    """The attached run's compiles by cache state, and their seconds."""
    runs = json.loads(report.read_text())["runs"]
    done = [c for r in runs if r["process"] for c in r["compiles"]]
    return Counter(str(c["cache"]) for c in done), sum(c["wall_s"] or 0.0 for c in done)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--program", choices=sorted(PROGRAMS), default="train")
    parser.add_argument("--rounds", type=int, default=12)
    parser.add_argument("--steps", type=int, help="the program's --steps (default: its own here)")
    parser.add_argument(
        "--no-hotspots-too", action="store_true", help="a third run per round: without py-spy"
    )
    args = parser.parse_args()
    variants = (*VARIANTS, NO_PYSPY) if args.no_hotspots_too else VARIANTS
    script, steps = PROGRAMS[args.program]
    program = [sys.executable, str(script), "--steps", str(args.steps or steps)]
    base = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    base.pop("PYTHONDONTWRITEBYTECODE", None)  # as an installed dlcprof runs
    print(machine())
    walls: dict[str, list[float]] = {v: [] for v in variants}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    states: Counter[str] = Counter()
    compile_s: list[float] = []
    with tempfile.TemporaryDirectory(prefix="dwb") as tmp:
        # Both folders at one path throughout: the cache's entries name the files
        # they load, and Inductor keeps its precompiled C++ headers in TMPDIR.
        folders = [Path(tmp) / name for name in ("cache", "tmp")]
        env = {**base, "TORCHINDUCTOR_CACHE_DIR": str(folders[0]), "TMPDIR": str(folders[1])}
        folders[1].mkdir()
        timed(program, env)
        for folder in folders:
            shutil.copytree(folder, folder.with_name(f"warm-{folder.name}"))
        for rnd in range(args.rounds):
            report = Path(tmp) / "s.json"
            attached = [sys.executable, "-m", "dlcprof.cli", "run", "--quiet"]
            commands = {
                "bare": program,
                "attached": [*attached, "--json", str(report), "--", *program],
                NO_PYSPY: [*attached, "--no-hotspots", "--", *program],
            }
            for variant in rotated(variants, rnd):
                for folder in folders:
                    shutil.rmtree(folder)
                    shutil.copytree(folder.with_name(f"warm-{folder.name}"), folder)
                wall, cpu = timed(commands[variant], env)
                walls[variant].append(wall)
                cpus[variant].append(cpu)
            counted, seconds = compiles(report)
            states += counted
            compile_s.append(seconds)
            runs = (f"{v} {walls[v][-1]:.2f} s ({cpus[v][-1]:.2f} s CPU)" for v in variants)
            print(f"round {rnd + 1}: {', '.join(runs)}", flush=True)
    what = f"{args.rounds} rounds, the warm cache restored before each run"
    print(f"{args.program} ({' '.join(program[1:])}), {what}")
    for v in variants:
        print(f"  {v:<9} wall {median(walls[v]):.2f} s  ({spread(walls[v])}),", end=" ")
        print(f"CPU {median(cpus[v]):.2f} s  ({spread(cpus[v])})")
    for v in variants[1:]:
        for what, xs in (("wall", walls), ("CPU", cpus)):
            ratio = ratios(xs[v], xs["bare"])
            name = f"first {v} ÷ bare, {what}"
            print("  " + ratio_line(name, ratio, goal=1.05))
            low, high = median_ci(ratio)
            print(f"  {'':<34} 95% confidence interval of that median: {low:.3f}–{high:.3f}")
    print(f"  the attached runs' compiles by cache state: {dict(states)}")
    print(f"  the attached runs' compile seconds: {median(compile_s):.2f} s ({spread(compile_s)})")
    print(load_line())


if __name__ == "__main__":
    main()
