"""A program run under ``dlcprof run --json`` as a user would, and the line of
a program that holds some words (what a test expects a finding to name)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path


def run_attached(program: Path, cwd: Path) -> tuple[subprocess.CompletedProcess, dict]:
    """``dlcprof run --json`` over ``python PROGRAM`` in ``cwd`` (where the
    program's own output folders land): the finished process and its report."""
    out = cwd / "r.json"
    argv = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--no-hotspots"]
    p = subprocess.run(
        [*argv, "--", sys.executable, str(program)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )
    return p, json.loads(out.read_text()) if out.exists() else {}


def line_of(program: Path, needle: str) -> int:
    return next(i for i, ln in enumerate(program.read_text().splitlines(), 1) if needle in ln)
