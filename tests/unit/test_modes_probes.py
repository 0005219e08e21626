"""The autotune and CUDA-graph probes without a compile: their pure parts, their
contract with torch 2.13's API, and how they degrade when torch moves things.

The GPU-only paths (Triton template configs, CUDA-graph replays, re-recordings
and run-time skips) have no GPU to run on here: those tests are built from
torch 2.13's SOURCE (the strings and method names it uses), marked
"[from torch's source]". scripts/gpu_check.sh checks them on a real GPU.
"""

from __future__ import annotations

import inspect
import json
import logging
import sys
import textwrap
import threading
import types

import pytest

from dlcprof import events as ev
from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import autotune as A
from dlcprof.worker.probes import cudagraphs as C
from dlcprof.worker.probes.lazy import when_imported

MD = {"chromium_event": {}, "frame_id": 0, "frame_compile_id": 0}


def of(events: list[ev.Event], cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


def phase(d: TraceDispatcher, name: str, start: float, seconds: float, thread: int) -> None:
    """One B/E pair as torch's dynamo_timed logs it (ts in µs)."""
    begin = {"name": name, "ts": start * 1e6, "ph": "B", "args": {"compile_id": "0/0"}}
    d.feed(MD, json.dumps(begin), thread)
    d.feed(MD, json.dumps({**begin, "ph": "E", "ts": (start + seconds) * 1e6}), thread)


# --- autotuning ---------------------------------------------------------------------------


def test_each_op_gets_the_seconds_torch_timed_on_its_thread():
    sink = ListEmitter()
    collector = A.AutotuneCollector(sink, "r")
    collector.timed = True
    registered = []
    collector.on_first_phase = lambda: registered.append(True)
    d = TraceDispatcher(sink, "r", autotune=collector)
    # Op 1 is benchmarked; op 2's timings come from the autotune cache (only
    # the precompile phase runs); another thread's phases stay its own.
    phase(d, "packed_linear_template_precompiling", 100.0, 0.002, thread=1)
    phase(d, "packed_linear_template_autotuning", 100.01, 3.79, thread=1)
    phase(d, "mm_template_autotuning", 100.5, 9.0, thread=2)
    collector.autotuned(
        "packed_linear",
        ["4x256", "1024x256"],
        ["float32"] * 2,
        [
            ("_mkl_linear", 0.0693, ""),
            ("cpp_CppMicroGemmFP32Vec_0", 0.0147, ""),
            ("broken", float("inf"), ""),
        ],
        thread=1,
    )
    phase(d, "packed_linear_template_precompiling", 104.0, 0.001, thread=1)
    collector.autotuned(
        "packed_linear", ["4x1024"], ["float32"], [("_mkl_linear", 0.05, "")], thread=1
    )
    assert registered == [True]  # the saver registers at the first autotune phase, once
    first, second = of(sink.events, ev.OpAutotuned)
    assert [c["name"] for c in first.choices] == [
        "cpp_CppMicroGemmFP32Vec_0",
        "_mkl_linear",
        "broken",
    ]
    assert first.choices[-1]["ms"] is None  # a failed choice keeps no time
    assert first.precompile_s == pytest.approx(0.002, abs=1e-6)
    assert first.benchmark_s == pytest.approx(3.79, abs=1e-6)
    assert first.cached is False and first.compile_id == "0/0"
    assert second.cached is True and second.benchmark_s is None
    # Without the trace probe nobody times the ops: cached is unknown, not guessed.
    blind = A.AutotuneCollector(sink, "r", compile_id=lambda: "1/0")
    blind.autotuned("mm", ["8x8"], ["float32"], [("mm", 1.0, ""), ("triton_mm_0", 2.0, "")], 5)
    assert of(sink.events, ev.OpAutotuned)[-1].cached is None
    assert of(sink.events, ev.OpAutotuned)[-1].compile_id == "1/0"


def test_the_feedback_saver_matches_torchs_api():
    sa = pytest.importorskip("torch._inductor.select_algorithm")
    params = list(inspect.signature(sa.add_feedback_saver).parameters)
    assert params == ["fn"]
    sink = ListEmitter()
    collector = A.AutotuneCollector(sink, "r")  # not timed: registers at import (done)
    cache = sa.get_algorithm_selector_cache()
    before = list(cache.feedback_saver_fns)
    A.install(collector, ProbeNotes(sink, "r"))
    try:
        (saver,) = [f for f in cache.feedback_saver_fns if f not in before]
        node = types.SimpleNamespace(get_size=lambda: [4, 256], get_dtype=lambda: "torch.float32")
        config = "BLOCK_M=64, num_warps=4"
        choice = type("Choice", (), {"name": "triton_mm_1", "description": config})()
        # torch calls it as fn(timings, name, input_nodes, choices, profiled_fn, precompile_times)
        saver({choice: 0.5}, "mm", [node, node], [choice], lambda: {}, {})
    finally:
        cache.feedback_saver_fns[:] = before
    (op,) = of(sink.events, ev.OpAutotuned)
    assert (op.op, op.shapes, op.dtypes) == ("mm", ["4x256", "4x256"], ["float32", "float32"])
    assert op.choices == [{"name": "triton_mm_1", "ms": 0.5, "description": config}]


def test_autotune_probe_degrades_when_the_hook_is_gone(monkeypatch):
    sink = ListEmitter()
    monkeypatch.setitem(sys.modules, A.MODULE, types.ModuleType(A.MODULE))
    A.install(A.AutotuneCollector(sink, "r"), ProbeNotes(sink, "r"))
    (note,) = of(sink.events, ev.ProbeUnavailable)
    assert note.probe == "autotune" and "add_feedback_saver" in note.reason


# --- hooking in at torch's own import ---------------------------------------------------


def test_when_imported_runs_after_the_module_executes(tmp_path, monkeypatch):
    (tmp_path / "dlcprof_lazy_probe_mod.py").write_text("VALUE = 42\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    seen = []
    when_imported("dlcprof_lazy_probe_mod", lambda m: seen.append(m.VALUE))
    assert seen == []  # nothing imported it yet
    import dlcprof_lazy_probe_mod as mod  # noqa: F401

    assert seen == [42]
    assert mod.__loader__.__class__.__module__ != "dlcprof.worker.probes.lazy"
    assert inspect.getsource(mod).strip() == "VALUE = 42"
    when_imported("dlcprof_lazy_probe_mod", lambda m: seen.append(-m.VALUE))
    assert seen == [42, -42]  # already imported: at once
    monkeypatch.delitem(sys.modules, "dlcprof_lazy_probe_mod")


# --- CUDA graphs ------------------------------------------------------------------------


def _fake_output_code(reason_on_entry: str | None, log: logging.Logger, warn: str | None):
    """A stand-in for torch._inductor.output_code: a CompiledFxGraph whose
    post_compile does what torch's does to the cudagraphs flag."""

    class CompiledFxGraph:
        disabled_cudagraphs_reason = reason_on_entry

        def post_compile(self, example_inputs, constants, graph_kwargs):
            if warn:
                log.warning(warn)  # log_cudagraph_skip_and_bump_counter (GPU)
            if self.disabled_cudagraphs_reason or warn:
                graph_kwargs["cudagraphs"].value = False

    return types.SimpleNamespace(CompiledFxGraph=CompiledFxGraph)


class Boxed:
    def __init__(self, value: bool) -> None:
        self.value = value

    def __bool__(self) -> bool:
        return self.value


def test_each_graph_gets_its_decision_and_torchs_reason():
    sink = ListEmitter()
    probe = C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r"))
    log = logging.getLogger("dlcprof.test.cudagraphs")
    log.propagate = False
    probe._listen(types.SimpleNamespace(cudagraphs_log=log))
    # CPU: the reason is stored on the graph, never logged (torch 2.13).
    cpu = _fake_output_code("skipping cudagraphs due to cpu device (arg0_1)", log, None)
    probe._wrap_post_compile(cpu)
    cpu.CompiledFxGraph().post_compile([], None, {"cudagraphs": Boxed(True), "is_backward": True})
    probe.uninstall()
    # GPU: the reason is logged while the graph's post_compile runs.
    probe._listen(types.SimpleNamespace(cudagraphs_log=log))
    gpu = _fake_output_code(None, log, "skipping cudagraphs due to mutated inputs (1 instances)")
    probe._wrap_post_compile(gpu)
    gpu.CompiledFxGraph().post_compile([], None, {"cudagraphs": Boxed(True), "is_backward": True})
    # A skip after the compile (at run time) is its own event.
    log.warning("skipping cudagraph due to function 0 exceeding max re-recording limit (=128)")
    probe.uninstall()
    assert not log.handlers and "post_compile" in vars(gpu.CompiledFxGraph)
    first, second = of(sink.events, ev.CudagraphDecided)
    assert (first.graph, first.graphed) == ("backward", False)
    assert first.reason == "skipping cudagraphs due to cpu device (arg0_1)"
    assert second.reason == "skipping cudagraphs due to mutated inputs (1 instances)"
    (late,) = of(sink.events, ev.CudagraphSkipped)
    assert "re-recording limit" in late.reason


def test_cudagraph_hooks_match_torchs_classes():
    """The methods the probe wraps exist with the arguments it passes (CPU-importable)."""
    oc = pytest.importorskip("torch._inductor.output_code")
    trees = pytest.importorskip("torch._inductor.cudagraph_trees")
    utils = pytest.importorskip("torch._inductor.cudagraph_utils")
    params = list(inspect.signature(oc.CompiledFxGraph.post_compile).parameters)
    assert params == ["self", "example_inputs", "constants", "graph_kwargs"]
    mgr = trees.CUDAGraphTreeManager
    assert list(inspect.signature(mgr.record_function).parameters) == [
        "self",
        "new_inputs",
        "function_id",
    ]
    assert list(inspect.signature(mgr.execute_node).parameters) == ["self", "node", "new_inputs"]
    assert isinstance(utils.cudagraphs_log, logging.Logger)
    # Wrapping the real class and restoring it leaves torch as it was.
    sink = ListEmitter()
    probe = C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r"))
    original = oc.CompiledFxGraph.post_compile
    probe._wrap_post_compile(oc)
    assert oc.CompiledFxGraph.post_compile is not original
    probe.uninstall()
    assert oc.CompiledFxGraph.post_compile is original
    assert not of(sink.events, ev.ProbeUnavailable)


def test_replays_and_rerecordings_are_counted_per_compile():
    """[from torch's source] CUDAGraphTreeManager.record_function(new_inputs,
    function_id) records (sets self.compile_id first, in run()); execute_node
    (node, new_inputs) replays. No GPU here: a manager with those methods."""
    calls = []

    class CUDAGraphTreeManager:
        compile_id = "0/0"

        def record_function(self, new_inputs, function_id):
            calls.append("record")

        def execute_node(self, node, new_inputs):
            calls.append("replay")

    sink = ListEmitter()
    probe = C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r"), prefix=lambda: "sweep:")
    probe._wrap_trees(types.SimpleNamespace(CUDAGraphTreeManager=CUDAGraphTreeManager))
    m = CUDAGraphTreeManager()
    fid = types.SimpleNamespace(id=0)
    m.record_function([], fid)
    for _ in range(3):
        m.execute_node(None, [])
    m.record_function([], fid)  # the same function again: a re-recording
    m.compile_id = "1/0"
    m.record_function([], types.SimpleNamespace(id=1))
    probe.uninstall()
    assert calls.count("record") == 3 and calls.count("replay") == 3
    counted = probe.counted(skips=0)
    assert counted.per_compile == {
        "sweep:0/0": {"recordings": 2, "rerecordings": 1, "replays": 3},
        "sweep:1/0": {"recordings": 1, "rerecordings": 0, "replays": 0},
    }


def test_cudagraph_probe_degrades_when_torch_moved_things():
    sink = ListEmitter()
    probe = C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r"))
    empty = types.SimpleNamespace()
    probe._wrap_post_compile(empty)
    probe._listen(empty)
    probe._wrap_trees(empty)
    probes = sorted(e.probe for e in of(sink.events, ev.ProbeUnavailable))
    assert probes == ["cudagraphs", "cudagraphs.log", "cudagraphs.trees"]


def test_skip_count_reads_torchs_counter():
    pytest.importorskip("torch._dynamo.utils")
    sink = ListEmitter()
    n = C.skip_count(ProbeNotes(sink, "r"))
    assert isinstance(n, int) and n >= 0


def test_tally_is_thread_safe():
    tally = C.CudagraphTally()
    tally.recorded("raw", "0/0", 0)

    def replay() -> None:
        for _ in range(1000):
            tally.replayed("raw")

    threads = [threading.Thread(target=replay) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert tally.counts()["0/0"]["replays"] == 4000


def test_the_probes_change_no_torch_state_until_torch_imports_them(tmp_path):
    """Installing the probes imports none of torch's inductor modules: their
    import cost stays inside the compile the run measures."""
    import subprocess

    code = textwrap.dedent(
        """
        import sys, torch
        from dlcprof.worker.emit import ListEmitter
        from dlcprof.worker.probes import ProbeNotes
        from dlcprof.worker.probes import autotune as A, cudagraphs as C
        sink = ListEmitter()
        watched = ("torch._inductor.select_algorithm", "torch._inductor.output_code",
                   "torch._inductor.cudagraph_trees")
        before = {m for m in watched if m in sys.modules}
        A.install(A.AutotuneCollector(sink, "r"), ProbeNotes(sink, "r"))
        C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r")).install()
        print(sorted({m for m in watched if m in sys.modules} - before))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip().splitlines()[-1] == "[]"
