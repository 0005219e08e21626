"""A program that calls ``torch._dynamo.reset()`` between compiles of one
function (tests/programs/dynamo_reset.py): torch writes compile 0/0 three
times, and each is its own compile, with its own cache state, live and in
the import of the TORCH_TRACE log the same run wrote."""

from __future__ import annotations

import pytest
from helpers.attached_run import run_attached
from helpers.paths import PROGRAMS

from dlcprof.trace_import.job import import_trace


def test_each_compile_after_a_reset_is_its_own_live_and_imported(tmp_path, monkeypatch):
    # A new cache folder: the same graph misses, hits after the reset, and a new
    # shape misses.
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.setenv("TORCH_TRACE", str(tmp_path / "trace"))
    p, report = run_attached(PROGRAMS / "dynamo_reset.py", tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    (run,) = report["runs"]
    live = [(c["compile_id"], c["cache"]) for c in run["compiles"]]
    assert live == [("0/0", "miss"), ("reset1:0/0", "hit"), ("reset2:0/0", "miss")]
    assert all(c["phases"] and c["kernels"] for c in run["compiles"])
    (imported,) = import_trace([str(tmp_path / "trace")], workers=1).runs.values()
    assert [(cid, c.record.cache) for cid, c in imported.compiles.items() if c.record] == live
    for c in run["compiles"]:
        assert imported.compiles[c["compile_id"]].wall_s == pytest.approx(c["wall_s"])
