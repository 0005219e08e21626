"""``dlcprof run -- CMD``: the user's own program, followed live (dlcprof/attach,
dlcprof/worker/attached).

Real programs under real dlcprof processes: tests/programs/train.py (a plain
training script, real Inductor compiles) and tests/programs/faults.py (cheap
eager-backend compiles) for the faults, each caused for real.
"""

from __future__ import annotations

import json
import os
import pty
import re
import select
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest
from helpers.paths import PROGRAMS
from helpers.proc import communicate, dlcprof_run, gone, pyspy_on

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.figures import observer as fo
from dlcprof.report.load import load_session
from dlcprof.worker.attached.channel import Channel

if TYPE_CHECKING:
    from dlcprof.worker.attached.kernel_sample import KernelSampler

TRAIN = PROGRAMS / "train.py"
TLPARSE = Path(sys.executable).parent / "tlparse"
FAULTS = PROGRAMS / "faults.py"


def trace_records(folder: Path) -> list[dict]:
    """The JSON metadata of every record TORCH_TRACE wrote (glog prefix, then JSON)."""
    out = []
    for path in folder.glob("*.log"):
        for line in path.read_text().splitlines():
            if not line.startswith("\t") and "] {" in line:
                out.append(json.loads(line.split("] ", 1)[1]))
    return out


@pytest.fixture(scope="module")
def training_run(tmp_path_factory) -> tuple[subprocess.Popen, str, str, Path, Path, Path]:
    """train.py under ``dlcprof run --json --report``, TORCH_TRACE set for it too:
    the process, its stdout and stderr, the JSON, torch's log folder, the report."""
    tmp = tmp_path_factory.mktemp("train")
    out, trace, folder = tmp / "session.json", tmp / "trace", tmp / "report"
    proc = dlcprof_run(
        out,
        str(TRAIN),
        "--steps",
        "5",  # each graph runs the calls kernel sampling needs
        "--exit-code",
        "3",
        options=("--report", str(folder)),
        env={**os.environ, "TORCH_TRACE": str(trace)},
    )
    stdout, stderr = proc.communicate(timeout=900)
    return proc, stdout, stderr, out, trace, folder


