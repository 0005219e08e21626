#!/usr/bin/env python
"""Record a real attached program's event stream as a test fixture.

    .venv/bin/python scripts/record_program_fixture.py nested_log
    .venv/bin/python scripts/record_program_fixture.py ddp_train --eager-rank 1 --steps 2 \
        --as ddp_eager_rank

Runs ``dlcprof run -- python tests/programs/<name>.py [ARGS]`` and writes the
events it saw to ``tests/fixtures/programs/<name>.jsonl`` (or ``--as`` another
name, for a program run with arguments; device samples left out: they
only make the file bigger; this checkout's path reads ``/home/user/dlcprof``, as in
every recording). Uses the shared test cache. A ``ddp_`` program runs
as a 2-rank job: ``torchrun --standalone --nproc-per-node 2``.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "programs"
RECORDED_CHECKOUT = "/home/user/dlcprof"


def main(name: str, args: list[str], fixture: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        report = Path(tmp) / "session.json"
        launcher = [sys.executable]
        if name.startswith("ddp_"):
            torchrun = str(Path(sys.executable).parent / "torchrun")
            launcher = [torchrun, "--standalone", "--nproc-per-node", "2"]
        subprocess.run(
            [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(report), "--no-hotspots"]
            + ["--", *launcher, str(ROOT / "tests" / "programs" / f"{name}.py"), *args],
            check=True,
            cwd=ROOT,
        )
        events = json.loads(report.read_text())["events"]
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e) for e in events if e["type"] != "DeviceSampled"]
    text = "\n".join(lines) + "\n"
    (OUT / f"{fixture}.jsonl").write_text(text.replace(str(ROOT), RECORDED_CHECKOUT))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--as", dest="fixture")
    known, rest = parser.parse_known_args()
    main(known.name, rest, known.fixture or known.name)
