"""Failures caused for real: a crashing, raising or hanging workload, Ctrl-C
mid-compile. Each ends with one line saying what happened, a non-zero exit,
and --json written with what was captured."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil
import pytest

from dlcprof.runner import oom_kills

# Runs that end before anything compiles have nothing for py-spy to see: a
# process the less for each (py-spy on a run that fails: test_signals.py).
NO_PYSPY = ("--no-hotspots",)
# How dlcprof stops a worker (runner.py: SIGTERM to its group, SIGKILL after a
# grace): a worker that ended on its own has an exit status, no signal.
KILLED = ("SIGTERM", "SIGKILL")


def _dlcprof(*args: str, **kw) -> subprocess.Popen:
    return subprocess.Popen(
        [sys.executable, "-m", "dlcprof.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        **kw,
    )


def _report(path: Path) -> dict:
    data = json.loads(path.read_text())
    assert data["schema"] == "dlcprof.report/2"
    return data


def test_segfaulting_workload_is_reported_with_its_signal(tmp_path):
    model = tmp_path / "crash.py"
    model.write_text("import ctypes\n\ndef build(device, dtype):\n    ctypes.string_at(0)\n")
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet", *NO_PYSPY)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 1
    assert "worker died with SIGSEGV" in stdout + stderr
    data = _report(out)
    assert any(e["type"] == "WorkerExited" and e["signal"] == "SIGSEGV" for e in data["events"])


def test_raising_workload_gives_one_line_and_the_users_traceback(tmp_path):
    model = tmp_path / "bad.py"
    model.write_text(
        "def helper():\n"
        "    raise ValueError(\"no such layer: 'attn'\\nsecond line\")\n\n"
        "def build(device, dtype):\n"
        "    return helper()\n"
    )
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet", *NO_PYSPY)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 1
    assert "ValueError" in stdout
    events = _report(out)["events"]
    # The worker's own account: ready, the load error, the run finished in error.
    worker = [e["type"] for e in events if e["type"] in ("WorkerReady", "RunFinished")]
    assert worker == ["WorkerReady", "RunFinished"]
    assert [e["status"] for e in events if e["type"] == "RunFinished"] == ["error"]
    assert [e["returncode"] for e in events if e["type"] == "WorkerExited"] == [1]
    (error,) = [e for e in events if e["type"] == "ErrorRaised"]
    assert error["stage"] == "load"
    assert "\n" not in error["message"] and "ValueError" in error["message"]
    assert str(model) in error["traceback"] and "helper" in error["traceback"]
    assert not [e for e in events if e["type"] == "CompileFinished"]


def test_hanging_worker_is_stopped_by_the_timeout(tmp_path):
    model = tmp_path / "hang.py"
    model.write_text("import time\n\ndef build(device, dtype):\n    time.sleep(600)\n")
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet", "--timeout", "3", *NO_PYSPY)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 1
    assert "worker hung: no event for 3 s" in stdout + stderr
    report = _report(out)
    assert report["events"]
    # Killed (SIGTERM, SIGKILL after a grace), not left to end its sleep and exit 0.
    (exit_,) = report["worker_exits"]
    assert exit_["signal"] in KILLED and exit_["message"].startswith("worker hung")


def _compiler_descendants(pid: int) -> list[psutil.Process]:
    try:
        kids = psutil.Process(pid).children(recursive=True)
    except psutil.NoSuchProcess:
        return []
    found = []
    for k in kids:
        try:
            if k.name() in ("g++", "cc1plus", "c++", "gcc", "as", "ld"):
                found.append(k)
        except psutil.NoSuchProcess:
            pass  # a compiler that finished between the listing and the look
    return found


def test_ctrl_c_mid_compile_kills_worker_and_compilers(tmp_path):
    out = tmp_path / "out.json"
    # A cold cache makes the first compile long and full of g++ children.
    p = _dlcprof(
        "run",
        "pointwise-chain",
        "--size",
        "small",
        "--cache",
        "cold",
        "--json",
        str(out),
        env={**os.environ, "PYTHONUNBUFFERED": "1"},
    )
    deadline = time.monotonic() + 120
    seen: list[psutil.Process] = []
    while time.monotonic() < deadline and not seen:
        seen = _compiler_descendants(p.pid)
        time.sleep(0.05)
    assert seen, "no C++ compiler child appeared"
    everyone = psutil.Process(p.pid).children(recursive=True)
    p.send_signal(signal.SIGINT)
    stdout, stderr = p.communicate(timeout=30)
    assert p.returncode == 130
    assert "Ctrl-C" in stdout
    from helpers.proc import wait_gone

    left = wait_gone([q.pid for q in everyone], 30)
    assert not left, f"left running: {left}"
    data = _report(out)
    assert data["runs"][0]["status"] == "cancelled"
    assert any(e["type"] == "PhaseStarted" for e in data["events"])
    # Stopped mid-compile, not after it: the worker killed, its compile never finished.
    (exit_,) = data["worker_exits"]
    assert exit_["signal"] in KILLED
    assert not [e for e in data["events"] if e["type"] == "CompileFinished"]


# --- resources ---------------------------------------------------------------------------


def test_host_out_of_memory_is_one_line_and_says_so(tmp_path):
    model = tmp_path / "hungry.py"
    model.write_text(
        "import resource\n\n"
        "def build(device, dtype):\n"
        "    # A real limit: this worker's address space now plus 256 MB.\n"
        "    with open('/proc/self/status') as f:\n"
        "        vm = next(int(ln.split()[1]) for ln in f if ln.startswith('VmSize:')) * 1024\n"
        "    hard = resource.getrlimit(resource.RLIMIT_AS)[1]\n"
        "    resource.setrlimit(resource.RLIMIT_AS, (vm + (256 << 20), hard))\n"
        "    return bytearray(1 << 30)\n"
    )
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--json", str(out), "--quiet", *NO_PYSPY)
    stdout, stderr = p.communicate(timeout=120)
    assert p.returncode == 1, stderr
    (error,) = [e for e in _report(out)["events"] if e["type"] == "ErrorRaised"]
    assert error["message"].startswith(f"workload {model} raised MemoryError (line 9, in build)")
    assert "the host ran out of memory: try --size small" in error["message"]
    assert "\n" not in error["message"] and error["message"] in stdout.replace("\n", "")


def test_cuda_out_of_memory_is_one_line_and_says_so(tmp_path):
    if not pytest.importorskip("torch").cuda.is_available():
        pytest.skip("no CUDA device here: CUDA out-of-memory needs a GPU")
    model = tmp_path / "huge_gpu.py"
    model.write_text(
        "import torch\n\ndef build(device, dtype):\n"
        "    free, total = torch.cuda.mem_get_info()\n"
        "    return torch.sin, (torch.empty(2 * total // 4, device='cuda', dtype=torch.float32),)\n"
    )
    out = tmp_path / "out.json"
    p = _dlcprof("run", str(model), "--device", "cuda", "--json", str(out), "--quiet")
    stdout, stderr = p.communicate(timeout=300)
    assert p.returncode == 1, stderr
    (error,) = [e for e in _report(out)["events"] if e["type"] == "ErrorRaised"]
    message = error["message"]
    assert "OutOfMemoryError" in message and "the GPU ran out of memory" in message
    assert "\n" not in message


def _memory_cgroup(name: str, limit: int) -> Path | None:
    """A memory cgroup of our own under the one this process is in (v1 or v2)."""
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if "memory" in controllers.split(","):
            base, knob = Path("/sys/fs/cgroup/memory") / path.lstrip("/"), "memory.limit_in_bytes"
            break
    else:  # unified hierarchy
        path = next((ln.split(":", 2)[2] for ln in lines if ln.startswith("0::")), None)
        if path is None:
            return None
        base, knob = Path("/sys/fs/cgroup") / path.lstrip("/"), "memory.max"
    try:
        cg = base / name
        cg.mkdir()
        (cg / knob).write_text(str(limit))
        return cg
    except OSError:
        return None


def _run_in_memory_cgroup(tmp_path: Path, limit: int) -> subprocess.CompletedProcess[str] | None:
    """``dlcprof run`` of a workload that outgrows ``limit``, every process it
    starts in a memory cgroup of that limit (the worker its largest); None
    where no memory cgroup can be made."""
    cg = _memory_cgroup(f"dlcprof-oom-test-{os.getpid()}", limit)
    if cg is None:
        return None
    try:
        model = tmp_path / "huge.py"
        model.write_text("def build(device, dtype):\n    return bytearray(3 << 30)\n")
        run = ["run", str(model), "--json", str(tmp_path / "out.json"), "--quiet", *NO_PYSPY]
        return subprocess.run(
            ["sh", "-c", 'echo $$ > "$0/cgroup.procs" && exec "$@"', str(cg)]
            + [sys.executable, "-m", "dlcprof.cli", *run],
            capture_output=True,
            text=True,
            timeout=180,
        )
    finally:
        for _ in range(50):
            try:
                cg.rmdir()
                break
            except OSError:
                time.sleep(0.1)


def test_the_kernels_oom_killer_is_named(tmp_path):
    for _ in range(2):
        kills = oom_kills()
        p = _run_in_memory_cgroup(tmp_path, 1 << 30)
        if p is None:
            pytest.skip("no writable memory cgroup here: cannot run the kernel's OOM killer safely")
        # The kernel can kill a second process of the cgroup, dlcprof itself, while
        # the worker it killed still holds its memory (seen on cgroup v1: two kills
        # 2 ms apart, the second on dlcprof's openat). Then dlcprof is gone and has
        # nothing to say: that run is no test of it, and it runs once more.
        if not (p.returncode == -signal.SIGKILL and oom_kills() - kills >= 2):
            break
    assert p.returncode == 1, p.stderr
    assert "worker killed by the kernel's out-of-memory killer (SIGKILL)" in p.stdout
    (exit_,) = _report(tmp_path / "out.json")["worker_exits"]
    assert exit_["signal"] == "SIGKILL"


# --- what a workload does to its process -----------------------------------------------------

FLOOD = """
import os
import re
import subprocess
import sys
import threading
import time