@pytest.mark.xdist_group("test_attach_training_run")
def test_training_script_json_matches_torch_trace(training_run):
    proc, stdout, stderr, out, trace, folder = training_run
    assert proc.returncode == 3, stderr
    expected = [f"seq {s} step {i} loss" for s in (4, 6) for i in range(5)] + ["done"]
    lines = stdout.splitlines()
    assert [ln[: len(e)] for ln, e in zip(lines, expected, strict=True)] == expected

    report = json.loads(out.read_text())
    (run,) = [r for r in report["runs"] if r["process"] is not None]
    assert run["process"]["argv"][0] == str(TRAIN)
    forward = [c for c in run["compiles"] if not c["is_backward"]]
    assert any(c["is_backward"] for c in run["compiles"])
    assert all(c["phases"] for c in forward)
    kernels = [k for c in run["compiles"] for k in c["kernels"]]
    assert any("aten.relu" in k["fused_ops"] for k in kernels)
    assert any(str(TRAIN) in line for k in kernels for line in k["source_lines"])
    # Kernel times, sampled on calls 2-4 of each graph; those calls left out of the
    # time per call, and what they cost said.
    fused = [k for c in forward for k in c["kernels"] if k["kind"] != "extern"]
    assert fused and all(k["time_ms"] > 0 and k["launches"] >= 1 for k in fused)
    reasons = [r["reason"] for r in run["recompiles"]]
    assert any("size mismatch at index 0. expected 4, actual 6" in r for r in reasons)
    breaks = run["graph_breaks"]
    line = next(i for i, t in enumerate(TRAIN.read_text().splitlines(), 1) if "y.sum() > 0" in t)
    assert {b["location"] for b in breaks} == {f"{TRAIN}:{line}"}
    program = report["program"]
    assert program["returncode"] == 3
    (process,) = program["processes"]
    assert 0 < process["compile_share"] < 1
    assert process["first_call_waited_s"] > 0
    assert {g["compile_id"] for g in process["graphs"]} >= {"0/0", "0/0 (bwd)", "0/1"}
    model = next(g for g in process["graphs"] if g["compile_id"] == "0/0")
    assert model["calls"] == 5 and model["sampled_calls"] == 3
    assert model["per_call_s"] == pytest.approx(model["inside_s"] / 2)
    sampling = process["kernel_sampling"]
    assert sampling["calls"] >= 9 and sampling["seconds"] > 0
    assert "the observer's cost, left out of the time per call" in sampling["line"]
    assert re.search(r"compiles took .+ of this .+ run, \d+%", process["line"])

    # torch's own account of the same process (TORCH_TRACE was set for it too).
    records = trace_records(trace)
    torch_ids = {
        f"{r['frame_id']}/{r['frame_compile_id']}" for r in records if "compilation_metrics" in r
    }
    torch_breaks = [
        r for r in records if (r.get("artifact") or {}).get("name") == "dynamo_graph_break_reason"
    ]
    assert {c["compile_id"] for c in forward} == torch_ids
    assert len(breaks) == len(torch_breaks) == 2

    # The same folder as a run's: reports, and torch's raw trace for tlparse.
    assert {"session.json", "report.html", "report.md", "torch_trace.log"} <= {
        p.name for p in folder.iterdir()
    }
    assert "compilation_metrics" in (folder / "torch_trace.log").read_text()
    replayed = load_session(folder / "session.json")
    assert replayed.program_exit is not None and replayed.program_exit.returncode == 3

    # The monitors a run's worker gets watched the compiling process: py-spy saw
    # the compiler's own Python at work, in its compile phases; the device
    # sampler (the CPU here) split its samples into compiling and after.
    rows = run["hotspots"]["rows"]
    compiler = [r for r in rows if r["phase"] and re.match(r"torch/_(dynamo|inductor)/", r["file"])]
    assert compiler, [(r["function"], r["file"], r["phase"]) for r in rows]
    assert "pyspy.speedscope.json" in {p.name for p in folder.iterdir()}
    assert run["device"]["samples"] > 0 and "compile" in run["device"]["by_span"]
    assert fo.ATTACHED_WATCH in run["observer"]["line"]
    assert not pyspy_on(run["process"]["pid"])


@pytest.mark.xdist_group("test_attach_training_run")
def test_a_scripts_torch_trace_imports_as_tlparse_and_its_source_say(
    training_run, tmp_path, capsys
):
    """``dlcprof import`` of what this torch wrote under TORCH_TRACE for the same
    run: its graph break and compile ids as tlparse reads the same log (the
    recorded logs of tests/unit/test_trace_import.py come from one torch; this
    one from the torch installed now)."""
    trace = training_run[4]
    assert main(["import", str(trace), "-o", str(tmp_path / "out")]) == 0
    printed = capsys.readouterr().out
    assert "imported from 1 TORCH_TRACE log" in printed
    # Every payload's md5 as this torch wrote it; a log closed whole is not called cut.
    assert "skipped" not in printed and "'s log ends" not in printed
    (run,) = load_session(tmp_path / "out").runs.values()
    # The data-dependent branch of train.py's compiled helper, where its source has it.
    line = 1 + next(i for i, s in enumerate(TRAIN.read_text().splitlines()) if "if y.sum()" in s)
    assert {(b.reason, b.location) for b in run.graph_breaks} == {
        ("Data-dependent branching", f"{TRAIN}:{line}")
    }
    (log,) = trace.iterdir()
    tl = tmp_path / "tl"
    subprocess.run([str(TLPARSE), str(log), "-o", str(tl), "--overwrite"], check=True)
    listed = json.loads((tl / "compile_directory.json").read_text())
    tl_ids = {k.strip("[]") for k in listed if "_" not in k and k != "[-/-]"}
    assert {c for c in run.compiles if not c.endswith(ev.BACKWARD)} == tl_ids


