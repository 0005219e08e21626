"""py-spy sampler: pure aggregation, the missing/denied paths, and a REAL compile sampled live."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from dlcprof.events import HotFramesSampled, MonitorCostMeasured, MonitorStatus, ProfileSaved
from dlcprof.monitors.hotspots import PySpySampler
from dlcprof.monitors.pyspy import DENIED_MESSAGE, NOT_FOUND_MESSAGE, find_pyspy, pyspy_status
from dlcprof.monitors.samples import Sample, aggregate, attribute_phases, load_samples, thread_label
from dlcprof.text import short_path

# A real torch.compile: a pointwise chain compiled for 3 new static shapes. The
# session's Inductor cache dir (tests/conftest.py) is reused so the one-time ISA
# probes and header build are not paid every run; the shapes are unique per run
# so every compile misses the FX cache and really traces, lowers and runs g++.
COMPILE_CHILD = textwrap.dedent(
    """
    import json, os, sys, time
    import torch
    torch.set_num_threads(1)

    def f(x):
        y = torch.sin(x) * 2 + torch.cos(x)
        y = torch.relu(y) - x.exp() / (1 + x * x)
        return y.tanh() + y.sigmoid()

    cf = torch.compile(f, dynamic=False)
    base = 50 + (os.getpid() * 7919 + int(time.time())) % 4000
    for i in range(int(sys.argv[1])):
        t = time.time()
        cf(torch.randn(8 + i, base + i))
        print(json.dumps({"phase": "compile", "start": t, "end": time.time()}), flush=True)
    """
)


def F(func: str, file: str = "/x/site-packages/torch/_inductor/a.py", line: int = 1):
    return (func, file, line)


# --- pure ---------------------------------------------------------------------------


def test_aggregate_own_and_total() -> None:
    root, mid, leaf, other = F("root"), F("mid", line=5), F("leaf"), F("other")
    stacks = [
        Sample("main", (root, mid, leaf), count=3),
        Sample("main", (root, mid), count=1),
        Sample("main", (root, other)),
        Sample("main", (root, mid, F("mid", line=9))),  # recursion counts once in total
        Sample("pool", (root, leaf), count=2),  # another thread: its own rows
        Sample("main", ()),  # no Python frames: ignored
    ]
    rows = aggregate(stacks, top=10)
    by = {(r["function"], r["thread"]): r for r in rows}
    assert by[("leaf", "main")]["own"] == 3 and by[("leaf", "main")]["total"] == 3
    assert by[("mid", "main")]["own"] == 2 and by[("mid", "main")]["total"] == 5
    assert by[("mid", "main")]["line"] == 5  # the line seen most often
    assert by[("root", "main")]["own"] == 0 and by[("root", "main")]["total"] == 6
    assert by[("leaf", "pool")]["own"] == 2
    assert rows[0]["function"] == "leaf" and rows[0]["thread"] == "main"  # own-heaviest first
    assert all(r["file"] == "torch/_inductor/a.py" and r["phase"] is None for r in rows)
    assert set(rows[0]) == {"function", "file", "line", "thread", "own", "total", "phase"}
    # top=1: the single heaviest by own plus the single heaviest by total, per thread
    assert {(r["function"], r["thread"]) for r in aggregate(stacks, top=1)} == {
        ("leaf", "main"),
        ("root", "main"),
        ("leaf", "pool"),
        ("root", "pool"),
    }


def test_attribute_phases_uses_the_innermost_phase() -> None:
    a, b = F("dynamo_trace"), F("inductor_codegen")
    samples = [
        Sample("main", (a,), t=1.0),
        Sample("main", (a,), t=2.0),
        Sample("main", (b,), t=5.0),  # inside both "compile" and "inductor"
        Sample("main", (b,), t=50.0),  # in no phase
        Sample("main", (b,)),  # no time
    ]
    phases = [("compile", 0.0, 10.0), ("inductor", 4.0, 6.0)]
    rows = attribute_phases(samples, phases)
    got = [(r["phase"], r["function"], r["own"]) for r in rows]
    assert got == [
        ("compile", "dynamo_trace", 2),
        ("inductor", "inductor_codegen", 1),
        (None, "inductor_codegen", 2),
    ]


def test_labels_and_paths() -> None:
    assert thread_label('Thread 8633 "MainThread"') == "main"
    assert thread_label('Thread 8816 "ThreadPoolExecutor-1_0"') == "pool"
    assert thread_label('Thread 9 "loader"') == "loader"
    assert thread_label('Thread 9 ""') == "thread 9"
    assert short_path("/v/lib/python3.11/site-packages/torch/_dynamo/x.py") == "torch/_dynamo/x.py"
    assert short_path("/root/.pyenv/versions/3.11.7/lib/python3.11/subprocess.py") == (
        "subprocess.py"
    )
    assert short_path("/home/me/model.py") == "/home/me/model.py"


# --- missing / denied -------------------------------------------------------------------


@pytest.fixture
def sleeper():
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield child
    child.kill()
    child.wait()


def test_missing_pyspy_is_one_status_line(tmp_path: Path, sleeper) -> None:
    events: list = []
    sampler = PySpySampler(
        sleeper.pid, events.append, tmp_path / "p.json", binary=str(tmp_path / "no-py-spy")
    )
    sampler.start()
    sampler.stop()
    assert events == [
        MonitorStatus(monitor="py-spy", available=False, message=NOT_FOUND_MESSAGE, t=events[0].t)
    ]
    assert "\n" not in NOT_FOUND_MESSAGE
    assert not (tmp_path / "p.json").exists()
    assert pyspy_status(str(tmp_path / "no-py-spy")) == (False, NOT_FOUND_MESSAGE)


def _sampler_with(script: str, tmp_path: Path, pid: int) -> tuple[PySpySampler, list]:
    """A sampler of ``pid`` whose py-spy is the shell ``script``, and its events."""
    fake = tmp_path / "py-spy"
    fake.write_text(f"#!/bin/sh\n{script}")
    fake.chmod(0o755)
    events: list = []
    return PySpySampler(pid, events.append, tmp_path / "p.json", binary=str(fake)), events


def test_denied_ptrace_says_how_to_fix(tmp_path: Path, sleeper) -> None:
    # What py-spy 0.4.3 prints when ptrace is refused (seen running it as nobody).
    sampler, events = _sampler_with(
        "echo \"Permission Denied: Try running again with elevated permissions by going 'sudo "
        'env "PATH=$PATH" !!\'" >&2\n'
        "exit 1\n",
        tmp_path,
        sleeper.pid,
    )
    sampler.start()
    assert sampler.wait(10)  # gives up at once: no retries on a denial
    assert [(e.monitor, e.available, e.message) for e in events] == [
        ("py-spy", False, DENIED_MESSAGE)
    ]
    for fix in ("root", "kernel.yama.ptrace_scope=0", "--cap-add SYS_PTRACE"):
        assert fix in DENIED_MESSAGE


def test_a_profile_never_written_is_said(tmp_path: Path, sleeper) -> None:
    # A py-spy that attaches, then exits on SIGINT without writing its file.
    sampler, events = _sampler_with(
        "trap 'echo lost its output >&2; exit 1' INT\n"
        "echo 'py-spy> Sampling process 25 times a second'\nwhile :; do sleep 0.01; done\n",
        tmp_path,
        sleeper.pid,
    )
    sampler.start()
    time.sleep(0.5)
    sampler.stop()
    said = [(e.available, e.message) for e in events if isinstance(e, MonitorStatus)]
    assert said[-1] == (False, "py-spy attached but wrote no profile: lost its output"), said
    assert not (tmp_path / "p.json").exists()


def test_denied_for_real(tmp_path: Path, sleeper) -> None:
    """The real py-spy, run as nobody against a root-owned worker: the kernel refuses."""
    import shutil

    binary, setpriv = find_pyspy(), shutil.which("setpriv")
    if os.geteuid() != 0 or binary is None or setpriv is None:
        pytest.skip("needs root, setpriv and py-spy to run py-spy as another user")
    wrapper = tmp_path / "py-spy-as-nobody"
    wrapper.write_text(
        f'#!/bin/sh\nexec {setpriv} --reuid=65534 --regid=65534 --clear-groups {binary} "$@"\n'
    )
    wrapper.chmod(0o755)
    events: list = []
    sampler = PySpySampler(sleeper.pid, events.append, tmp_path / "p.json", binary=str(wrapper))
    sampler.start()
    assert sampler.wait(30)
    assert [(e.monitor, e.available, e.message) for e in events] == [
        ("py-spy", False, DENIED_MESSAGE)
    ]


def test_pyspy_status_here() -> None:
    ok, message = pyspy_status()
    assert ok, message
    assert "py-spy" in message


# --- real -----------------------------------------------------------------------------------


# Slow: py-spy on a real compile stays in the default run through
# test_cli_run.py (rows in the compile phases, the profile saved, its cost), and
# tests/unit/test_hotspots_presentation.py reads a recorded py-spy profile of a
# cold compile (tests/fixtures/pyspy).
@pytest.mark.slow
def test_live_hot_frames_of_a_real_compile(tmp_path: Path) -> None:
    assert find_pyspy() is not None
    script = tmp_path / "compile_child.py"
    script.write_text(COMPILE_CHILD)
    out = tmp_path / "profile.speedscope.json"
    events: list[tuple[float, object]] = []
    t0 = time.time()
    child = subprocess.Popen(
        [sys.executable, str(script), "3"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
        env=dict(os.environ, PYTHONWARNINGS="ignore"),
    )
    sampler = PySpySampler(child.pid, lambda e: events.append((time.time(), e)), out)
    sampler.start()
    stdout, _ = child.communicate(timeout=240)
    child_exit = time.time()
    assert child.returncode == 0
    assert sampler.wait(30)  # the worker's exit ends sampling and saves the profile
    phases = [json.loads(line) for line in stdout.splitlines() if line.startswith("{")]
    compile_s = sum(p["end"] - p["start"] for p in phases)
    assert len(phases) == 3 and compile_s > 2.0  # real compiles, not cache hits

    kinds = [type(e) for _, e in events]
    first = events[0][1]
    assert isinstance(first, MonitorStatus) and first.available
    live = [(t, e) for t, e in events if isinstance(e, HotFramesSampled)]
    # Live: rows arrived about once a second while the worker was still running.
    during = [e for t, e in live if t < child_exit]
    assert len(during) >= 3, [t - t0 for t, _ in live]
    assert [e.samples for e in during] == sorted(e.samples for e in during)
    saved = [e for _, e in events if isinstance(e, ProfileSaved)]
    assert len(saved) == 1 and kinds[-1] is ProfileSaved
    assert saved[0].path == str(out) and saved[0].format == "speedscope"
    assert saved[0].samples == sampler.ticks == live[-1][1].samples
    # Windows hand over without gaps, and py-spy keeps near its rate (the bound is
    # loose for a loaded machine).
    first, last = sampler.windows[0][0], sampler.windows[-1][1]
    assert sum(b - a for a, b, _ in sampler.windows) >= 0.95 * (last - first)
    assert sampler.ticks > 0.3 * (child_exit - t0) * sampler.rate_hz
    # What py-spy itself used, reported with the rows and last before the profile.
    costs = [e for _, e in events if isinstance(e, MonitorCostMeasured)]
    assert costs and kinds[-2] is MonitorCostMeasured
    assert 0 < costs[-1].cpu_s < costs[-1].active_s <= time.time() - t0

    # The hot frames include the compiler's own functions.
    rows = live[-1][1].rows
    files = {r["file"] for r in rows}
    assert any(f.startswith(("torch/_dynamo/", "torch/_inductor/")) for f in files), files
    assert {"main"} <= {r["thread"] for r in rows}
    assert all(isinstance(r["own"], int) and r["total"] >= r["own"] for r in rows)

    # The speedscope file: valid JSON, one sampled profile per thread.
    doc = json.loads(out.read_text())
    assert doc["$schema"] == "https://www.speedscope.app/file-format-schema.json"
    nframes = len(doc["shared"]["frames"])
    names = [p["name"] for p in doc["profiles"]]
    assert len(names) == len(set(names)) and any('"MainThread"' in n for n in names)
    for p in doc["profiles"]:
        assert p["type"] == "sampled" and p["unit"] == "seconds"
        assert len(p["samples"]) == len(p["weights"])
        assert all(0 <= i < nframes for s in p["samples"] for i in s)
        assert t0 - 1 <= p["startValue"] <= p["endValue"] <= time.time()

    # Timestamps survive the file: samples fall into the compile phases.
    timed = load_samples(out)
    assert timed and all(t0 - 1 <= s.t <= child_exit + 1 for s in timed)
    by_phase = attribute_phases(timed, [("compile", p["start"], p["end"]) for p in phases])
    in_compile = [r for r in by_phase if r["phase"] == "compile"]
    assert any(r["file"].startswith("torch/_inductor/") for r in in_compile)
