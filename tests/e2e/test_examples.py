"""The real-model workloads in examples/ (Hugging Face transformers, random
weights from configs), run as a user runs them: `dlcprof run`, output piped.

They need `transformers` (`pip install -e '.[examples]'`) and minutes of CPU:
they run when asked (`DLCPROF_EXAMPLES=1`), not in the README's suite, which
installs transformers for the framework tests (test_frameworks.py) but must
stay within minutes; each item of issue 9 also has a test on a recorded trace
(test_trace_findings.py).
"""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import REPO
from helpers.trace import outside_their_compile

from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.report import load_session
from dlcprof.report.folder import TRACE_NAME

EXAMPLES = REPO / "examples"
pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        importlib.util.find_spec("transformers") is None,
        reason="needs transformers: pip install -e '.[examples]'",
    ),
    pytest.mark.skipif(
        os.environ.get("DLCPROF_EXAMPLES") != "1",
        reason="minutes of CPU: run with DLCPROF_EXAMPLES=1",
    ),
]


def dlcprof_run(tmp_path: Path, *args: str, env: dict[str, str] | None = None):
    out = tmp_path / "report"
    child_env = {k: v for k, v in os.environ.items() if k != "COLUMNS"}  # piped, no width
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "dlcprof.cli",
            "run",
            *args,
            "--size",
            "small",
            "--iters",
            "5",
            "--reps",
            "3",
            "--report",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**child_env, **(env or {})},
    )
    assert p.returncode == 0, p.stdout[-3000:] + p.stderr[-3000:]
    return p.stdout, load_session(out / "session.json"), out


def test_bert_training_step(tmp_path):
    # Graph caches off: the backward then compiles lazily at the first .backward().
    stdout, session, folder = dlcprof_run(
        tmp_path, str(EXAMPLES / "bert_train.py"), env={"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"}
    )
    run = session.latest_run
    # 1: the backward owns its phases and kernels, each inside its compile's span.
    bwd = run.compiles["0/0 (bwd)"]
    assert any(p.name == "GraphLowering.run" for p in bwd.phases)
    assert bwd.kernels and all(k.graph == "backward" for k in bwd.kernels)
    assert all(k.graph != "backward" for k in run.compiles["0/0"].kernels)
    assert outside_their_compile(run) == []
    assert "[0/0 (bwd)] GraphLowering.run" in stdout
    # 4: the graph break at .backward() made Dynamo restart the frame.
    assert fp.restarts(run.compiles["0/0"]).reasons[0].startswith("graph break:")
    # 10: the optimizer's break is located at the user's opt.step() line.
    source = (EXAMPLES / "bert_train.py").read_text().splitlines()
    step_line = next(i for i, line in enumerate(source, 1) if "opt.step()" in line)
    inside = [gb for gb in run.graph_breaks if gb.detail]
    assert inside and all(gb.location.endswith(f"bert_train.py:{step_line}") for gb in inside)
    assert all(text.short_path(gb.detail).startswith("torch/optim/") for gb in inside)
    # 11: the loss backward comes from the loss line inside BertForSequenceClassification.
    (loss,) = [k for k in bwd.kernels if "nll_loss_backward" in k.name]
    assert any("loss_fct(" in line for line in loss.source_lines), loss.source_lines
    # 5: piped output keeps whole kernel names; 9: the compile time says its cache state.
    assert all(k.name in stdout for k in run.kernels)
    s = fb.run_speed(run)
    assert s is not None and s.compile_text in stdout and "graph cache off" in s.compile_text
    # The raw trace for tlparse is in the folder.
    assert (folder / TRACE_NAME).stat().st_size > 100_000


def test_gpt2_dynamic_sweep(tmp_path):
    stdout, session, _ = dlcprof_run(
        tmp_path, str(EXAMPLES / "gpt2.py"), "--dynamic", "true", "--sweep"
    )
    run = session.latest_run
    # 3: the dims made dynamic are input_ids' batch and length; the float
    # constants (dropout p, LayerNorm eps, math.pi) are listed apart.
    assert {d.source for d in fr.unique_dims(run)} == {
        "L['input_ids'].size()[0]",
        "L['input_ids'].size()[1]",
    }
    scalars = [fr.scalar_name(d.source) for d in fr.symbolic_scalars(run)]
    assert "transformers.activations.math.pi" in scalars and len(scalars) >= 10
    assert "scalars made symbols (not dims)" in stdout
    # 4: the discarded attempt is shown with its reason and cost.
    r = fp.restarts(run.compiles["0/0"])
    assert r is not None and r.reasons == ["TensorifyScalarRestartAnalysis"] and r.cost_s > 0
    assert "restart threw away" in stdout and "TensorifyScalarRestartAnalysis" in stdout
    # 12: the first sweep step compiled, the others reused the dynamic graph;
    # 9: each latency is a median with its spread.
    assert [fr.step_flag(i, st) for i, st in enumerate(run.sweep)] == [
        "compiled",
        "reused",
        "reused",
    ]
    assert all(st.latency_spread_ms is not None for st in run.sweep)


def test_vision_model(tmp_path):
    stdout, session, _ = dlcprof_run(
        tmp_path, str(EXAMPLES / "vision.py") + ":mobilenet", "--dynamic", "true"
    )
    s = fb.run_speed(session.latest_run)
    assert s is not None
    # 2: a break-even only when compiled is measurably faster, and with its cache state.
    if s.measurable:
        assert (s.break_even is not None) == (s.verdict == fb.FASTER)
    else:
        assert s.break_even is None and text.NO_DIFFERENCE in stdout
    assert fb.break_even_text(s) in stdout and s.compile_text in stdout
