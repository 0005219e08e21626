"""``dlcprof merge``: one job's nodes, each recorded by its own ``dlcprof run
--report``, joined into one session of every rank, the clocks aligned on the
rendezvous (or said not to be)."""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import PROGRAMS
from helpers.program import node_events

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.report.folder import save_session
from dlcprof.report.load import load_session
from dlcprof.report.merge import merge_sessions
from dlcprof.session import Session

PROGRAM = PROGRAMS / "ddp_train.py"


def _node(tmp_path: Path, name: str, rank: int, **kw) -> Path:
    traces = tmp_path / f"scratch-{name}"
    traces.mkdir()
    folder = save_session(
        Session.from_events(node_events(rank, str(traces), **kw)), tmp_path / name
    )
    shutil.rmtree(traces)  # as on another host: only the report folder travels
    return folder


def test_clocks_are_aligned_on_the_rendezvous_and_the_session_reopens(tmp_path, capsys):
    a = _node(tmp_path, "A", 0)
    b = _node(tmp_path, "B", 1, skew=5.0)  # B's clock runs 5 s ahead
    # Each node's folder keeps its rank's raw trace under torch's name.
    assert [p.name for p in b.glob("dedicated_log_torch_trace_rank_*.log")] == [
        "dedicated_log_torch_trace_rank_1_x7.log"
    ]
    # Given in any order: node 0 is the one holding rank 0.
    assert main(["merge", str(b), str(a), "-o", str(tmp_path / "M")]) == 0
    out = capsys.readouterr().out
    assert "clocks aligned on the rendezvous (offset -5.000 s for node 1)" in out
    merged = load_session(tmp_path / "M")
    assert [n.merged.node for n in merged.nodes] == ["node 0", "node 1"]
    assert [n.merged.ranks for n in merged.nodes] == [[0], [1]]
    # pid7 on both hosts: the second node's run is renamed, nothing is lost.
    runs = merged.runs
    assert list(runs) == ["pid7", "pid7@node1"]
    assert [r.process.rank for r in runs.values()] == [0, 1]
    assert all(r.compiles["0/0"].finished for r in runs.values())
    # On one clock: both ranks compiled 0/0 at the same instant, as they did.
    assert runs["pid7"].compiles["0/0"].start_t == runs["pid7@node1"].compiles["0/0"].start_t
    assert runs["pid7"].joined.t == runs["pid7@node1"].joined.t == 1010.0
    first_calls = [r.graph_calls.graphs["0/0"]["first_t"] for r in runs.values()]
    assert first_calls == [1022.0, 1022.0]
    # Each node's program is its own.
    assert [n.program.argv[1] for n in merged.nodes] == ["--node-rank=0", "--node-rank=1"]
    assert all(n.program_exit.wall_s == 31.0 for n in merged.nodes)
    # Both ranks' raw traces, under their rank names, for tlparse --all-ranks-html.
    m = tmp_path / "M"
    assert sorted(p.name for p in m.glob("dedicated_log_torch_trace_rank_*.log")) == [
        "dedicated_log_torch_trace_rank_0_x7.log",
        "dedicated_log_torch_trace_rank_1_x7.log",
    ]
    report = json.loads((m / "session.json").read_text())
    nodes = report["program"]["nodes"]
    assert [n["offset_s"] for n in nodes] == [0.0, -5.0]
    assert nodes[1]["clock_aligned"] and nodes[1]["source"] == str(b)
    assert "torch_trace_note" not in report["extra"]["files"]
    # report and compare open it like any other session.
    assert main(["report", str(m)]) == 0
    md = capsys.readouterr().out
    assert "node 1 (" in md and "offset -5.000 s for node 1" in md
    assert main(["compare", str(a), str(m), "--run", "1", "pid7@node1"]) == 0


def test_no_rendezvous_says_the_clocks_are_not_aligned(tmp_path):
    a = _node(tmp_path, "A", 0)
    b = _node(tmp_path, "B", 1, skew=5.0, backend=None, pid=8)
    merged = merge_sessions([a, b])
    node = merged.nodes[1]
    assert node.merged.offset_s is None
    assert merged.runs["pid8"].compiles["0/0"].start_t == 1025.0  # left on its own clock
    from dlcprof.figures.job.nodes import node_lines

    line = node_lines(merged)[1]
    assert "clocks not aligned: no rendezvous recorded on node 1" in line


