"""A checkout in a folder named ``dlcprof`` (``git clone`` names it so), its venv
inside: torch and the user's program are not dlcprof's own code (issue 40,
item 1). tests/unit/test_own_code.py covers the crash and the import paths."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from helpers.paths import PROGRAMS


def test_a_break_in_a_clone_named_dlcprof_is_at_the_programs_line(tmp_path):
    clone = tmp_path / "dlcprof"
    program = clone / "tests" / "programs" / "library_break.py"
    program.parent.mkdir(parents=True)
    shutil.copyfile(PROGRAMS / "library_break.py", program)  # a copy: no link to resolve away
    (clone / ".venv").symlink_to(sys.prefix)  # torch's frames read .../dlcprof/.venv/...
    python = clone / ".venv" / "bin" / Path(sys.executable).name
    out = tmp_path / "session.json"
    dlcprof = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--no-hotspots"]
    p = subprocess.run(
        [*dlcprof, "--", str(python), str(program)],
        cwd=clone,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    line = 1 + next(
        i for i, s in enumerate(program.read_text().splitlines()) if "tag = json.dumps" in s
    )
    (run,) = [r for r in json.loads(out.read_text())["runs"] if r["process"] is not None]
    assert {b["location"] for b in run["graph_breaks"]} == {f"{program}:{line}"}
    (advice, *_) = json.loads(out.read_text())["advice"]["items"]
    assert advice["rule"] == "graph-break" and advice["where"] == f"{program}:{line}"
