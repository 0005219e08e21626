"""The report folder keeps torch's raw structured trace, exactly as TORCH_TRACE
writes it, so tlparse opens the same session dlcprof shows; the worker's run
that wrote it names its graph break at the user's line."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.worker import WorkerResult, run_worker

from dlcprof import events as ev
from dlcprof.report.folder import TRACE_NAME, save_session
from dlcprof.session import Session
from dlcprof.settings import RunSettings

# A glog prefix as tlparse's parser matches it (pytorch/tlparse src/lib.rs).
GLOG = re.compile(r"^[VIWEC]\d{4} \d{2}:\d{2}:\d{2}\.\d{6} \d+ [^:]+:\d+\] (\{.*\})$")


def records(path: Path) -> list[str]:
    """Each record as "metadata JSON" plus its payload lines, prefix dropped."""
    out: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("\t"):
            out[-1] += "\n" + line
            continue
        m = GLOG.match(line)
        assert m, f"not a structured-trace line: {line[:120]!r}"
        out.append(m.group(1))
    return out


BREAKY = """
import torch

def f(x):
    y = torch.sin(x) + 1
    if y.sum() > 0:  # a graph break: two graphs, a resume frame
        return y * 2
    return y - 2

def build(device, dtype):
    return f, (torch.randn(64, device=device, dtype=dtype),)
"""


@pytest.fixture(scope="module")
def breaky(tmp_path_factory) -> tuple[Path, Path, WorkerResult]:
    """A workload with a data-dependent branch, run by a real worker with
    TORCH_TRACE set: its file, torch's log folder, what the worker said."""
    tmp = tmp_path_factory.mktemp("breaky")
    workload = tmp / "breaky.py"
    workload.write_text(BREAKY.lstrip())
    torch_dir = tmp / "torch_trace"
    r = run_worker(
        RunSettings(target=str(workload), size="small", iters=3, reps=3),
        env={"TORCH_TRACE": str(torch_dir)},
    )
    return workload, torch_dir, r


@pytest.mark.xdist_group("test_raw_trace")
def test_the_graph_break_is_located_in_the_users_file(breaky):
    path, _, r = breaky
    assert r.returncode == 0, r.stderr[-2000:]
    assert isinstance(r.events[0], ev.WorkerReady)
    assert isinstance(r.events[-1], ev.RunFinished) and r.events[-1].status == "ok"
    (gb,) = r.of(ev.GraphBroken)
    line = 1 + next(i for i, s in enumerate(BREAKY.lstrip().splitlines()) if "if y.sum()" in s)
    assert gb.location == f"{path}:{line}"
    assert gb.reason == "Data-dependent branching"
    assert gb.hints and gb.compile_id == "0/0"
    compiles = r.of(ev.CompileFinished)
    assert len({c.compile_id for c in compiles}) == 2  # the frame and its resume function


@pytest.mark.xdist_group("test_raw_trace")
def test_the_raw_trace_is_what_torch_trace_writes(breaky, tmp_path):
    _, torch_dir, r = breaky
    assert r.returncode == 0, r.stderr[-2000:]
    saved = r.one(ev.TraceSaved)
    ours = records(Path(saved.path))
    (theirs_path,) = torch_dir.glob("*.log")
    theirs = records(theirs_path)
    assert saved.records == len(ours) > 50
    if not any('"torch_version"' in rec for rec in theirs):
        # A torch before 2.13 writes no torch_version artifact: ours does, and
        # the string it interns for that record's frame.
        ours = [rec for rec in ours if '"torch_version"' not in rec]
        ours = [rec for rec in ours if not rec.startswith('{"str"') or rec in theirs]
    # The same records (threads may interleave two handlers' lines differently).
    assert sorted(ours) == sorted(theirs)
    names = {next(iter(json.loads(rec.split("\n", 1)[0]))) for rec in ours}
    assert {"str", "dynamo_start", "compilation_metrics", "inductor_output_code"} <= names

    session = Session.from_events(r.events)
    folder = save_session(session, tmp_path / "report")
    assert (folder / TRACE_NAME).read_bytes() == Path(saved.path).read_bytes()
    files = json.loads((folder / "session.json").read_text())["extra"]["files"]
    assert files["torch_trace"] == [TRACE_NAME]

    # The venv's scripts folder first: tlparse comes with the test extras.
    tlparse = shutil.which("tlparse", path=str(Path(sys.executable).parent)) or shutil.which(
        "tlparse"
    )
    if tlparse is None:
        pytest.skip("tlparse is not installed (pip install tlparse)")
    out = tmp_path / "tl_out"
    done = subprocess.run(
        [tlparse, str(folder / TRACE_NAME), "-o", str(out), "--no-browser", "--strict"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    index = (out / "index.html").read_text()
    assert "0/0" in index and "1/0" in index  # both compiles, as dlcprof shows them
    assert {c for c in session.latest_run.compiles} >= {"0/0", "1/0"}
