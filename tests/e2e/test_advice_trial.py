"""`dlcprof run` and `dlcprof try` for real on this CPU (issue 23): one session per
bundled workload, the advice read from it, and where the change can be
applied, the trial measured beside its prediction (mark_dynamic's ``slow``);
cache artifacts saved by one run and loaded by the next."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from dlcprof import text
from dlcprof.figures import compile_cost as fc
from dlcprof.figures.advice import rules as far
from dlcprof.figures.check.baseline import beyond_noise
from dlcprof.report import load_session

# Every graph compiled in full on both sides of a trial (the FX and AOTAutograd
# graph caches off), while the kernel builds and the one-time probes stay cached:
# the same cache state for the advised run and the trial, whatever ran before.
GRAPH_CACHES_OFF = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


def _dlcprof(
    *argv: str, caches_off: bool = False, tmp: Path | None = None
) -> subprocess.CompletedProcess[str]:
    """``tmp``: the runs' TMPDIR, where Inductor keeps its precompiled headers."""
    env = {**os.environ, **(GRAPH_CACHES_OFF if caches_off else {}), "COLUMNS": "200"}
    if tmp is not None:
        tmp.mkdir(exist_ok=True)
        env["TMPDIR"] = str(tmp)
    return subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


def test_stacked_blocks_regional_advice_is_tried_and_measured(tmp_path):
    """stacked-blocks: the costs add up, the regional advice predicts a saving,
    `try` measures a saving, and both land in the JSON with the prediction's error."""
    path = tmp_path / "s.json"
    common = ("--size", "small", "--reps", "3", "--iters", "5", "--no-hotspots", "--quiet")
    # On a new TMPDIR a compile also builds Inductor's precompiled header, once
    # per set of compiler flags, which the kernels compiled decide: a run of the
    # advised model first builds the headers that it, and the trial compiling
    # its blocks alone, need, so that both compile alike whatever ran before. A
    # TMPDIR of this test's own: a header another test builds meanwhile in a
    # shared one would read as built by the run it appeared during.
    tmp = tmp_path / "tmp"
    warm = _dlcprof(
        "run",
        "stacked-blocks",
        "--size",
        "small",
        "--no-benchmark",
        "--no-hotspots",
        "--quiet",
        "--json",
        str(tmp_path / "warm.json"),
        tmp=tmp,
    )
    assert warm.returncode == 0, warm.stderr
    # torch's own build of them, seen in this process, in the new TMPDIR.
    built = load_session(tmp_path / "warm.json").latest_run.header_built
    assert built is not None and built.path.startswith(str(tmp)), built
    p = _dlcprof("run", "stacked-blocks", *common, "--json", str(path), caches_off=True, tmp=tmp)
    assert p.returncode == 0, p.stderr
    assert "Compile cost by your code" in p.stdout and "Block.forward" in p.stdout
    session = load_session(path)
    run = session.latest_run
    cost = fc.compile_cost(run)
    assert cost is not None and cost.dynamo_s and cost.lowering_s
    # The rows add up to torch's own totals.
    dynamo = cost.traced_s + cost.guards_s
    assert abs(dynamo / cost.dynamo_s - 1) <= 0.10, (cost.traced_s, cost.guards_s, cost.dynamo_s)
    assert abs(cost.lowered_s / cost.lowering_s - 1) <= 0.10, (cost.lowered_s, cost.lowering_s)
    # The probe's own cost is inside the observer budget (5% of the compile).
    assert cost.own_s <= 0.05 * run.compile_wall_s
    block = next(f for f in cost.functions if f.function == "Block.forward")
    assert block.traced == 4 and block.location.endswith("stacked_blocks.py:25")

    advice = far.advise(session, run)
    n, item = next((i, a) for i, a in enumerate(advice.items, 1) if a.rule == "regional")
    assert item.options == {"regional": "Block"} and "Block" in item.snippet
    assert item.predicted is not None and item.predicted.saving_s > 0
    report = json.loads(path.read_text())
    assert report["advice"]["items"][n - 1]["rule"] == "regional"

    t = _dlcprof("try", str(path), str(n), "--quiet", caches_off=True, tmp=tmp)
    assert t.returncode == 0, t.stderr
    assert "predicted -" in t.stdout and "measured" in t.stdout
    tried = load_session(path).tried
    assert len(tried) == 1 and tried[0].options == {"regional": "Block"}
    # Watched alike: no py-spy on the trial when none watched the advised run.
    trial = load_session(path).runs[tried[0].run_id]
    assert trial.settings.regional == "Block" and "py-spy" not in trial.monitors
    measured = tried[0].measured_before_s - tried[0].measured_after_s
    predicted = tried[0].predicted_before_s - tried[0].predicted_after_s
    assert tried[0].cache_before == tried[0].cache_after, tried[0]
    # Whether the trial saved time, and how close the prediction came, are
    # speed figures measured side by side in benchmarks/ (RESULTS.md §8), not
    # timed tests (a loaded machine moves either compile): here, that both
    # compiles were measured and the error is recorded, where the two compiles
    # differ by more than two runs of one command do.
    before, after = tried[0].measured_before_s, tried[0].measured_after_s
    assert before > 0 and after > 0, tried[0]
    report = json.loads(path.read_text())
    error = report["advice"]["tried"][0]["prediction_error"]
    if beyond_noise(before, after):
        assert error == pytest.approx(abs(predicted - measured) / abs(measured))
    else:
        assert error is None and text.NO_DIFFERENCE in t.stdout


