"""`dlcprof paper --quick`, run by the command itself, end to end."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers.paths import REPO

from dlcprof.figures import benchmark as fb
from dlcprof.figures import paper as fpa
from dlcprof.figures import paper_tables as fpt
from dlcprof.report.load import load_session


@pytest.mark.slow
def test_dlcprof_paper_quick_end_to_end(tmp_path):
    """One tiny workload (its warm run and its fresh-cache compile) and a
    three-size sweep static and dynamic, run by the command itself."""
    out = tmp_path / "rep"
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "dlcprof.cli",
            "paper",
            "--quick",
            "--device",
            "cpu",
            "--size",
            "small",
            "--workloads",
            "pointwise-epilogue",
            "--report",
            str(out),
        ],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    lines = proc.stdout.splitlines()
    # Progress lines as the four runs start and finish, then the table.
    assert sum(line.startswith("▶ [") for line in lines) == 4
    assert sum(line.startswith("  ✓ ") for line in lines) == 4

    def table_row(label: str) -> str:
        return next(line for line in lines if label in line)

    assert "8.21x" in table_row(fpt.FINDING_BEST)
    assert "thousands of runs" in table_row(fpt.FINDING_BREAK_EVEN)
    assert "thousands of runs" in table_row(fpt.FINDING_FRESH)
    assert "−70%" in table_row(fpt.FINDING_TRANSITIONS)
    assert fpt.PAPER_STEADY in table_row(fpt.FINDING_STEADY)

    session = load_session(out / "session.json")
    f = fpa.findings(session)
    assert f is not None and len(session.runs) == 4
    assert all(r.status == "ok" for r in session.runs.values())
    # The measured figures of the table are the session's.
    for label, _, measured in fpt.summary_rows(f):
        assert " ".join(measured.split()) in " ".join(table_row(label).split())
    pair = f.sweep
    assert pair.complete and pair.sizes() == [4, 6, 8]
    assert sum(st.recompiled for st in pair.static.sweep) == 3  # one compile per size
    assert fpt.change(-pair.reduction) in table_row(fpt.FINDING_TRANSITIONS)
    # The fresh-cache runs ran on a cache of their own, not the warm one.
    fresh = [r for r in session.runs.values() if r.settings.cache == "fresh"]
    assert len(fresh) == 3 and all(fb.compile_cache(r).state == "miss" for r in fresh)
    # pointwise-epilogue: the 36 ops of its six blocks in one fused kernel.
    epilogue = f.workloads[0].run
    (kernel,) = epilogue.kernels
    assert kernel.kind == "pointwise" and {"aten.mul", "aten.add", "aten.relu"} <= set(
        kernel.fused_ops
    )
    assert [c.record.graph_op_count for c in epilogue.compiles.values()] == [36]
    assert {"report.html", "report.md", "session.json"} <= {p.name for p in out.iterdir()}
    assert fpt.PAPER_BEST in (out / "report.html").read_text()
