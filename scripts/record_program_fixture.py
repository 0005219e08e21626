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

    .venv/bin/python scripts/record_program_fixture.py torchtitan_fsdp2 \
        --report /tmp/titan/run.json

``--report``: the events of a session saved by ``dlcprof run --json`` of a
program this venv cannot run (a stack of examples/stacks/, installed in its
own venv), kept as a recording is (py-spy's samples left out too, as
``--no-hotspots`` records none).
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
LEFT_OUT = {"DeviceSampled", "HotFramesSampled"}  # sizes only; no recording runs py-spy


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
        write(json.loads(report.read_text())["events"], fixture)


def write(events: list[dict], fixture: str) -> None:
    OUT.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(e) for e in events if e["type"] not in LEFT_OUT]
    text = "\n".join(lines) + "\n"
    (OUT / f"{fixture}.jsonl").write_text(text.replace(str(ROOT), RECORDED_CHECKOUT))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("name")
    parser.add_argument("--as", dest="fixture")
    parser.add_argument("--report", type=Path, help="a saved session's events instead of a run")
    known, rest = parser.parse_known_args()
    if known.report:
        write(json.loads(known.report.read_text())["events"], known.fixture or known.name)
    else:
        main(known.name, rest, known.fixture or known.name)
