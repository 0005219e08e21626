"""`dlcprof run` end to end: a real compile, live lines, tables, report folder;
every monitor paused while the worker times, and every view saying what
watched the run and what that cost. One real run, read by each test."""

from __future__ import annotations

import io
import os
import subprocess
import sys
from pathlib import Path

import pytest
from rich.console import Console

from dlcprof.console import run_summary
from dlcprof.figures import hotspots as fh
from dlcprof.figures import observer as fo
from dlcprof.monitors.samples import load_samples
from dlcprof.report import load_session
from dlcprof.report.folder import PROFILE_NAME
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model

# The module's real run is shared by its tests: one process runs them all.
pytestmark = pytest.mark.xdist_group("test_cli_run")


@pytest.fixture(scope="module")
def graph_breaks_run(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path]:
    """``dlcprof run graph-breaks --report``: its process and report folder. Enough
    timed calls that 25 Hz py-spy and the 4 Hz device sampler would both have
    sampled the timed windows many times had they been running."""
    out = tmp_path_factory.mktemp("cli_run") / "rep"
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
            "5",
            "--iters",
            "4000",
            "--report",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "160"},
    )
    return p, out


def test_run_prints_live_lines_and_tables_and_writes_the_report(graph_breaks_run):
    p, out = graph_breaks_run
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
    session = load_session(out / "session.json")
    run = session.latest_run
    assert PROFILE_NAME in files, run.monitors.get("py-spy")
    assert run.status == "ok" and len(run.graph_breaks) == 2
    assert run.hot_frames is not None  # py-spy's aggregate belongs to the run it watched
    rows = run.hot_frames.rows
    assert {r["phase"] for r in rows} - {None}, "no hot frame was attributed to a compile phase"
    # py-spy saw the compiler's own Python (Dynamo / Inductor) at work in the worker.
    compiler = [
        r for r in rows if r["phase"] and ("_dynamo/" in r["file"] or "_inductor/" in r["file"])
    ]
    assert compiler, [(r["function"], r["file"]) for r in rows]


def test_a_real_run_pauses_every_monitor_while_it_times(graph_breaks_run) -> None:
    p, out = graph_breaks_run
    assert p.returncode == 0, p.stderr
    session = load_session(out / "session.json")
    run = session.latest_run
    assert run.benchmark is not None, [x.message for x in run.errors]

    # Every timed window (the benchmark, the kernel profile, the steady-allocator
    # benchmark) was quiet.
    windows = {w.what: w for w in run.timed}
    assert "benchmark" in windows and all(w.quiet for w in windows.values()), windows
    window = windows["benchmark"]
    assert window.t - window.start_t > 0.5
    inside = lambda t: any(w.start_t <= t <= w.t for w in windows.values())  # noqa: E731
    device = [s.t for s in run.device_samples]
    assert device and not [t for t in device if inside(t)]
    assert [t for t in device if t < window.start_t]  # it sampled the compile

    # py-spy: the saved profile has samples in the compile phases, none in the window.
    assert run.profile is not None, run.monitors.get("py-spy")
    samples = load_samples(out / PROFILE_NAME)  # the run's profile, copied whole
    assert samples and not [s for s in samples if inside(s.t)]
    compiling = [p for c in run.compiles.values() for p in c.phases]
    in_compile = [s for s in samples if any(p.start_t <= s.t <= p.end_t for p in compiling)]
    assert len(in_compile) > 10
    assert any(r.phase for r in fh.hot_rows(run, 50))  # rows attributed to compile phases

    # What watched it, what that cost, and that timing was quiet: in every view.
    watchers = {w.name: w for w in fo.watchers(run)}
    assert set(watchers) == {"py-spy", "device sampler"}
    assert watchers["py-spy"].how == "25 Hz, non-blocking"
    for w in watchers.values():
        assert w.cpu_share is not None and 0 < w.cpu_share < 1, w
    line = fo.line(run)
    assert "py-spy 25 Hz, non-blocking (" in line and "of a core" in line
    assert "paused while the benchmark" in line and "timed" in line
    assert line in render_markdown(build_model(session))
    printed = io.StringIO()
    out = Console(width=400, file=printed)
    out.print(run_summary(run, session))
    assert line in printed.getvalue()