# SIGTERM and SIGHUP are passed on by one handler, which
# tests/unit/test_stop_signals.py sends both to for real (SIGTERM to `dlcprof run --`
# end to end: test_rank_faults.py's job whose agent cannot pass it on). Their own
# runs of a program are slow.
@pytest.mark.parametrize(
    "signum",
    [
        signal.SIGINT,
        pytest.param(signal.SIGTERM, marks=pytest.mark.slow),
        pytest.param(signal.SIGHUP, marks=pytest.mark.slow),
    ],
    ids=lambda s: signal.Signals(s).name,
)
def test_stop_signal_reaches_the_program(tmp_path, signum):
    proc = dlcprof_run(tmp_path / "s.json", str(FAULTS), "signals")
    ready = proc.stdout.readline()
    assert ready.startswith("ready "), proc.stderr.read()
    pid = int(ready.split()[1])
    proc.send_signal(signum)
    stdout, stderr = communicate(proc, 60)
    name = "KeyboardInterrupt" if signum == signal.SIGINT else signal.Signals(signum).name
    assert f"{name} in the program" in stdout
    assert proc.returncode == 128 + signum, stderr
    assert gone(pid)
    assert not pyspy_on(pid)  # py-spy stopped with the program
    report = json.loads((tmp_path / "s.json").read_text())
    assert report["program"]["stopped_by"]
    assert [r["compiles"][0]["compile_id"] for r in report["runs"]] == ["0/0"]


def test_on_a_terminal_stdin_and_ctrl_c_are_the_programs(tmp_path):
    """On a terminal the program's group is the foreground one: it reads the
    terminal, and Ctrl-C typed there is a KeyboardInterrupt in the program."""
    pid, fd = pty.fork()
    if pid == 0:  # the child: dlcprof on the pty
        os.execv(
            sys.executable,
            [
                sys.executable,
                "-m",
                "dlcprof.cli",
                "run",
                "--quiet",
                "--",
                sys.executable,
                str(FAULTS),
                "terminal",
            ],
        )
    out = b""

    def read_until(marker: bytes) -> None:
        nonlocal out
        deadline = time.monotonic() + 200
        while marker not in out and time.monotonic() < deadline:
            if select.select([fd], [], [], 0.5)[0]:
                try:
                    out += os.read(fd, 4096)
                except OSError:  # the pty closed
                    return

    read_until(b"name? ")
    os.write(fd, b"alice\n")
    read_until(b"got alice")
    time.sleep(0.5)
    os.write(fd, b"\x03")  # Ctrl-C, typed on the terminal
    read_until(b"the program exited")
    _, status = os.waitpid(pid, 0)
    os.close(fd)
    assert b"got alice" in out and b"KeyboardInterrupt in the program" in out, out[-2000:]
    assert os.waitstatus_to_exitcode(status) == 130


def test_sigkill_leaves_the_program_running(tmp_path):
    flag, log = tmp_path / "go", tmp_path / "out.txt"
    with log.open("w") as out:
        proc = dlcprof_run(tmp_path / "k.json", str(FAULTS), "survive", str(flag), stdout=out)
        deadline = time.monotonic() + 120
        while "ready" not in log.read_text() and time.monotonic() < deadline:
            time.sleep(0.05)
    pid = int(log.read_text().split()[1])
    proc.kill()
    proc.wait()
    flag.touch()  # the program compiles again, with nobody listening
    assert gone(pid, 120)
    assert not pyspy_on(pid)  # the py-spy dlcprof left ended with its target
    lines = log.read_text().splitlines()
    assert lines[-1] == "finished"
    assert [ln for ln in lines if ln.startswith("after ")] == [f"after {i}" for i in range(1000)]


