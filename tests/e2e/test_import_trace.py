"""``dlcprof import`` of what this torch writes under TORCH_TRACE, end to end:
a real script compiled with TORCH_TRACE set, its log imported, its graph break
and compile ids as tlparse reads the same log (the recorded logs of
tests/unit/test_trace_import.py come from one torch; this one from the torch
installed now)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from helpers.paths import PROGRAMS
from helpers.worker import TEST_CACHE

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.report.load import load_session

TLPARSE = Path(sys.executable).parent / "tlparse"


def test_a_scripts_torch_trace_imports_as_tlparse_and_its_source_say(tmp_path, capsys):
    trace = tmp_path / "trace"
    subprocess.run(
        [sys.executable, str(PROGRAMS / "train.py"), "--steps", "1"],
        env={**os.environ, "TORCHINDUCTOR_CACHE_DIR": TEST_CACHE, "TORCH_TRACE": str(trace)},
        check=True,
        capture_output=True,
        timeout=600,
    )
    assert main(["import", str(trace), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "imported from 1 TORCH_TRACE log" in printed
    # Every payload's md5 as this torch wrote it; a log closed whole is not called cut.
    assert "skipped" not in printed and "'s log ends" not in printed
    (run,) = load_session(tmp_path / "out").runs.values()
    # The data-dependent branch of train.py's compiled helper, where its source has it.
    line = 1 + next(
        i
        for i, s in enumerate((PROGRAMS / "train.py").read_text().splitlines())
        if "if y.sum()" in s
    )
    assert {(b.reason, b.location) for b in run.graph_breaks} == {
        ("Data-dependent branching", f"{PROGRAMS / 'train.py'}:{line}")
    }
    (log,) = trace.iterdir()
    subprocess.run([str(TLPARSE), str(log), "-o", str(tmp_path / "tl"), "--overwrite"], check=True)
    listed = json.loads((tmp_path / "tl" / "compile_directory.json").read_text())
    tl = {k.strip("[]") for k in listed if "_" not in k and k != "[-/-]"}
    assert {c for c in run.compiles if not c.endswith(ev.BACKWARD)} == tl