# Its parts, in the default run: the item (tests/unit/test_advice.py's
# test_recorded_static_sweep_gets_mark_dynamic_naming_input_and_dim), the option
# as the worker applies it (tests/unit/test_remedies.py: one graph for every size),
# `try` on a workload's run (test_graph_break_ids.py's hatch, the regional trial here).
@pytest.mark.slow
def test_variable_length_static_sweep_gets_mark_dynamic_on_x_dim_1(tmp_path):
    path = tmp_path / "v.json"
    p = _dlcprof(
        "run",
        "variable-length",
        "--size",
        "small",
        "--dynamic",
        "false",
        "--sweep",
        "--no-benchmark",
        "--reps",
        "2",
        "--iters",
        "3",
        "--no-hotspots",
        "--quiet",
        "--json",
        str(path),
        caches_off=True,
    )
    assert p.returncode == 0, p.stderr
    session = load_session(path)
    advice = far.advise(session, session.latest_run)
    n, item = next((i, a) for i, a in enumerate(advice.items, 1) if a.rule == "mark-dynamic")
    assert item.options == {"mark_dynamic": "x:1"} and "mark_dynamic(x, 1)" in item.snippet
    t = _dlcprof("try", str(path), str(n), "--quiet", caches_off=True)
    assert t.returncode == 0, t.stderr
    session = load_session(path)
    (tried,) = session.tried
    assert tried.measured_before_s > 0 and tried.measured_after_s > 0, tried
    # The change itself, whatever the machine's load: one compile serves every size.
    assert session.runs[tried.advised_run].sweep_done.compiles == 3
    assert session.runs[tried.run_id].sweep_done.compiles == 1


def test_pointwise_chain_gets_nothing_to_change_and_its_cache_artifacts_load(tmp_path):
    """Two runs of pointwise-chain on one --cache-artifacts file: the first saves
    them, the second loads them and is advised that nothing is to change."""
    artifacts = tmp_path / "mega.bin"
    said = []
    # Judged on a horizon any faster compiled call pays back: on torch 2.11 a hit
    # still spends seconds loading its module, and whether 1,000 calls repay that
    # is this machine's speed of the moment, not the cache's doing.
    calls = 10**9
    for i, timed in enumerate((("--no-benchmark",), ("--reps", "3", "--iters", "5"))):
        path = tmp_path / f"c{i}.json"
        # The first is not the run advised: on a new TMPDIR it builds the
        # precompiled header, seconds a machine pays once, which would read as
        # a compile that never pays back.
        p = _dlcprof(
            "run",
            "pointwise-chain",
            *timed,
            "--no-hotspots",
            "--quiet",
            "--cache-artifacts",
            str(artifacts),
            "--calls",
            str(calls),
            "--json",
            str(path),
        )
        assert p.returncode == 0, p.stderr
        run = load_session(path).latest_run
        said.append([lg.message for lg in run.logs if "cache artifacts" in lg.message])
        assert artifacts.is_file() and artifacts.stat().st_size > 0
    assert "does not exist yet" in said[0][0] and "saved to" in said[0][1]
    assert "loaded from" in said[1][0]
    assert run.settings.cache_artifacts == str(artifacts)

    session = load_session(path)
    advice = far.advise(session, session.latest_run, calls)
    assert advice.items == [] and advice.nothing and advice.nothing.startswith("nothing to change")
    assert "nothing to change" in p.stdout
    assert json.loads(path.read_text())["advice"]["nothing"] == advice.nothing