def test_a_rendezvous_that_did_not_wait_is_approximate(tmp_path):
    a = _node(tmp_path, "A", 0, backend="nccl")
    b = _node(tmp_path, "B", 1, skew=-2.0, backend="nccl", pid=8)
    from dlcprof.figures.job.nodes import node_lines

    line = node_lines(merge_sessions([a, b]))[1]
    assert "offset +2.000 s for node 1" in line
    assert "approximate: init_process_group did not wait for every rank (nccl)" in line


def _bad(argv: list[str], capsys) -> str:
    assert main(argv) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in captured.err, captured.err
    return lines[0]


def test_bad_input_is_one_line(tmp_path, capsys):
    a = _node(tmp_path, "A", 0)
    b = _node(tmp_path, "B", 1)
    also0 = _node(tmp_path, "C", 0, pid=9)
    four = _node(tmp_path, "D", 1, world_size=4)
    (tmp_path / "empty").mkdir()
    plain = save_session(
        Session.from_events([ev.ProgramStarted(argv=["python", "x.py"], cwd="/", pid=1)]),
        tmp_path / "plain",
    )
    o = str(tmp_path / "M")
    assert "two or more" in _bad(["merge", str(a), "-o", o], capsys)
    assert "nope: no such folder" in _bad(
        ["merge", str(a), str(tmp_path / "nope"), "-o", o], capsys
    )
    assert "no session.json" in _bad(["merge", str(a), str(tmp_path / "empty"), "-o", o], capsys)
    assert "both hold rank 0" in _bad(["merge", str(a), str(also0), "-o", o], capsys)
    assert "different world sizes" in _bad(["merge", str(a), str(four), "-o", o], capsys)
    assert "no process with a rank" in _bad(["merge", str(a), str(plain), "-o", o], capsys)
    assert "same node" in _bad(["merge", str(a), str(a / "session.json"), "-o", o], capsys)
    assert main(["merge", str(a), str(b), "-o", o]) == 0
    capsys.readouterr()
    assert "already a merged session" in _bad(["merge", o, str(b), "-o", o + "2"], capsys)
    assert not (tmp_path / "M2").exists()


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.slow
def test_two_nodes_on_one_machine_merge_into_one_session(tmp_path):
    """Two torchrun launchers (--nnodes 2, one rank each) on a loopback
    rendezvous, each under its own dlcprof run --report, then dlcprof merge."""
    port = _free_port()
    torchrun = str(Path(sys.executable).parent / "torchrun")
    procs = []
    for k in (0, 1):
        argv = [sys.executable, "-m", "dlcprof.cli", "run", "--report", str(tmp_path / f"n{k}")]
        argv += ["--", torchrun, "--nnodes", "2", "--node-rank", str(k), "--nproc-per-node", "1"]
        argv += ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}"]
        # Both launchers are on the rendezvous host: say which one serves the store.
        argv += ["--rdzv-conf", f"is_host={int(k == 0)}", str(PROGRAM), "--steps", "2"]
        procs.append(
            subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        )
    outs = [p.communicate(timeout=600)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs[0][-3000:] + outs[1][-3000:]
    # Each node keeps its rank's raw trace under torch's own name. The c10d
    # rendezvous hands out ranks in arrival order, whatever --node-rank says.
    ranks = []
    for k in (0, 1):
        (trace,) = (tmp_path / f"n{k}").glob("dedicated_log_torch_trace_rank_*.log")
        rank = int(trace.name.split("_")[5])
        assert f'"rank": {rank}' in trace.read_text()
        ranks.append(rank)
    assert sorted(ranks) == [0, 1]

    m = tmp_path / "M"
    done = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "merge", str(tmp_path / "n1"), str(tmp_path / "n0")]
        + ["-o", str(m)],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    assert "clocks aligned on the rendezvous (offset" in done.stdout
    merged = load_session(m)
    ranked = {r.process.rank: r for r in merged.runs.values() if r.process}
    assert sorted(ranked) == [0, 1]
    for rank, run in ranked.items():
        assert run.joined is not None and run.joined.backend == "gloo" and run.joined.waited
        assert run.joined.rank == rank and run.joined.world_size == 2
        assert any(c.finished and not c.is_backward for c in run.compiles.values())
    # gloo's rendezvous is one instant: after alignment the ranks joined together.
    assert abs(ranked[0].joined.t - ranked[1].joined.t) < 0.5
    assert [n.merged.ranks for n in merged.nodes] == [[0], [1]]
    assert all(n.program_exit.returncode == 0 for n in merged.nodes)
    traces = sorted(p.name for p in m.glob("dedicated_log_torch_trace_rank_*.log"))
    assert [t[: len("dedicated_log_torch_trace_rank_0")] for t in traces] == [
        "dedicated_log_torch_trace_rank_0",
        "dedicated_log_torch_trace_rank_1",
    ]

    tlparse = shutil.which("tlparse", path=str(Path(sys.executable).parent)) or shutil.which(
        "tlparse"
    )
    if tlparse is None:
        pytest.skip("tlparse is not installed (pip install tlparse)")
    tl = subprocess.run(
        [tlparse, str(m), "--all-ranks-html", "-o", str(tmp_path / "tl"), "--no-browser"],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "NO_COLOR": "1"},
    )
    assert tl.returncode == 0, tl.stderr[-2000:]
    assert (tmp_path / "tl" / "rank_0" / "index.html").is_file()
    assert (tmp_path / "tl" / "rank_1" / "index.html").is_file()


