"""The observer must not move what it measures: a program whose Inductor cache
is warm keeps hitting it the first time it runs under dlcprof (issue 29, item 1).

dlcprof turns on Inductor's kernel provenance, which torch 2.13 hashes into the
FX graph and AOTAutograd cache keys; the kernel probe keeps it out of them."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import PROGRAMS

TRAIN = PROGRAMS / "train.py"
ARGS = (str(TRAIN), "--steps", "1")


def cache_env(tmp_path: Path) -> dict[str, str]:
    """A cache of the test's own, and a TMPDIR (Inductor keeps headers there;
    short: dlcprof's socket is made in it)."""
    (tmp_path / "cache").mkdir()
    env = {k: v for k, v in os.environ.items() if k not in ("TORCH_TRACE", "TORCH_COMPILE_DEBUG")}
    tmp = tempfile.mkdtemp(prefix="dlw", dir="/tmp")
    return env | {"TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "cache"), "TMPDIR": tmp}


def graph_cache_states(trace: Path) -> Counter[tuple[str, str]]:
    """(compile id, "hit"/"miss") of each FX graph cache lookup TORCH_TRACE logged."""
    out: Counter[tuple[str, str]] = Counter()
    for path in trace.glob("*.log"):
        for line in path.read_text().splitlines():
            if line.startswith("\t") or "] {" not in line:
                continue
            record = json.loads(line.split("] ", 1)[1])
            name = (record.get("artifact") or {}).get("name", "")
            if name.startswith("fx_graph_cache_"):
                cid = f"{record['frame_id']}/{record['frame_compile_id']}"
                out[cid, name.removeprefix("fx_graph_cache_")] += 1
    return out


@pytest.mark.slow
def test_a_warm_program_stays_warm_on_its_first_run_under_dlcprof(tmp_path):
    env = cache_env(tmp_path)
    try:
        check_stays_warm(tmp_path, env)
    finally:
        shutil.rmtree(env["TMPDIR"], ignore_errors=True)


def check_stays_warm(tmp_path: Path, env: dict[str, str]) -> None:
    run: dict[str, Any] = dict(env=env, capture_output=True, text=True, timeout=900)
    warmup = subprocess.run([sys.executable, *ARGS], **run)
    assert warmup.returncode == 0, warmup.stderr
    trace = tmp_path / "trace"
    bare = subprocess.run(
        [sys.executable, *ARGS], **run | {"env": env | {"TORCH_TRACE": str(trace)}}
    )
    assert bare.returncode == 0, bare.stderr
    states = graph_cache_states(trace)
    hits = {cid for cid, state in states if state == "hit"}
    assert hits and not any(state == "miss" for _, state in states), states

    out = tmp_path / "s.json"
    argv = [sys.executable, "-m", "dlcprof.cli", "run", "--no-hotspots", "--json", str(out)]
    attached = subprocess.run([*argv, "--", sys.executable, *ARGS], **run)
    assert attached.returncode == 0, attached.stderr
    (process,) = [r for r in json.loads(out.read_text())["runs"] if r["process"] is not None]
    cache = {c["compile_id"]: c["cache"] for c in process["compiles"] if not c["is_backward"]}
    assert {cid: cache.get(cid) for cid in hits} == {cid: "hit" for cid in hits}
    # The entries the program wrote carry no provenance: each kernel still names
    # its aten ops, and its user line is read off the post-grad graph.
    kernels = [k for c in process["compiles"] for k in c["kernels"]]
    relu = [k for k in kernels if "aten.relu" in k["fused_ops"]]
    assert relu and all(
        k["source_lines"] == [f"{TRAIN}:17 return torch.relu(self.lin(x))"] for k in relu
    )


POST_GRAD = """\
class GraphModule(torch.nn.Module):
    def forward(self, primals_1: "f32[8, 8][8, 1]cpu", primals_2: "f32[4, 8][8, 1]cpu"):
        # File: /u/train.py:17 in forward, code: return torch.relu(self.lin(x))
        addmm: "f32[4, 8][8, 1]cpu" = torch.ops.aten.addmm.default(primals_1, primals_2)
        relu: "f32[4, 8][8, 1]cpu" = torch.ops.aten.relu.default(addmm);  addmm = None
        # No stacktrace found for following nodes
        mul: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(relu, 2)
         # recompute: MUST_SAVE File: /u/train.py:22 in shift, code: y = x * 2
        mul_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.mul.Tensor(relu, 2)
        # File: /u/train.py:23 in shift, code: return y - 1
        relu_1: "f32[4, 8][8, 1]cpu" = torch.ops.aten.relu.default(mul_1)
        sub: "f32[4, 8][8, 1]cpu" = torch.ops.aten.sub.Tensor(relu_1, 1)
        return (sub,)
"""


def test_kernel_lines_read_off_the_post_grad_graph_where_one_line_made_the_op():
    from dlcprof.trace_records import kernels as K

    lines = K.parse_post_grad_lines(POST_GRAD)
    assert lines["addmm"] == "/u/train.py:17 return torch.relu(self.lin(x))"
    assert "mul" not in lines  # no stack trace: no line
    assert lines["mul_1"] == "/u/train.py:22 y = x * 2"
    nodes = K.parse_post_grad_graph(POST_GRAD)
    # relu was made at two lines: which one this kernel holds is not known.
    assert K.lines_by_op(["aten.relu", "aten.sub"], nodes, lines) == ["/u/train.py:23 return y - 1"]
    assert K.lines_by_op(["aten.mul"], nodes, lines) == ["/u/train.py:22 y = x * 2"]


@pytest.fixture
def unset_provenance(monkeypatch):
    """Provenance as a process that never met dlcprof has it: another test in
    this process may have turned it on (and noted the program's level)."""
    inductor_config = pytest.importorskip("torch._inductor.config")
    from dlcprof.worker.probes import provenance

    monkeypatch.setattr(inductor_config.trace, "provenance_tracking_level", 0)
    monkeypatch.setattr(provenance, "_users_level", None)


def test_provenance_stays_off_where_it_cannot_be_kept_out_of_the_key(monkeypatch, unset_provenance):
    pytest.importorskip("torch._inductor.codecache")
    import torch._inductor.codecache as codecache
    import torch._inductor.config as inductor_config

    from dlcprof import events as ev
    from dlcprof.worker.emit import ListEmitter
    from dlcprof.worker.probes import ProbeNotes, provenance

    sink = ListEmitter()
    monkeypatch.delattr(codecache, "FxGraphHashDetails")
    level = inductor_config.trace.provenance_tracking_level
    try:
        provenance.enable_provenance(ProbeNotes(sink, "r"))
        assert inductor_config.trace.provenance_tracking_level == level
    finally:
        inductor_config.trace.provenance_tracking_level = level
    (note,) = [e for e in sink.events if isinstance(e, ev.ProbeUnavailable)]
    assert note.probe == "kernels.provenance" and "graph cache keeps hitting" in note.reason


def test_the_cache_key_carries_the_programs_own_provenance_level(unset_provenance):
    pytest.importorskip("torch._inductor.codecache")
    import torch
    import torch._inductor.codecache as codecache
    import torch._inductor.config as inductor_config

    from dlcprof.worker.emit import ListEmitter
    from dlcprof.worker.probes import ProbeNotes, provenance

    level = inductor_config.trace.provenance_tracking_level
    try:
        assert provenance.enable_provenance(ProbeNotes(ListEmitter(), "r"))
        assert inductor_config.trace.provenance_tracking_level == 1
        details = codecache.FxGraphHashDetails(None, [torch.ones(2)], {}, [])
        if not hasattr(details, "provenance_tracking_level"):  # torch 2.11
            pytest.skip(f"torch {torch.__version__}'s FX graph cache key holds no provenance")
        assert details.provenance_tracking_level == level == 0
    finally:
        inductor_config.trace.provenance_tracking_level = level