import torch


def f(x):
    return torch.sin(x) + 1


def build(device, dtype):
    for i in range(60_000):  # about 5 MB
        print(f"{i:06d} " + "x" * 79)
    sys.stderr.write("y" * 1_000_000 + "\\n")  # one line of a megabyte
    assert sys.stdin.read() == ""  # stdin is empty: never the terminal, never a pipe to wait on
    assert subprocess.run(["cat"], capture_output=True, timeout=10).stdout == b""
    threading.Thread(target=time.sleep, args=(3600,)).start()  # not a daemon: would block exit
    quiet = subprocess.Popen(["sleep", "3600"], stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
    holder = subprocess.Popen(["sleep", "3600"])  # holds the worker's stdout open
    with open(os.environ["DLCPROF_TEST_MARK"], "w") as f_:
        f_.write(f"{quiet.pid} {holder.pid}")
    return f, (torch.randn(8, device=device, dtype=dtype),)
"""


def test_flooding_stdin_reading_and_leftover_children_and_an_unwritable_json(tmp_path):
    model = tmp_path / "flood.py"
    model.write_text(FLOOD)
    mark = tmp_path / "children"
    (tmp_path / "file").write_text("a regular file")
    unwritable = tmp_path / "file" / "out.json"  # its parent is a file: even root cannot
    start = time.monotonic()
    p = _dlcprof(
        "run",
        str(model),
        "--backend",
        "eager",
        "--size",
        "small",
        "--reps",
        "2",
        "--iters",
        "2",
        "--quiet",
        "--json",
        str(unwritable),
        env={**os.environ, "DLCPROF_TEST_MARK": str(mark)},
    )
    stdout, stderr = p.communicate(timeout=300)
    assert time.monotonic() - start < 120
    from helpers.proc import wait_gone

    children = [int(x) for x in mark.read_text().split()]
    assert not wait_gone(children, 5), "the workload's children outlived the run"
    assert p.returncode == 1, stderr  # the run was fine; the JSON could not go where asked
    (line,) = stderr.strip().splitlines()
    assert line.startswith(f"dlcprof: error: cannot write {unwritable}: a parent path is not")
    saved = Path(line.split("the session is saved to ", 1)[1].removesuffix(" instead"))
    from dlcprof.report import load_session

    session = load_session(saved)
    saved.unlink()
    run = session.latest_run
    assert run is not None and run.status == "ok" and run.benchmark is not None
    logs = [e.message for e in run.logs]
    assert any("printed 60,000 lines to stdout" in m and "not kept" in m for m in logs)
    assert any(m.startswith("059999 ") for m in logs)  # the tail is kept
    assert any(m.startswith("yyyy") and m.endswith("… (1,000,000 bytes)") for m in logs)
    assert len(logs) < 6000


def test_disk_full_while_saving_keeps_the_session(tmp_path):
    probe = subprocess.run(
        ["unshare", "-m", "sh", "-c", f"mount -t tmpfs -o size=64k none {tmp_path}"],
        capture_output=True,
        text=True,
    )
    if probe.returncode != 0:
        pytest.skip(f"cannot mount a tiny file system here: {probe.stderr.strip()}")
    model = tmp_path / "tiny.py"
    model.write_text(
        "import torch\n\ndef build(device, dtype):\n"
        "    return torch.sin, (torch.randn(8, device=device, dtype=dtype),)\n"
    )
    full = tmp_path / "full"
    full.mkdir()
    # A 64 kB file system, in a mount namespace of the run's own: a real ENOSPC.
    p = subprocess.run(
        [
            "unshare",
            "-m",
            "sh",
            "-c",
            'mount -t tmpfs -o size=64k none "$0" && exec "$@"',
            str(full),
            sys.executable,
            "-m",
            "dlcprof.cli",
            "run",
            str(model),
            "--backend",
            "eager",
            "--no-benchmark",
            "--size",
            "small",
            "--quiet",
            "--report",
            str(full / "rep"),
        ],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 1, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith(f"dlcprof: error: cannot write {full / 'rep'}") and "disk full" in line
    saved = Path(line.split("the session is saved to ", 1)[1].removesuffix(" instead"))
    from dlcprof.report import load_session

    assert load_session(saved / "session.json").latest_run.status == "ok"
    shutil.rmtree(saved)


def test_without_pyspy_everything_else_works(tmp_path):
    """A venv where py-spy was never installed, and no py-spy on PATH."""
    import site

    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    (site_dir,) = venv.glob("lib/python*/site-packages")
    # The test venv's packages (dlcprof, torch) without its bin/, where py-spy lives.
    (site_dir / "borrowed.pth").write_text(
        "".join(f"import site; site.addsitedir({p!r})\n" for p in site.getsitepackages())
    )
    path = f"{venv / 'bin'}:/usr/bin:/bin"
    if shutil.which("py-spy", path=path):
        pytest.skip("py-spy is installed system-wide here")
    model = tmp_path / "tiny.py"
    model.write_text(
        "import torch\n\ndef build(device, dtype):\n"
        "    return torch.sin, (torch.randn(8, device=device, dtype=dtype),)\n"
    )
    out = tmp_path / "out.json"
    p = subprocess.run(
        [
            str(venv / "bin" / "python"),
            "-m",
            "dlcprof.cli",
            "run",
            str(model),
            "--size",
            "small",
            "--backend",
            "eager",
            "--reps",
            "2",
            "--iters",
            "2",
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PATH": path, "COLUMNS": "200"},
    )
    assert p.returncode == 0, p.stderr
    assert "py-spy not found: pip install py-spy" in p.stdout
    data = _report(out)
    run = data["runs"][0]
    assert run["status"] == "ok" and run["benchmark"]["speedup"] is not None
    statuses = [e for e in data["events"] if e["type"] == "MonitorStatus"]
    assert [s["available"] for s in statuses if s["monitor"] == "py-spy"] == [False]
    assert any(e["type"] == "DeviceSampled" for e in data["events"])  # the device view works


def test_a_module_dynamo_refuses_says_nothing_compiled_and_states_no_speedup(tmp_path):
    """An LSTM: Dynamo refuses the frame ("Attempted to wrap RNN, GRU, or LSTM";
    torch 2.15 breaks the graph there instead, "Dynamo does not support RNN, GRU,
    or LSTM"), no graph is made and every call runs eagerly."""
    model = tmp_path / "lstm.py"
    model.write_text(
        "import torch\n\n"
        "def build(device, dtype):\n"
        "    lstm = torch.nn.LSTM(4, 4, batch_first=True).to(device, dtype)\n"
        "    return lstm, (torch.randn(1, 3, 4, device=device, dtype=dtype),)\n"
    )
    out = tmp_path / "rep"
    p = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "run", str(model), "--report", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "COLUMNS": "400"},
    )
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    loud = [i for i, ln in enumerate(lines) if ln.startswith("NOTHING COMPILED: ")]
    # Live, then first under the summary's header, which names the outcome.
    assert len(loud) == 2 and lines[loud[1] - 1].endswith("— nothing compiled"), p.stdout
    assert "RNN, GRU, or LSTM" in lines[loud[0]]
    assert "allow_rnn=True" in lines[loud[0] + 1]
    assert not re.search(r"\d\.\d+x\b", p.stdout), "a speedup stated for eager vs eager"
    data = _report(out / "session.json")
    (run,) = data["runs"]
    refused = run["nothing_compiled"]
    assert "RNN" in refused["fail_reason"]
    if refused["fail_type"]:  # torch failed the frame
        assert refused["fail_type"] == "Unsupported"
        assert "compile done" not in p.stdout and "compile failed after" in p.stdout
    else:  # torch 2.15 compiles the frame empty, broken before its only call
        assert "graph break GB0148" in lines[loud[0]]
    assert any("allow_rnn=True" in h for h in refused["hints"])
    assert run["benchmark"] is None
    assert not any(e["type"] == "BenchmarkMeasured" for e in data["events"])
    md = (out / "report.md").read_text()
    assert "status **nothing compiled**" in md and "> **NOTHING COMPILED: " in md
    assert "NOTHING COMPILED: " in (out / "report.html").read_text()
