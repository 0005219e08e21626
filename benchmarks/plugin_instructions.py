"""The pytest plugin's cost counted in instructions (issue 40; goal ≤ 1.05).

``plugin_overhead.py``'s suite (its tests, its model, Dynamo's caches reset per
test), each side's pytest process run once under Valgrind's callgrind, the two
at once (one a core): the instructions a process executes do not move with the
machine's load, where its seconds move ±10% a pair on a shared VM. Sides:

- ``bare``: ``-p no:dlcprof``;
- ``report``: ``--dlcprof-report DIR``;
- ``untraced`` (``--split``): the same with the trace probe not installed, so
  ``report`` minus ``untraced`` is what torch's trace records cost (torch making
  them, dlcprof reading them, the report holding them): the per-test part; the
  rest is paid once;
- ``report-before`` (``--before CHECKOUT``, a folder holding another version's
  ``dlcprof`` package): ``report`` with that version.

Before the counted runs each side runs once uncounted, with bytecode written
(an install's state; with ``PYTHONDONTWRITEBYTECODE`` every run would compile
the modules edited since from source) and the Inductor cache filled, so every
graph is a cache hit on both sides and no compiler subprocess is left out of
the count (``--trace-children=no``). ``ATEN_CPU_CAPABILITY=default``: Valgrind
3.19 cannot execute the AVX-512 kernels Inductor builds otherwise.

    .venv/bin/python benchmarks/plugin_instructions.py [--tests 6] [--split] [--before DIR]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from common import machine
from plugin_overhead import PROJECT, SUITE

# Loaded with -p on the `untraced` side only: the probe set without its trace probe.
UNTRACED = """
from dlcprof.worker.probes import trace

trace.install = lambda dispatcher, notes: None
"""


def main() -> None:
    p = argparse.ArgumentParser()
    p.add_argument("--tests", type=int, default=6)
    p.add_argument("--split", action="store_true", help="also the report without the trace probe")
    p.add_argument("--before", type=Path, default=None, metavar="CHECKOUT")
    args = p.parse_args()
    if shutil.which("valgrind") is None:
        sys.exit("valgrind not found: apt-get install valgrind")
    print(machine())
    tmp = Path(tempfile.mkdtemp(prefix="dlcprof-plugin-instructions-"))
    shutil.copy(PROJECT / "model.py", tmp / "model.py")
    (tmp / "check_plain.py").write_text(SUITE.format(n=args.tests, marker=""))
    (tmp / "untraced.py").write_text(UNTRACED)
    env = {
        **os.environ,
        "TORCHINDUCTOR_CACHE_DIR": str(tmp / "cache"),
        "ATEN_CPU_CAPABILITY": "default",
        "PYTHONHASHSEED": "0",
        "PYTHONPATH": str(tmp),
    }
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    pytest = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist"]
    untraced = ["-p", "untraced", "--dlcprof-report", "REPORT-untraced"]
    argv = {
        "bare": [*pytest, "-p", "no:dlcprof", "check_plain.py"],
        "report": [*pytest, "--dlcprof-report", "REPORT-report", "check_plain.py"],
        "untraced": [*pytest, *untraced, "check_plain.py"],
        "report-before": [*pytest, "--dlcprof-report", "REPORT-report-before", "check_plain.py"],
    }
    sides = ["bare", "report", *(["untraced"] if args.split else [])]
    envs = {side: env for side in sides}
    if args.before:
        sides.append("report-before")
        envs["report-before"] = {**env, "PYTHONPATH": f"{args.before.resolve()}{os.pathsep}{tmp}"}
    os.chdir(tmp)
    for side in sides:  # uncounted: the Inductor cache and the bytecode made
        subprocess.run(argv[side], env=envs[side], check=True, capture_output=True)

    def counted(side: str) -> int:
        shutil.rmtree(tmp / f"REPORT-{side}", ignore_errors=True)
        out = tmp / f"callgrind.{side}"
        cmd = ["valgrind", "--tool=callgrind", "--trace-children=no"]
        cmd += [f"--callgrind-out-file={out}", *argv[side]]
        done = subprocess.run(cmd, env=envs[side], capture_output=True, text=True)
        m = re.search(r"Collected : (\d+)", done.stderr)
        if done.returncode != 0 or m is None:
            sys.exit(f"{side}: pytest under valgrind failed:\n{done.stdout[-2000:]}")
        return int(m.group(1))

    entries = _cache_entries(tmp / "cache")
    with ThreadPoolExecutor(max_workers=os.cpu_count() or 1) as pool:
        got = dict(zip(sides, pool.map(counted, sides), strict=True))
    if (new := _cache_entries(tmp / "cache") - entries) > 0:
        # A graph neither warm-up compiled (a key of this torch's that moved between
        # runs): that side compiled from scratch, and its count says so, not the plugin.
        sys.exit(f"{new} new Inductor cache entries: a counted run compiled anew; run again")
    bare = got["bare"]
    for side, n in got.items():
        print(f"{side:>9}: {n / 1e9:7.3f} G instructions, {n / bare:.3f} of bare")
    saved = {f.name: f.stat().st_size for f in (tmp / "REPORT-report").iterdir()}
    print("report folder:", ", ".join(f"{k} {v / 1e6:.2f} MB" for k, v in sorted(saved.items())))
    if args.split:
        traced = got["report"] - got["untraced"]
        each = traced / args.tests
        print(f"trace records (per test): {traced / 1e9:.3f} G, {each / 1e9:.3f} G a test")
        print(f"the rest (once a session): {(got['untraced'] - bare) / 1e9:.3f} G")


def _cache_entries(folder: Path) -> int:
    return sum(1 for p in folder.rglob("*") if p.is_file())


if __name__ == "__main__":
    main()
