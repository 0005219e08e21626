"""Signals to dlcprof mid-compile, sent for real to real processes: SIGTERM (a
CI timeout), SIGHUP (the terminal or SSH session closed), `q` in the TUI, and
SIGKILL, after which nothing of dlcprof can run. Each must stop the worker,
its children and py-spy, keep what was captured, and exit non-zero.

The workload sits in Dynamo's trace (a fake kernel that sleeps) with a child
of its own, as Inductor has g++ children; tests/e2e/test_failures.py does Ctrl-C
during a real cold compile with real g++ children.
"""

from __future__ import annotations

import json
import os
import signal
import time
from pathlib import Path

import pytest
from helpers.proc import (
    SLOW_COMPILE,
    Terminal,
    dlcprof_argv,
    spawn,
    tree,
    wait_for_file,
    wait_gone,
)

from dlcprof import events as ev
from dlcprof import journal
from dlcprof.report import load_session


@pytest.fixture
def slow(tmp_path: Path) -> tuple[Path, Path, dict[str, str]]:
    """(workload, the file it writes once compiling, the environment to run it in)."""
    path = tmp_path / "slow_compile.py"
    path.write_text(SLOW_COMPILE)
    mark = tmp_path / "compiling"
    return path, mark, {**os.environ, "DLCPROF_TEST_MARK": str(mark)}


# SIGHUP stops a run by the handler SIGTERM does (tests/unit/test_stop_signals.py
# sends both for real): its own run is slow.
@pytest.mark.parametrize(
    "sig",
    [signal.SIGTERM, pytest.param(signal.SIGHUP, marks=pytest.mark.slow)],
    ids=["SIGTERM", "SIGHUP"],
)
def test_run_stops_the_worker_and_writes_the_json_on(sig, slow, tmp_path) -> None:
    path, mark, env = slow
    out = tmp_path / "out.json"
    scratch = tmp_path / "tmp"  # a TMPDIR of its own: what the run leaves there
    scratch.mkdir()
    env = {**env, "TMPDIR": str(scratch)}
    p = spawn(dlcprof_argv("run", str(path), "--json", str(out), "--quiet"), env=env)
    worker, child = map(int, wait_for_file(mark, p).split())
    everyone = [*tree(p.pid)[1:], child]  # the worker, its child, py-spy
    assert worker in everyone
    p.send_signal(sig)
    stdout, stderr = p.communicate(timeout=60)
    assert p.returncode == 128 + sig, stderr
    assert not wait_gone(everyone, 5), "left running"
    if sig == signal.SIGTERM:  # after SIGHUP there is no terminal to tell
        assert "SIGTERM: stopping the worker and its compiler children" in stdout
        assert f"report JSON written to {out}" in stderr
    data = json.loads(out.read_text())
    assert data["runs"][0]["status"] == "cancelled"
    (exit_,) = [e for e in data["events"] if e["type"] == "WorkerExited"]
    assert exit_["cancelled"] and signal.Signals(sig).name in exit_["message"]
    # Killed mid-compile (SIGTERM, SIGKILL after a grace), not left to end it.
    assert exit_["signal"] in ("SIGTERM", "SIGKILL")
    assert not [e for e in data["events"] if e["type"] == "CompileFinished"]
    assert any(e["type"] == "PhaseStarted" for e in data["events"])  # it was compiling
    assert list(scratch.iterdir()) == [], "files left in TMPDIR"


def test_the_worker_dies_with_a_killed_dlcprof_and_its_session_is_recovered(
    slow, tmp_path, state_folder
) -> None:
    path, mark, env = slow
    p = spawn(dlcprof_argv("run", str(path), "--quiet"), env=env)
    worker, child = map(int, wait_for_file(mark, p).split())
    everyone = [*tree(p.pid)[1:], child]
    p.kill()  # nothing of dlcprof runs after SIGKILL: the worker must notice by itself
    p.communicate(timeout=30)
    assert not wait_gone([worker, child], 5), "the worker outlived dlcprof"
    assert not wait_gone(everyone, 10), "py-spy outlived the worker"
    # What it had folded is on disk; the next dlcprof that records recovers it.
    (left,) = (state_folder / journal.LIVE).iterdir()
    assert left.name.startswith(f"{p.pid}-")
    (line,) = journal.recover()
    kept = state_folder / journal.RECOVERED / left.name
    assert f"the session of dlcprof {p.pid}, which ended without saving" in line
    assert line.endswith(f"dlcprof replay {kept}")
    session = load_session(kept)
    run = session.latest_run
    assert run is not None and run.status == "cancelled"  # not "running"
    assert any(isinstance(e, ev.PhaseStarted) for e in session.events)  # it was compiling
    (exit_,) = session.worker_exits
    assert exit_.message.startswith("dlcprof ended at ")
    assert exit_.message.endswith(
        "without saving (SIGKILL, the out-of-memory killer, or the "
        "machine went down): the run stopped with it"
    )
    assert [e.message for e in session.errors] == [exit_.message.split(": the run")[0]]


# SIGHUP with its default handler at start takes the path nohup's takes (the TUI
# takes SIGHUP either way: tests/unit/test_stop_signals.py), so the default run
# closes the terminal once, under nohup.
@pytest.mark.parametrize(
    "how", ["SIGTERM", pytest.param("SIGHUP", marks=pytest.mark.slow), "nohup", "q"]
)
def test_tui_mid_compile(how, slow, tmp_path) -> None:
    path, mark, env = slow
    # nohup: SIGHUP ignored from the start, which the TUI must not keep (it spun).
    inherited = signal.signal(signal.SIGHUP, signal.SIG_IGN if how == "nohup" else signal.SIG_DFL)
    try:
        term = Terminal(dlcprof_argv("tui", str(path)), tmp_path, {**env, "TERM": "xterm-256color"})
    finally:
        signal.signal(signal.SIGHUP, inherited)
    # r as soon as the standby worker is spawned: the run takes it while torch
    # still imports there (no second worker importing torch again).
    deadline = time.monotonic() + 120
    while len(tree(term.proc.pid)) < 2 and time.monotonic() < deadline:
        time.sleep(0.05)
    standby = tree(term.proc.pid)[1:]
    term.type(b"r")
    worker, child = map(int, wait_for_file(mark, term.proc).split())
    assert [worker] == standby  # the run's worker is the standby worker
    everyone = [*tree(term.proc.pid)[1:], child]
    if how == "SIGTERM":
        term.proc.send_signal(signal.SIGTERM)
    elif how in ("SIGHUP", "nohup"):
        term.close()  # the kernel sends SIGHUP: no one sends it by hand
    else:
        term.type(b"q")
    rc = term.proc.wait(60)
    assert not wait_gone(everyone, 5), "left running"
    reports = tmp_path / "dlcprof-reports"
    if how == "q":
        assert rc == 0 and not reports.exists()  # quitting is the user's choice
        return
    assert rc == 128 + getattr(signal, "SIGHUP" if how == "nohup" else how)
    (folder,) = reports.iterdir()
    session = load_session(folder / "session.json")
    assert session.latest_run is not None and session.latest_run.status == "cancelled"
    assert any(isinstance(e, ev.PhaseStarted) for e in session.events)  # it was compiling
    if how == "SIGTERM":
        assert b"SIGTERM: the session is saved to" in term.output
