"""A module compiled ahead of time by AOTInductor (tests/programs/aoti_linear.py)
under ``dlcprof run``: its compile, which torch logs without a compile id, is
``aoti/0``, with its phases, its time and the kernels of its generated C++,
live and in the import of the TORCH_TRACE log the same run wrote. Slow: the
C++ build takes minutes on 2 shared cores."""

from __future__ import annotations

import pytest
from helpers.attached_run import run_attached
from helpers.paths import PROGRAMS

from dlcprof import events as ev
from dlcprof.trace_import.job import import_trace


@pytest.mark.slow
def test_an_aotinductor_compile_reads_alike_live_and_imported(tmp_path, monkeypatch):
    monkeypatch.setenv("TORCH_TRACE", str(tmp_path / "trace"))
    p, report = run_attached(PROGRAMS / "aoti_linear.py", tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    (run,) = report["runs"]
    (live,) = run["compiles"]
    assert live["compile_id"] == f"{ev.AOTI}0" and live["wall_s"] > 0
    assert {ph["name"] for ph in live["phases"]} >= {"compile_fx_aot", "inductor_compile"}
    kernels = [(k["name"], k["kind"], sorted(k["fused_ops"])) for k in live["kernels"]]
    assert ("aoti_torch_cpu_addmm_out", "extern", ["aten.addmm", "aten.t"]) in kernels
    (imported,) = import_trace([str(tmp_path / "trace")], workers=1).runs.values()
    mine = imported.compiles[f"{ev.AOTI}0"]
    assert mine.wall_s == pytest.approx(live["wall_s"])
    assert [(k.name, k.kind, sorted(k.fused_ops)) for k in mine.kernels] == kernels
