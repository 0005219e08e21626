"""Failures caused for real: a crashing, raising or hanging workload, Ctrl-C
mid-compile. Each ends with one line saying what happened, a non-zero exit,
and --json written with what was captured."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

pytestmark = pytest.mark.slow


def _dlcprof(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dlcprof.cli", *args],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, **kw,
    )  # fmt: skip


def _report(path: Path) -> dict:
    data = json.loads(path.read_text())
    assert data["schema"] == "dlcprof.report/1"
    return data


def test_segfaulting_workload_is_reported_with_its_signal(tmp_path):
    model = tmp_path / "crash.py"
    model.write_text("import ctypes\n\ndef build(device, dtype):\n    ctypes.string_at(0)\n")
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet")
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 1
    assert "worker died with SIGSEGV" in stdout + stderr
    data = _report(out)
    assert any(e["type"] == "WorkerExited" and e["signal"] == "SIGSEGV" for e in data["events"])


def test_raising_workload_gives_one_line_and_the_users_traceback(tmp_path):
    model = tmp_path / "bad.py"
    model.write_text("def build(device, dtype):\n    return 1 / 0\n")
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet")
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 1
    assert "ZeroDivisionError" in stdout
    errors = [e for e in _report(out)["events"] if e["type"] == "ErrorRaised"]
    assert errors and "\n" not in errors[0]["message"]
    assert str(model) in errors[0]["traceback"]


def test_hanging_worker_is_stopped_by_the_timeout(tmp_path):
    model = tmp_path / "hang.py"
    model.write_text("import time\n\ndef build(device, dtype):\n    time.sleep(600)\n")
    out = tmp_path / "out.json"
    start = time.monotonic()
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet", "--timeout", "3")
    stdout, stderr = p.communicate(timeout=120)
    assert time.monotonic() - start < 60
    assert p.returncode == 1
    assert "worker hung: no event for 3 s" in stdout + stderr
    assert _report(out)["events"]


def _compiler_descendants(pid: int) -> list[psutil.Process]:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    return [k for k in kids if k.name() in ("g++", "cc1plus", "c++", "gcc", "as", "ld")]


def test_ctrl_c_mid_compile_kills_worker_and_compilers(tmp_path):
    out = tmp_path / "out.json"
    # A cold cache makes the first compile long and full of g++ children.
    p = _dlcprof(
        "run", "pointwise-chain", "--size", "small", "--cache", "cold", "--json", str(out),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )  # fmt: skip
    deadline = time.monotonic() + 120
    seen: list[psutil.Process] = []
    while time.monotonic() < deadline and not seen:
        seen = _compiler_descendants(p.pid)
        time.sleep(0.05)
    assert seen, "no C++ compiler child appeared"
    everyone = psutil.Process(p.pid).children(recursive=True)
    p.send_signal(signal.SIGINT)
    sent = time.monotonic()
    stdout, stderr = p.communicate(timeout=30)
    assert time.monotonic() - sent < 5
    assert p.returncode == 130
    assert "Ctrl-C" in stdout
    time.sleep(0.5)
    alive = [q for q in everyone if q.is_running() and q.status() != psutil.STATUS_ZOMBIE]
    assert not alive, f"left running: {[q.name() for q in alive]}"
    data = _report(out)
    assert data["runs"][0]["status"] == "cancelled"
    assert any(e["type"] == "PhaseStarted" for e in data["events"])
