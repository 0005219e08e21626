"""The pytest plugin's cost on a test suite that compiles (issue 30; goal ≤ 5%).

A suite of ``--tests`` tests, each compiling the sample project's model
(tests/programs/budget_project/model.py) from fresh Dynamo caches (the suite
resets them itself, so both sides compile the same), run as pairs:

- ``bare``: ``pytest -p no:dlcprof`` (the plugin not loaded);
- ``report``: ``pytest --dlcprof-report DIR``: every test watched, a run each,
  the session saved: the plugin's heaviest use;
- ``budgets``: every test under ``@pytest.mark.compile_budget``, judged.

With ``--cold``, every run (warm-ups aside) starts from an empty Inductor
cache, as a CI runner's first run does: each test's graphs compiled from
scratch (the kernels the suite's tests share, once a run). Without it, the
cache is warm (every graph a cache hit): the plugin's worst case, its work per
compile beside the least work a compile does.

With ``--before CHECKOUT`` (a folder holding another version's ``dlcprof``
package, e.g. ``git archive`` of a commit, unpacked), a fourth side,
``report-before``: the same as ``report`` with that version's plugin.

Each plugin side is paired with a bare run right beside it, the pair's order
alternating by round (bare first, then the side first: ABBA), so a drift in
the machine's load falls on both halves of a pair alike; on a loaded machine
the pairs' spread, not one run, says what is measurable. Wall seconds of the
whole pytest command and CPU seconds of its process tree (the load-independent
figure), each as the ratio to its pair's bare run: the median, the pairs'
range, and the median's bootstrap interval ("no measurable difference" where
it holds 1).

    .venv/bin/python benchmarks/plugin_overhead.py [--rounds 5] [--tests 12]
        [--sides report,budgets] [--before DIR] [--cold]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from common import ROOT, load_line, machine, ratio_line, timed

PROJECT = ROOT / "tests" / "programs" / "budget_project"
SIDES = ("report", "budgets")

SUITE = """
import pytest
import torch
from model import Model


@pytest.fixture(autouse=True)
def fresh():
    torch._dynamo.reset()
    # The head branches on its input's values: seeded, every run compiles the same graphs.
    torch.manual_seed(0)


@pytest.mark.parametrize("layers", range(1, {n} + 1))
{marker}def test_model(layers):
    model = torch.compile(Model(layers=layers))
    model(torch.randn(4, 8)).sum().backward()
"""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--tests", type=int, default=12)
    p.add_argument("--sides", default=",".join(SIDES), help=f"of {', '.join(SIDES)}")
    p.add_argument("--before", type=Path, default=None, metavar="CHECKOUT")
    p.add_argument("--cold", action="store_true", help="each run from an empty Inductor cache")
    args = p.parse_args()
    sides = [x for x in args.sides.split(",") if x]
    if unknown := set(sides) - set(SIDES):
        p.error(f"--sides: {', '.join(sorted(unknown))} is not one of {', '.join(SIDES)}")
    if args.before:
        sides.append("report-before")
    print(machine())
    tmp = Path(tempfile.mkdtemp(prefix="dlcprof-plugin-overhead-"))
    shutil.copy(PROJECT / "model.py", tmp / "model.py")
    (tmp / "check_plain.py").write_text(SUITE.format(n=args.tests, marker=""))
    budget = "@pytest.mark.compile_budget(graph_breaks=5, recompiles=5)\n"
    (tmp / "check_budgets.py").write_text(SUITE.format(n=args.tests, marker=budget))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp / "cache")}
    # dlcprof's modules byte-compiled once, as an install leaves them: with
    # PYTHONDONTWRITEBYTECODE set, every plugin run would compile them from source.
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    argv = {
        "bare": [*pytest, "-p", "no:dlcprof", "check_plain.py"],
        "report": [*pytest, "--dlcprof-report", "REPORT", "check_plain.py"],
        "budgets": [*pytest, "check_budgets.py"],
        "report-before": [*pytest, "--dlcprof-report", "REPORT", "check_plain.py"],
    }
    envs = {v: env for v in ("bare", *sides)}
    if args.before:
        envs["report-before"] = {**env, "PYTHONPATH": str(args.before.resolve())}
    os.chdir(tmp)
    for v in ("bare", *sides):  # untimed: the Inductor cache and the bytecode made
        shutil.rmtree(tmp / "REPORT", ignore_errors=True)
        timed(argv[v], envs[v])
    # side -> [(side's wall, bare's wall, side's CPU, bare's CPU)], one per round
    pairs: dict[str, list[tuple[float, float, float, float]]] = {v: [] for v in sides}
    for rep in range(args.rounds):
        for side in sides:
            order = ("bare", side) if rep % 2 == 0 else (side, "bare")
            got = {}
            for v in order:
                shutil.rmtree(tmp / "REPORT", ignore_errors=True)
                if args.cold:
                    shutil.rmtree(tmp / "cache", ignore_errors=True)
                got[v] = timed(argv[v], envs[v])
            (w, c), (bw, bc) = got[side], got["bare"]
            pairs[side].append((w, bw, c, bc))
    for side, ps in pairs.items():
        print(ratio_line(f"{side} / bare, wall", [w / bw for w, bw, _, _ in ps], goal=1.05))
        print(ratio_line(f"{side} / bare, CPU", [c / bc for _, _, c, bc in ps], goal=1.05))
        print(f"  {side} minus bare, CPU s:", " ".join(f"{c - bc:+.2f}" for _, _, c, bc in ps))
    bare = [bw for ps in pairs.values() for _, bw, _, _ in ps]
    print("bare wall s:", " ".join(f"{w:.1f}" for w in bare))
    print(load_line())


if __name__ == "__main__":
    main()