def test_children_plain_python_flood_and_sitecustomize(tmp_path):
    """A program that forks DataLoader-style children (one compiles), runs a
    Python that never imports torch and floods stdout, under a PYTHONPATH that
    has a sitecustomize of its own."""
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        "import sys\nprint(f'user sitecustomize ran in {sys.argv[0]}', file=sys.stderr)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(site)}
    proc = dlcprof_run(tmp_path / "c.json", str(FAULTS), "children", "50000", env=env)
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    lines = stdout.splitlines()
    assert lines[-1] == "end"
    assert [ln for ln in lines if ln.startswith("line ")] == [f"line {i}" for i in range(50000)]
    assert "plain python, torch imported: False" in lines
    # Not whole lines: the program's processes and dlcprof share this stderr, and a
    # note of dlcprof's may land between a line's text and its newline.
    assert f"user sitecustomize ran in {FAULTS}" in stderr  # the program
    assert "user sitecustomize ran in -c" in stderr  # the Python that never imports torch
    report = json.loads((tmp_path / "c.json").read_text())
    runs = {r["run_id"]: r for r in report["runs"]}
    program_pid = report["program"]["pid"]
    main = runs[f"pid{program_pid}"]
    assert main["status"] == "ok"
    # The child that compiled is a run of its own; the one that did not is silent.
    (child,) = [r for r in runs.values() if r["process"]["ppid"] == program_pid]
    assert child["status"] == "ended"  # os._exit: no exit hook
    assert [c["compile_id"] for c in child["compiles"]] == ["0/0"]


def test_exit_inside_a_compile(tmp_path):
    proc = dlcprof_run(tmp_path / "e.json", str(FAULTS), "exit-in-compile")
    stdout, stderr = proc.communicate(timeout=120)
    assert proc.returncode == 7, stderr
    assert "exiting inside a compile" in stdout
    report = json.loads((tmp_path / "e.json").read_text())
    (run,) = report["runs"]
    assert run["status"] == "ended"
    assert report["program"]["returncode"] == 7


def test_eager_baseline_runs_the_command_again_without_compiling(tmp_path):
    proc = dlcprof_run(
        tmp_path / "b.json", str(FAULTS), "compile", "40", options=("--eager-baseline",)
    )
    stdout, stderr = proc.communicate(timeout=300)
    assert proc.returncode == 0, stderr
    assert stdout.splitlines() == ["compiled", "compiled"]  # the program ran twice
    report = json.loads((tmp_path / "b.json").read_text())
    assert len(report["runs"]) == 1  # forced eager: the second run compiled nothing
    base = report["program"]["eager_baseline"]
    assert base["eager_wall_s"] > 0 and base["compiled_wall_s"] > 0
    (speedup,) = (line for line in report["program"]["lines"] if line.startswith("speedup: "))
    assert "forced eager" in speedup
    # Per step past the compiles: the same 40 calls, timed in both runs, less
    # the warm-up (the compile, then dlcprof's kernel-sampled calls).
    assert len(base["per_step_compiled_s"]) == len(base["per_step_eager_s"]) == 36
    assert base["per_step"].startswith("per step past the compiles: ")
    assert "medians of 36 and 36 calls" in base["per_step"]
    assert "after 4 warm-up calls" in base["per_step"]


@pytest.mark.parametrize(
    ("command", "code", "said"),
    [
        (["no-such-command-dlcprof"], 127, "no-such-command-dlcprof: command not found"),
        (["/nonexistent/prog"], 127, "/nonexistent/prog: No such file or directory"),
        ([str(FAULTS)], 126, f"{FAULTS}: Permission denied"),
    ],
)
def test_command_that_cannot_run(tmp_path, command, code, said):
    out = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "run", "--", *command],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == code
    assert out.stderr.strip() == f"dlcprof: {said}"


