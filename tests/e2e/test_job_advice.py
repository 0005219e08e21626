"""Advice on a distributed job (issue 29 item 3): a 2-rank DDP job on gloo whose
rank 1 gets a partial last batch and recompiles alone while rank 0 waits.

Real data: tests/fixtures/programs/ddp_odd_batch.jsonl, a real ``dlcprof run --
torchrun --nproc-per-node 2 tests/programs/ddp_odd_batch.py`` on a cold cache
(scripts/record_program_fixture.py), and, marked slow, the job itself. The advice
used to tell the user to avoid ``Logger.set_runtime_stats_and_log`` and
``DistributedDataParallel._inside_ddp_forward`` (both inside DDP's forward) and
said nothing of the recompile."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS
from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.report.load import load_session
from dlcprof.session import Session

PROGRAM = PROGRAMS / "ddp_odd_batch.py"
# Where the recording ran: its paths read as the checkout on the build machine.
RECORDED = "/home/user/dlcprof/tests/programs/ddp_odd_batch.py"
# torch's own functions its hints name inside DDP's forward.
TORCH_FUNCTIONS = ("Logger.set_runtime_stats_and_log", "_inside_ddp_forward")


def _forward_line() -> int:
    lines = PROGRAM.read_text().splitlines()
    return next(i for i, s in enumerate(lines, 1) if s.strip().startswith("def forward"))


def _words(item: dict) -> str:
    return " ".join([item["title"], item["change"], item["snippet"], *item["evidence"]])


def _item_dict(item) -> dict:
    return {k: getattr(item, k) for k in ("rule", "title", "change", "snippet", "evidence")} | {
        "where": item.where
    }


def _check(items: list[dict], hidden: list[str], solo_s: float, program: str) -> None:
    """The job's advice: the rank's solo recompile first, at the user's forward,
    with its seconds and the peer's wait; no item on torch's own code."""
    first = items[0]
    assert first["rule"] == "rank-recompile", items
    assert first["title"] == f"rank 1 recompiled alone ({text.secs(solo_s)}) while rank 0 waited"
    assert first["where"] == f"{program}:{_forward_line()}"
    assert "tensor 'x' size mismatch at index 0. expected 4, actual 3" in first["evidence"][0]
    assert any("rank 0 waited for it" in e and text.secs(solo_s) in e for e in first["evidence"])
    assert "drop_last=True" in first["change"] and "pad the last batch to 4" in first["change"]
    assert "drop_last=True" in first["snippet"]
    # torch.compile(..., dynamic=False): the recompile stayed static.
    assert "dynamic=False" in first["change"]
    for item in items:
        assert not any(f in _words(item) for f in TORCH_FUNCTIONS), item
        assert not item["where"] or text.users_code(item["where"].rsplit(":", 1)[0]), item
    # DDP's own breaks: said once, as not the user's to change.
    (said,) = [h for h in hidden if "graph breaks in code not yours" in h]
    assert "torch/nn/parallel/distributed.py" in said


def _solo(session: Session) -> dict[str, float]:
    """Rank 1's compiles that rank 0 did not make (its recompiles, forward and
    backward), with torch's wall time of each."""
    runs = {r.process.rank: r for r in session.runs.values() if r.process}
    solo = set(runs[1].compiles) - set(runs[0].compiles)
    return {c: runs[1].compiles[c].wall_s or 0.0 for c in solo}


def test_job_advice_ranks_the_solo_recompile_first_and_blames_no_torch_function():
    session = Session.from_events(load_fixture("programs/ddp_odd_batch"))
    run = fat.advised_run(session)
    assert run is not None and run.process is not None and run.process.rank == 1
    advice = far.advise(session, run)
    solo = _solo(session)
    # The user's forward and, compiled cold, its backward.
    assert {"4/1", ev.backward_id("4/1")} <= solo.keys()
    _check([_item_dict(i) for i in advice.items], advice.hidden, sum(solo.values()), RECORDED)


def test_the_peers_advice_says_the_solo_recompile_first_without_a_saving():
    """Which rank compiled the most is left to chance on a warm cache (the
    recompile a cache hit: torch 2.11's run of the job advised rank 0): rank 0's
    advice says rank 1's recompile first too, with no compile saving of its own."""
    session = Session.from_events(load_fixture("programs/ddp_odd_batch"))
    peer = next(r for r in session.runs.values() if r.process and r.process.rank == 0)
    advice = far.advise(session, peer)
    _check(
        [_item_dict(i) for i in advice.items], advice.hidden, sum(_solo(session).values()), RECORDED
    )
    assert advice.items[0].predicted is None


def test_a_break_in_the_users_own_code_is_still_advised():
    """Only breaks in frames of installed packages or the standard library leave
    the items: the same job's breaks, moved into the user's file, are advised."""
    events = load_fixture("programs/ddp_odd_batch")
    moved = [
        ev.CompileFinished(
            **{
                **vars(e),
                "metrics": {**e.metrics, "co_filename": str(PROGRAM)},
            }
        )
        if isinstance(e, ev.CompileFinished) and e.compile_id in ("0/0", "1/0", "2/0")
        else e
        for e in events
    ]
    session = Session.from_events(moved)
    run = fat.advised_run(session)
    assert run is not None
    advice = far.advise(session, run)
    assert [i.rule for i in advice.items].count("graph-break") == 2
    assert not [h for h in advice.hidden if "not yours" in h]


@pytest.mark.slow
def test_the_odd_batch_job_live(tmp_path):
    out = tmp_path / "s.json"
    argv = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--no-hotspots"]
    argv += ["--", str(Path(sys.executable).parent / "torchrun"), "--standalone"]
    argv += ["--nproc-per-node", "2", str(PROGRAM)]
    proc = subprocess.run(argv, capture_output=True, text=True, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    advice = json.loads(out.read_text())["advice"]
    _check(advice["items"], advice["hidden"], sum(_solo(load_session(out)).values()), str(PROGRAM))
    assert "rank 1 recompiled alone" in proc.stdout + proc.stderr
