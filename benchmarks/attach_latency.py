"""What ``dlcprof run -- CMD`` adds before the program starts and after it
ends: the part of the attach cost that no length of program hides.

The program prints the time as its first statement and, a second later, as
its last: "before" is the first less the command's start, "after" the
command's end less the last, each less the same for the program run bare
(Python's own start and exit). The second stands for the program's run,
during which dlcprof imports what follows it (as it does while a real
program imports torch). Each checkout named (default: this one) runs its own
dlcprof, alternating.

    .venv/bin/python benchmarks/attach_latency.py [--reps N] [--json] [CHECKOUT ...]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time

from common import ROOT, load_line, machine, median

STAMP = "print(repr(time.time()), file=sys.stderr)"
PROGRAM = [sys.executable, "-c", f"import sys, time; {STAMP}; time.sleep(1); {STAMP}"]


def once(checkout: str | None, json: bool) -> tuple[float, float]:
    """(seconds before the program's first statement, seconds after its last)."""
    command = PROGRAM
    if checkout is not None:
        out = (
            ["--json", os.path.join(tempfile.gettempdir(), "dlcprof-latency.json")] if json else []
        )
        command = [sys.executable, "-m", "dlcprof.cli", "run", "--quiet", *out, "--", *PROGRAM]
    # Run from the temp folder: `python -m` would put the current folder first on the path.
    env = {**os.environ, "PYTHONPATH": checkout or str(ROOT)}
    start = time.time()
    done = subprocess.run(
        command, env=env, cwd=tempfile.gettempdir(), capture_output=True, text=True
    )
    end = time.time()
    first, last = (float(line) for line in done.stderr.strip().splitlines()[:2])
    return first - start, end - last


def _ms(xs: list[float]) -> str:
    return f"+{median(xs):.0f} ms ({min(xs):.0f}–{max(xs):.0f})"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--reps", type=int, default=12)
    parser.add_argument("--json", action="store_true", help="dlcprof writes --json too")
    parser.add_argument("checkouts", nargs="*", default=[str(ROOT)])
    args = parser.parse_args()
    print(machine())
    variants = [None, *args.checkouts]
    got: dict[str | None, list[tuple[float, float]]] = {v: [] for v in variants}
    for rep in range(args.reps):
        for v in variants[rep % len(variants) :] + variants[: rep % len(variants)]:
            got[v].append(once(v, args.json))
    bare_before = median([b for b, _ in got[None]])
    bare_after = median([a for _, a in got[None]])
    ms = (round(bare_before * 1000), round(bare_after * 1000))
    print(f"bare: the first statement after {ms[0]} ms, the exit {ms[1]} ms after the last")
    for v in args.checkouts:
        before = [(b - bare_before) * 1000 for b, _ in got[v]]
        after = [(a - bare_after) * 1000 for _, a in got[v]]
        print(f"{v}: before the program {_ms(before)}, after it {_ms(after)}, {args.reps} runs")
    print(load_line())


if __name__ == "__main__":
    main()
