"""The session's scratch folder (raw traces, the py-spy profile) goes with its
process: removed at exit, and, after a SIGKILL, by the next dlcprof."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

MAKE = "from dlcprof import scratch; print(scratch.new_folder('pyspy'), flush=True)"


def _python(code: str, tmp: Path) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "TMPDIR": str(tmp)}
    return subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)


def test_removed_when_the_process_exits(tmp_path: Path) -> None:
    made = Path(_python(MAKE, tmp_path).stdout.strip())
    assert made.parent.parent == tmp_path
    assert not made.parent.exists()


def test_a_killed_process_leaves_it_to_the_next(tmp_path: Path) -> None:
    killed = _python(MAKE + "; import os; os.kill(os.getpid(), 9)", tmp_path)
    assert killed.returncode == -9
    orphan = Path(killed.stdout.strip()).parent
    assert orphan.is_dir()
    _python(MAKE, tmp_path)
    assert not orphan.exists()
    assert list(tmp_path.iterdir()) == []  # and the second removed its own