def test_a_tmpdir_too_deep_for_a_socket_path(tmp_path):
    """A cluster job's TMPDIR can be longer than a socket's path may be (107
    bytes): the event socket goes to /tmp instead, and is removed after."""
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    said = "import os; print(os.environ['DLCPROF_ATTACH_SOCKET'])"
    out = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "run", "--quiet", "--", sys.executable, "-c", said],
        env={**os.environ, "TMPDIR": str(deep)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    path = Path(out.stdout.strip())
    assert path.parent.parent == Path("/tmp") and not path.parent.exists()


def _event() -> ev.Event:
    return ev.PhaseStarted(run_id="r", compile_id="0/0", name="dynamo", thread=1)


def test_channel_goes_quiet_when_dlcprof_is_gone(tmp_path):
    channel = Channel(str(tmp_path / "none.sock"), lambda: [])
    channel.emit(_event())  # nobody listens: no error, and quiet from now on
    assert channel.quiet


@pytest.fixture
def short_tmp():
    """A folder whose path leaves room for a socket's (107 bytes): tmp_path may not."""
    with tempfile.TemporaryDirectory(dir="/tmp") as folder:
        yield Path(folder)


def test_channel_holds_events_until_a_compile_and_bounds_its_buffer(short_tmp, monkeypatch):
    from dlcprof.worker.attached import channel as channel_module

    monkeypatch.setattr(channel_module, "BUFFER_BYTES", 4096)
    path = str(short_tmp / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    note = ev.LogEmitted(run_id="r", level="info", source="probe", message="held")
    channel = Channel(path, lambda: [note], arms=lambda e: isinstance(e, ev.PhaseStarted))
    channel.emit(ev.LogEmitted(run_id="r", level="info", source="probe", message="x"))
    assert not channel.armed  # a process that never compiles never connects
    server.settimeout(0.2)
    with pytest.raises(TimeoutError):
        server.accept()
    channel.emit(_event())
    conn, _ = server.accept()
    # Nobody reads: sends never block, what does not fit is dropped.
    start = time.monotonic()
    for _ in range(20000):
        channel.emit(_event())
    assert time.monotonic() - start < 10
    conn.settimeout(1)
    first = conn.recv(1 << 16).split(b"\n")
    assert [getattr(ev.decode(x), "message", None) for x in first[:2]] == ["held", "x"]
    channel.close(wait_s=0.1)
    conn.close()
    server.close()


def test_channel_at_exit_delivers_all_while_dlcprof_keeps_reading(short_tmp):
    """A reader slowed by a busy machine gets every event, the last ones (a
    crash) included: the exit waits while it reads, not a fixed time."""
    path = str(short_tmp / "s.sock")
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(path)
    server.listen(1)
    channel = Channel(path, lambda: [])
    channel.emit(_event())
    conn, _ = server.accept()
    sent = 1 + 10000  # ~1 MB: far past what the socket holds
    for _ in range(sent - 1):
        channel.emit(_event())
    assert channel._buffer  # what the socket did not take waits in the channel
    got = bytearray()

    def slow_reader() -> None:
        conn.settimeout(10)
        while chunk := conn.recv(1 << 15):
            got.extend(chunk)
            time.sleep(0.05)  # ~0.6 MB/s: the drain takes longer than wait_s

    reader = threading.Thread(target=slow_reader)
    reader.start()
    channel.close(wait_s=0.5)
    reader.join(15)
    conn.close()
    server.close()
    assert got.count(b"\n") == sent


def _sampler(graphs: list) -> tuple[KernelSampler, list[Any]]:
    """A kernel sampler over a collector holding ``graphs`` (our own data)."""
    from types import SimpleNamespace

    from dlcprof.worker.attached.kernel_sample import KernelSampler
    from dlcprof.worker.probes import ProbeNotes

    sent: list[Any] = []  # the events, read by their fields
    collector: Any = SimpleNamespace(graphs=graphs)  # a KernelCollector's graphs
    notes = ProbeNotes(SimpleNamespace(emit=sent.append), "pid1")
    return KernelSampler("pid1", sent.append, lambda: collector, lambda: notes), sent


def _graph(cid: str, path: str | None):
    from dlcprof.trace_records.kernels import CompiledGraph, KernelInfo, OutputCode

    kernel = KernelInfo("cpp_fused_sin_0", "pointwise", ["aten.sin"], "", [], 0, "inference")
    return CompiledGraph(cid, path, OutputCode("inference", {}, []), [kernel], None)


def test_kernel_sampler_leaves_the_first_call_alone_and_says_why_not():
    graphs = [_graph("0/0", None), _graph("1/0", "/nowhere/wrapper.py")]
    sampler, sent = _sampler(graphs)
    assert sampler.begin("0/0", ()) is None and sent == []  # the first call: left alone
    # The second would be sampled, but its code cannot be instrumented: n/a, and why.
    assert sampler.begin("0/0", ()) is None
    unavailable, profiled = sent
    assert unavailable.probe == "kernels.sample"
    assert isinstance(profiled, ev.KernelsProfiled) and profiled.calls == 0
    why = "torch did not say where the wrapper module was written"
    by_graph = {k["compile_id"]: k["why"] for k in profiled.kernels}
    assert by_graph["0/0"]["time_ms"] == why
    assert by_graph["1/0"]["time_ms"] == "not sampled yet: calls 2-4 of each graph are"
    assert by_graph["0/0"]["eager_ms"].startswith("not replayed in an attached program")
    assert sampler.begin("0/0", ()) is None and len(sent) == 2  # given up: no more tries
    # At exit a graph called too few times says how many.
    sampler.begin("1/0", ())
    sampler.report(final=True)
    final = {k["compile_id"]: k["why"] for k in sent[-1].kernels}
    assert final["1/0"]["time_ms"] == "called 1 time: calls 2-4 of each graph are sampled"
    sampler.report(final=True)
    assert len(sent) == 3  # nothing new: not sent again


def test_kernel_sampler_waits_for_a_graphs_kernels_then_gives_up():
    from dlcprof.worker.attached import kernel_sample

    sampler, sent = _sampler([])
    for _ in range(kernel_sample.WAIT_CALLS + kernel_sample.SAMPLE_AFTER_CALLS):
        assert sampler.begin("0/0", ()) is None
    (unavailable,) = sent  # no graph of the process to report on
    assert unavailable.reason == "its kernels were not reported in its first 51 calls"


def test_the_bootstrap_spells_the_contracts_environment_names():
    """sitecustomize.py imports nothing of dlcprof before it has found it, so it
    spells the names out: the ones dlcprof spawns the program with."""
    from dlcprof.attach_contract import BOOTSTRAP_DIR, ROOT_ENV, SOCKET_ENV

    source = (BOOTSTRAP_DIR / "sitecustomize.py").read_text()
    assert f'"{SOCKET_ENV}"' in source and f'"{ROOT_ENV}"' in source


@pytest.mark.parametrize("mode", ["raise", "raise-past-the-hook"])
def test_an_uncaught_exception_ends_the_process_run_crashed(tmp_path, mode):
    """What the crash check reads: a process that raised is "crashed" with its
    exception, not "ok" (the exit hook runs after the exception, too), also when
    dlcprof's excepthook never ran (torchrun's second SIGINT can interrupt it)."""
    out = tmp_path / "r.json"
    argv = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--"]
    proc = subprocess.run(
        [*argv, sys.executable, str(FAULTS), mode], capture_output=True, text=True, timeout=300
    )
    assert proc.returncode == 1
    assert "RuntimeError: boom after a compile" in proc.stderr  # the program's own traceback
    (run,) = json.loads(out.read_text())["runs"]
    assert run["status"] == "crashed"
    assert [e["message"] for e in run["errors"]] == ["uncaught RuntimeError: boom after a compile"]


def test_an_exception_a_test_runner_kept_is_not_taken_for_a_crash(monkeypatch):
    """pytest keeps a failed test's exception in sys.last_value for post-mortem
    debugging; the process then exits normally: its traceback starts inside the
    runner, not at the outermost frame, so the exit hook does not call it a crash."""
    from dlcprof.worker.attached.probe import _uncaught_unseen

    try:
        raise ValueError("a test failed")
    except ValueError as e:
        kept = e
    for name in ("last_value", "last_exc"):
        monkeypatch.setattr(sys, name, kept, raising=False)
    assert _uncaught_unseen() is None