class _Sink:
    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def emit(self, event: ev.Event) -> None:
        self.events.append(event)


_JOIN = """
import os, sys, tempfile, time
import torch, torch.distributed as dist
from dlcprof.worker.attached import rendezvous
from dlcprof.worker.probes import ProbeNotes, rawtrace

class Sink(list):
    emit = list.append

sink = Sink()
notes = ProbeNotes(sink, "pid1")
rendezvous.install(sink, lambda: "pid1", notes)
close = rawtrace.install(sink, "pid1", notes, directory=sys.argv[1])  # no RANK yet
before = time.time()
with tempfile.NamedTemporaryFile() as f:
    dist.init_process_group("gloo", rank=0, world_size=1, init_method="file://" + f.name)
(e,) = sink
assert before < e.t <= time.time(), (before, e)
print(e.rank, e.world_size, e.backend, e.waited, dist.get_rank())
close()  # the rank came with the process group: torch's per-rank name
name = os.path.basename(sink[-1].path)
print(name[:33], os.listdir(sys.argv[1]) == [name])
dist.destroy_process_group()
"""


def test_the_probe_records_when_the_process_group_joined(tmp_path):
    """Real torch.distributed (gloo, one rank) under the wrapper; the raw trace
    begun before the rank was known ends under torch's per-rank name."""
    done = subprocess.run(
        [sys.executable, "-c", _JOIN, str(tmp_path)], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [
        *("0", "1", "gloo", "True", "0"),
        *("dedicated_log_torch_trace_rank_0_", "True"),
    ]


def test_the_probe_never_breaks_init_process_group():
    """What fails on our side is a note; the program's own call, result and
    errors are torch's."""
    import types

    from dlcprof.worker.attached import rendezvous
    from dlcprof.worker.probes import ProbeNotes

    def broken():
        raise RuntimeError("not initialized")

    c10d: Any = types.ModuleType("fake_c10d")
    c10d.init_process_group = lambda *a, **k: ("pg", a, k)
    c10d.get_rank = c10d.get_world_size = c10d.get_backend = broken
    sink = _Sink()
    rendezvous._wrap(c10d, sink, lambda: "pid1", ProbeNotes(sink, "pid1"))
    rendezvous._wrap(c10d, sink, lambda: "pid1", ProbeNotes(sink, "pid1"))  # once only
    assert c10d.init_process_group("gloo", rank=0) == ("pg", ("gloo",), {"rank": 0})
    (note,) = sink.events
    assert isinstance(note, ev.ProbeUnavailable) and note.probe == "rendezvous"

    def refused(*a, **k):
        raise ValueError("bad init_method")

    c10d.init_process_group = refused
    rendezvous._wrap(c10d, sink, lambda: "pid1", ProbeNotes(sink, "pid1"))
    with pytest.raises(ValueError, match="bad init_method"):
        c10d.init_process_group()
    assert len(sink.events) == 1
