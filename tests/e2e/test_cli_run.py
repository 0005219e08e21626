"""`dlcprof run` end to end: a real compile, live lines, tables, report folder."""

from __future__ import annotations

import os
import subprocess
import sys

from dlcprof.report import load_session


def test_run_prints_live_lines_and_tables_and_writes_the_report(tmp_path):
    out = tmp_path / "rep"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "dlcprof.cli",
            "run",
            "graph-breaks",
            "--size",
            "small",
            "--reps",
            "3",
            "--iters",
            "5",
            "--report",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "160"},
    )
    assert p.returncode == 0, p.stderr
    # Live: each graph break with the user's file:line, each compile as it finishes.
    assert p.stdout.count("✂ graph break ") == 2
    assert "graph_breaks.py:" in p.stdout
    assert "compile done in" in p.stdout
    for title in ("Compile phases", "Kernels", "Eager vs compiled", "Device (cpu)"):
        assert title in p.stdout
    assert "no NVIDIA GPU (NVML not found)" in p.stdout
    # The folder: report, replayable session, trace, and the py-spy profile.
    files = {f.name for f in out.iterdir()}
    assert {"session.json", "report.html", "report.md", "trace.json"} <= files
    assert "pyspy.speedscope.json" in files
    session = load_session(out / "session.json")
    run = session.latest_run
    assert run.status == "ok" and len(run.graph_breaks) == 2
    assert run.hot_frames is not None  # py-spy's aggregate belongs to the run it watched
    rows = run.hot_frames.rows
    assert {r["phase"] for r in rows} - {None}, "no hot frame was attributed to a compile phase"
    # py-spy saw the compiler's own Python (Dynamo / Inductor) at work in the worker.
    compiler = [
        r for r in rows if r["phase"] and ("_dynamo/" in r["file"] or "_inductor/" in r["file"])
    ]
    assert compiler, [(r["function"], r["file"]) for r in rows]
