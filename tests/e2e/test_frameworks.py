"""Issue 29 on the frameworks people train with, attached unchanged under
``dlcprof run -- python PROGRAM`` (the test extras install them):

- tests/programs/lightning_fit.py: a real Lightning module fitted as
  ``trainer.fit(torch.compile(module))``; Dynamo raises in ``self.log`` (item 2).
- tests/programs/hf_trainer.py: a real HF ``Trainer(torch_compile=True)`` on a
  tiny GPT-2 (aot_eager: no C++ build on a cold CI cache); transformers'
  ``warning_once`` breaks the graph in every frame, and the odd last batch
  recompiles (items 3, 7).
"""

from __future__ import annotations

import re
from importlib.metadata import version

import pytest
from helpers.attached_run import line_of, run_attached
from helpers.paths import PROGRAMS

LIGHTNING = PROGRAMS / "lightning_fit.py"
HF = PROGRAMS / "hf_trainer.py"
# Functions of these packages are never the user's to avoid or change.
THEIRS = re.compile(r"site-packages|\b(torch|transformers|lightning|accelerate)/")


def _advice_is_the_users(report: dict) -> None:
    items = report["advice"]["items"]
    assert items
    for item in items:
        assert not THEIRS.search(item["where"]), item
        # A library's line may be named as where a break is, beside the user's line
        # that reached it ("inside transformers/x.py:9, reached from train.py:39").
        title = re.sub(r"inside \S+, reached from (?!\S*site-packages)", "at ", item["title"])
        assert not THEIRS.search(title + item["change"]), item
        assert "avoid calling" not in item["change"], item


pytestmark = pytest.mark.slow


def test_lightnings_compiled_self_log_is_a_crash_at_the_usersline_of(tmp_path):
    p, report = run_attached(LIGHTNING, tmp_path)
    if p.returncode == 0:  # the program's own status: dlcprof cannot make a crash exit 0
        kinds = sorted({b["gb_id"] for b in report["runs"][0]["graph_breaks"] if b["gb_id"]})
        pytest.skip(
            f"torch {version('torch')} no longer crashes on a compiled self.log (it breaks the "
            f"graph there instead: {', '.join(kinds) or 'no break id'})"
        )
    assert p.returncode == 1, p.stderr[-2000:]
    where = f"{LIGHTNING}:{line_of(LIGHTNING, 'self.log(')}"
    crash = next(ln for ln in p.stderr.splitlines() if ln.startswith("✗ COMPILE CRASHED"))
    assert where in crash and "InternalTorchDynamoError" in crash
    for wrong in ("runs eagerly", "ran eagerly", "NOTHING COMPILED", "nothing to change"):
        assert wrong not in p.stderr, wrong
    (run,) = report["runs"]
    assert run["status"] == "crashed" and run["compile_raised"]["location"] == where
    first = report["advice"]["items"][0]
    assert first["rule"] == "compile-raised" and first["where"] == where
    assert "compile the inner model" in first["change"]
    _advice_is_the_users(report)


def test_an_hf_trainers_breaks_recompiles_and_advice_are_the_users(tmp_path):
    p, report = run_attached(HF, tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    (run,) = report["runs"]
    assert run["compile_calls"][0]["package"] == "accelerate"  # Trainer compiles through it
    # One graph break (warning_once, hit by many frames) is one row, not one per frame.
    breaks = {(b["location"], b["reason"]) for b in run["graph_breaks"]}
    assert len(breaks) == 1 and len(run["graph_breaks"]) > 1
    table = p.stderr[p.stderr.index("Graph breaks") : p.stderr.index("Recompiles (guard")]
    rows, kinds = table.split("by kind:")
    assert rows.count("logging.Logger method") == 1 and "frames)" in rows
    assert kinds.count("GB") == 1  # and one kind, torch's id for it
    # The odd last batch (2 of 10 in batches of 4) recompiles on dim 0.
    assert any("expected 4, actual 2" in rc["reason"] for rc in run["recompiles"])
    rules = {item["rule"]: item for item in report["advice"]["items"]}
    brk = rules["graph-break"]
    assert "warning_once" in brk["change"] and "ignore_logging_functions" in brk["change"]
    _advice_is_the_users(report)
