"""The pytest plugin's cost on a test suite that compiles (issue 30; goal ≤ 5%).

A suite of ``--tests`` tests, each compiling the sample project's model
(tests/programs/budget_project/model.py) from fresh Dynamo caches (the suite
resets them itself, so both sides compile the same), run side by side, the
order rotated by round:

- ``bare``: ``pytest -p no:dlcprof`` (the plugin not loaded);
- ``report``: ``pytest --dlcprof-report DIR``: every test watched, a run each,
  the session saved: the plugin's heaviest use;
- ``budgets``: every test under ``@pytest.mark.compile_budget``, judged.

With ``--before CHECKOUT`` (a folder holding another version's ``dlcprof``
package, e.g. ``git archive`` of a commit, unpacked), a fourth side,
``report-before``: the same as ``report`` with that version's plugin.

Wall seconds of the whole pytest command and CPU seconds of its process tree,
as ratios to the bare run of the same round.

    .venv/bin/python benchmarks/plugin_overhead.py [--rounds 3] [--tests 8] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
from pathlib import Path

from common import ROOT, load_line, machine, ratio_line, ratios, rotated, timed

PROJECT = ROOT / "tests" / "programs" / "budget_project"
VARIANTS = ("bare", "report", "budgets")

SUITE = """
import pytest
import torch
from model import Model


@pytest.fixture(autouse=True)
def fresh():
    torch._dynamo.reset()


@pytest.mark.parametrize("layers", range(1, {n} + 1))
{marker}def test_model(layers):
    model = torch.compile(Model(layers=layers))
    model(torch.randn(4, 8)).sum().backward()
"""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--tests", type=int, default=8)
    p.add_argument("--before", type=Path, default=None, metavar="CHECKOUT")
    args = p.parse_args()
    variants = (*VARIANTS, "report-before") if args.before else VARIANTS
    print(machine())
    tmp = Path(tempfile.mkdtemp(prefix="dlcprof-plugin-overhead-"))
    shutil.copy(PROJECT / "model.py", tmp / "model.py")
    (tmp / "check_plain.py").write_text(SUITE.format(n=args.tests, marker=""))
    budget = "@pytest.mark.compile_budget(graph_breaks=5, recompiles=5)\n"
    (tmp / "check_budgets.py").write_text(SUITE.format(n=args.tests, marker=budget))
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp / "cache")}
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    argv = {
        "bare": [*pytest, "-p", "no:dlcprof", "check_plain.py"],
        "report": [*pytest, "--dlcprof-report", "REPORT", "check_plain.py"],
        "budgets": [*pytest, "check_budgets.py"],
        "report-before": [*pytest, "--dlcprof-report", "REPORT", "check_plain.py"],
    }
    envs = {v: env for v in variants}
    if args.before:
        envs["report-before"] = {**env, "PYTHONPATH": str(args.before.resolve())}
    os.chdir(tmp)
    timed(argv["bare"], env)  # untimed: the Inductor cache filled for every round
    walls: dict[str, list[float]] = {v: [] for v in variants}
    cpus: dict[str, list[float]] = {v: [] for v in variants}
    for rep in range(args.rounds):
        for v in rotated(variants, rep):
            shutil.rmtree(tmp / "REPORT", ignore_errors=True)
            wall, cpu = timed(argv[v], envs[v])
            walls[v].append(wall)
            cpus[v].append(cpu)
    for v in variants[1:]:
        print(ratio_line(f"{v} / bare, wall", ratios(walls[v], walls["bare"]), goal=1.05))
        print(ratio_line(f"{v} / bare, CPU", ratios(cpus[v], cpus["bare"])))
    print("bare wall s:", " ".join(f"{w:.1f}" for w in walls["bare"]))
    print(load_line())


if __name__ == "__main__":
    main()
