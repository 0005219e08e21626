"""Faults of a torchrun job under ``dlcprof run --``, each caused for real
(tests/programs/ddp_train.py, 2 ranks on gloo): a stop sent to dlcprof when
torchrun cannot pass it on; ``slow``: a rank that crashes, Ctrl-C that torchrun
passes on, a rank that never compiles (tests/unit/test_ddp.py reads their
ends and the recorded job). Each run
asserts everything it shows: the ranks' fate, dlcprof's exit status, the
session kept, no process of the job left running."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import psutil
import pytest
from helpers.eager_rank import eager_and_compiled
from helpers.paths import PROGRAMS
from helpers.proc import alive, dlcprof_run, tree, wait_gone

from dlcprof.report.load import load_session

DDP = PROGRAMS / "ddp_train.py"
TORCHRUN = ("-m", "torch.distributed.run", "--standalone", "--nproc-per-node", "2")


@pytest.fixture
def run_job(tmp_path: Path):
    """Starts ``dlcprof run -- torchrun … ddp_train.py ARGS``; a job a failed
    test left running is stopped at teardown (dlcprof ends the job's tree)."""
    procs: list[subprocess.Popen] = []

    def start(*args: str, **kwargs) -> subprocess.Popen:
        with (tmp_path / "stdout").open("w") as out:  # the job holds its own copy
            proc = dlcprof_run(
                tmp_path / "s.json", *TORCHRUN, str(DDP), *args, stdout=out, **kwargs
            )
        procs.append(proc)
        return proc

    yield start
    for proc in procs:
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(60)
            except subprocess.TimeoutExpired:
                proc.kill()


def rank_pids(report: dict) -> dict[int, int]:
    return {r["process"]["rank"]: r["process"]["pid"] for r in report["runs"]}


# Its logic, in the default run: tests/unit/test_ddp.py's
# test_the_ends_of_ranks_crashed_ended_never_compiled (each rank's end, the crash named).
@pytest.mark.slow
def test_a_rank_that_crashes_is_shown_with_the_others_fate_and_torchruns_status(tmp_path, run_job):
    proc = run_job("--crash-rank", "1", "--steps", "3", options=("--no-hotspots",))
    _, stderr = proc.communicate(timeout=600)
    report = json.loads((tmp_path / "s.json").read_text())  # the session is kept
    program = report["program"]
    assert proc.returncode == program["returncode"] == 1, stderr  # torchrun's own status
    runs = {r["process"]["rank"]: r for r in report["runs"]}
    assert set(runs) == {0, 1}
    crashed = runs[1]
    assert crashed["status"] == "crashed"
    said = "uncaught RuntimeError: rank 1 crashed at step 1 (--crash-rank)"
    assert [e["message"] for e in crashed["errors"]] == [said]
    assert crashed["compiles"], "rank 1 compiled at step 0 before it crashed"
    # Rank 0 is stopped by torchrun (SIGTERM: no exit hook) or fails on the
    # closed connection first; either way its end names rank 1 as the cause.
    other = runs[0]
    assert other["status"] in ("crashed", "ended")
    (note,) = [n for n in other["process_notes"] if n.startswith(other["status"])]
    assert "ddp_train.py (pid" in note and "rank 1) crashed" in note
    assert f"■ ddp_train.py (pid {crashed['process']['pid']}, rank 1): crashed: {said}" in stderr
    assert not wait_gone([program["pid"], *rank_pids(report).values()], 10)


def _runs_the_job(p: psutil.Process, forked: list[str]) -> bool:
    """``p`` runs the job: not py-spy, nor a child dlcprof has just forked for
    py-spy that has not run it yet (``forked``: dlcprof's own command line, which
    names the job's script too)."""
    try:
        argv = p.cmdline()
        return (
            "py-spy" not in p.name() and argv != forked and any("ddp_train.py" in a for a in argv)
        )
    except psutil.Error:  # gone since it was listed
        return False


def _agent_and_ranks(proc, stdout: Path) -> tuple[int, list[int]]:
    """torchrun's agent and its two ranks, once both ranks have run steps."""
    deadline = time.monotonic() + 300
    while time.monotonic() < deadline:
        text = stdout.read_text()
        if "rank 0 step 3 " in text and "rank 1 step 3 " in text:
            # dlcprof's children: torchrun's agent, and py-spy on each rank.
            dlcprof = psutil.Process(proc.pid)
            forked = dlcprof.cmdline()
            (agent,) = [c for c in dlcprof.children() if _runs_the_job(c, forked)]
            ranks = tree(agent.pid)[1:]
            assert len(ranks) >= 2, ranks
            return agent.pid, ranks
        assert proc.poll() is None, proc.stderr.read()
        time.sleep(0.2)
    raise AssertionError("the ranks never ran 3 steps")


# Ctrl-C that torchrun passes on is slow: the default run keeps the stop torchrun
# cannot pass on (dlcprof ends every rank itself); Ctrl-C passed on to an attached
# program is tests/e2e/test_attach.py's test_stop_signal_reaches_the_program[SIGINT].
@pytest.mark.parametrize(
    "orphaned",
    [pytest.param(False, marks=pytest.mark.slow), True],
    ids=["sigint", "sigterm_agent_killed"],
)
def test_a_stop_sent_to_dlcprof_ends_every_rank(tmp_path, run_job, orphaned):
    """SIGINT to dlcprof: passed to torchrun, which stops its ranks. SIGTERM while
    torchrun cannot pass it on (stopped, then killed): its ranks, in sessions of
    their own, are orphaned, and dlcprof ends them."""
    proc = run_job("--steps", "100000000")
    agent, ranks = _agent_and_ranks(proc, tmp_path / "stdout")
    if orphaned:
        psutil.Process(agent).suspend()
        proc.send_signal(signal.SIGTERM)  # forwarded to the stopped agent: pending
        time.sleep(0.5)
        psutil.Process(agent).kill()
    else:
        proc.send_signal(signal.SIGINT)
    _, stderr = proc.communicate(timeout=300)
    report = json.loads((tmp_path / "s.json").read_text())
    program = report["program"]
    assert program["stopped_by"] == ("SIGTERM" if orphaned else "Ctrl-C")
    assert proc.returncode == (137 if orphaned else program["returncode"]), stderr
    pids = rank_pids(report)
    assert set(pids) == {0, 1} and set(pids.values()) <= set(ranks)
    assert not alive([agent, *ranks]), "a process of the job was left running"
    # A rank still in an allreduce when its peer stops fails on the closed
    # connection before the stop reaches it: shown as the stop's doing.
    for run in report["runs"]:
        assert run["status"] in ("ended", "cancelled", "crashed"), (run["status"], stderr)
        if run["status"] == "crashed":
            stop = "SIGTERM" if orphaned else "Ctrl-C"
            assert any(
                n.startswith(f"crashed after dlcprof passed on {stop}")
                for n in run["process_notes"]
            )
    assert not [d for d in report["ranks"]["divergences"] if d["check"] == "crash"]
    events = report["events"]
    swept = [
        e["message"]
        for e in events
        if e["type"] == "LogEmitted" and "still running after it stopped" in e["message"]
    ]
    assert bool(swept) == orphaned, swept
    if orphaned:
        assert all(str(p) in swept[0] for p in pids.values())


@pytest.mark.slow  # its recorded job: tests/unit/test_ddp.py's rank that never compiled
def test_a_rank_that_never_compiles_is_shown_as_such(tmp_path, run_job):
    proc = run_job("--eager-rank", "1", "--steps", "2")
    _, stderr = proc.communicate(timeout=600)
    assert proc.returncode == 0, stderr
    eager, _ = eager_and_compiled(load_session(tmp_path / "s.json"))
    assert f"■ {eager.name}: never compiled" in stderr
