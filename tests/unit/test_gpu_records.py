"""The GPU paths (issue 24), on the CPU: real torch output where the CPU can
make it (a wrapper with graph partitions), else records shaped exactly like
torch 2.11 and 2.13's (kineto traces with CUDA-graph replays, cudagraph_trees'
calls, Inductor's run-time autotune phases), each marked with where its shape
comes from."""

from __future__ import annotations

import ast
import importlib.util
import sys
import types

import pytest
from helpers.events import kineto_op, run_started
from helpers.paths import REPO

from dlcprof import events as ev
from dlcprof.figures import modes as fm
from dlcprof.figures import phases as fp
from dlcprof.session import Session
from dlcprof.trace_records import kernels as K
from dlcprof.worker import bench, launches
from dlcprof.worker import profile as P
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.gpu_trace import device_times
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import compiled_code as cc
from dlcprof.worker.probes import cudagraphs as C

PARTITIONED = sorted((REPO / "tests" / "fixtures" / "partitions").glob("output_code_*.txt"))


# --- graph partitions (issue 24 #2) --------------------------------------------------------


@pytest.mark.parametrize("fixture", PARTITIONED, ids=lambda p: p.stem)
def test_partition_functions_hold_the_launches_in_call_order(fixture):
    """Real torch 2.11 and 2.13 codegen (scripts/gpu_partition_fixture.py): a
    partition, the extern matmul left in call(), another partition."""
    code = fixture.read_text()
    assert "def partition_0(args):" in code and "self.partitions[1](" in code
    parsed = K.parse_output_code(code)
    assert [(c.name, c.extern) for c in parsed.calls] == [
        ("cpp_fused_sin_0", False),
        ("extern_kernels.mm", True),
        ("cpp_fused_add_relu_1", False),
    ]
    tree, launches = cc.instrument_source(code, parsed.definitions)
    assert [(x.name, x.extern) for x in launches] == [(c.name, c.extern) for c in parsed.calls]
    names = [f.name for f in tree.body if isinstance(f, ast.FunctionDef)]
    assert names == ["call", "partition_0", "partition_1"]
    src = ast.unparse(tree)
    assert src.count(f"{cc.HOOK}.launch(") == 3 and src.count(f"{cc.HOOK}.enter(") == 1


# --- CUDA-graph replays in a kineto trace (issue 24 #2, #11) ---------------------------------

# Shaped as kineto writes a replay (libkineto output_json.cpp; CUPTI names the
# runtime call cudaGraphLaunch, the driver call cuGraphLaunch): one launch
# event, and every kernel of the graph carrying its correlation id.


REPLAY_TRACE = {
    "traceEvents": [
        # Our range around a launch left in call() (not capturable), then a replay.
        kineto_op("user_annotation", "dlcprof:0:1", 99.0, 9.0, 1),
        kineto_op("cuda_runtime", "cudaLaunchKernel", 102.0, 3.0, 1, cbid=211, correlation=501),
        kineto_op(
            "kernel",
            "triton_poi_fused_add_relu_1",
            110.0,
            4.0,
            7,
            device=0,
            stream=7,
            correlation=501,
        ),
        kineto_op("cuda_runtime", "cudaGraphLaunch", 120.0, 8.0, 1, cbid=311, correlation=502),
        kineto_op(
            "kernel", "triton_poi_fused_sin_0", 130.0, 2.0, 7, device=0, stream=7, correlation=502
        ),
        kineto_op(
            "kernel",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32",
            133.0,
            30.0,
            7,
            device=0,
            stream=7,
            correlation=502,
        ),
        kineto_op("cuda_runtime", "cudaGraphLaunch", 170.0, 8.0, 1, cbid=311, correlation=503),
        kineto_op(
            "kernel", "triton_poi_fused_sin_0", 180.0, 2.0, 7, device=0, stream=7, correlation=503
        ),
        kineto_op(
            "kernel",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32",
            183.0,
            30.0,
            7,
            device=0,
            stream=7,
            correlation=503,
        ),
    ]
}


def test_cuda_graph_replays_are_kept_by_name_and_stated():
    times = device_times(REPLAY_TRACE, launches.RANGE_PREFIX)
    assert times.by_label == {"dlcprof:0:1": 4.0}
    assert times.unattributed_us == 0.0  # a replay is not "launched outside"
    assert times.replayed_us == {
        "triton_poi_fused_sin_0": 4.0,
        "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32": 60.0,
    }
    assert times.replayed_n["triton_poi_fused_sin_0"] == 2
    assert times.total_us == 68.0
    (note,) = P.replay_notes(times, calls=2)
    assert note.startswith("32.0 µs of device time per call ran in CUDA-graph replays")
    assert "library kernel" in note and "untimed" in note


# --- replays per call (issue 24 #10) -----------------------------------------------------------


def test_replays_are_counted_per_call_not_per_partition():
    """[torch 2.11/2.13 cudagraph_trees] each partition is a function of its own
    (node.wrapped_function.id): one call records and replays each of them."""

    class CUDAGraphTreeManager:
        compile_id = "0/0"

        def record_function(self, new_inputs, function_id):
            pass

        def execute_node(self, node, new_inputs):
            pass

    sink = ListEmitter()
    probe = C.CudagraphProbe(sink, "r", ProbeNotes(sink, "r"))
    probe._wrap_trees(types.SimpleNamespace(CUDAGraphTreeManager=CUDAGraphTreeManager))
    m = CUDAGraphTreeManager()
    fids = [types.SimpleNamespace(id=i) for i in range(3)]  # three partitions
    nodes = [types.SimpleNamespace(wrapped_function=types.SimpleNamespace(id=i)) for i in range(3)]
    for fid in fids:
        m.record_function([], fid)
    for _ in range(5):  # five calls
        for node in nodes:
            m.execute_node(node, [])
    probe.uninstall()
    assert probe.counted(skips=0).per_compile == {
        "0/0": {"recordings": 1, "rerecordings": 0, "replays": 5}
    }


# --- coordinate-descent tuning (issue 24 #4) ---------------------------------------------------


def test_coordinate_descent_tuning_counts_as_autotuning():
    """[torch 2.11/2.13 triton_heuristics] CachingAutotuner.run: autotune_to_one_config
    (benchmark_all_configs, when several configs) then, with coordinate_descent_tuning
    on (both max-autotune modes), coordinate_descent_tuning: two dynamo_timed phases."""
    name = "CachingAutotuner.coordinate_descent_tuning"
    assert fp.stage_of(name) is fp.AUTOTUNE
    events = [
        run_started(
            target="x",
            workload="x",
            mode="max-autotune",
            device="cuda",
            device_name="x",
            size="small",
            iters=3,
            torch_version="2.11",
            freezing=False,
        ),
        ev.PhaseEnded(
            run_id="r",
            compile_id="0/0",
            name="CachingAutotuner.benchmark_all_configs",
            thread=1,
            start_t=0.0,
            duration_s=0.25,
        ),
        ev.PhaseEnded(
            run_id="r", compile_id="0/0", name=name, thread=1, start_t=0.3, duration_s=0.5
        ),
        ev.PhaseEnded(
            run_id="r", compile_id="0/0", name=name, thread=1, start_t=0.9, duration_s=0.5
        ),
    ]
    a = fm.autotune(Session.from_events(events).latest_run)
    assert a.runtime_triton_s == pytest.approx(1.25) and a.runtime_kernels == 2


# --- copy bandwidth (issue 24 #6) -------------------------------------------------------------


class _CountingTimer(bench.Timer):
    """Our own logic's test: which timer calls the copy measurement makes."""

    def __init__(self, device: str) -> None:
        super().__init__(device)
        self.windows: list[int] = []

    def per_call_ms(self, fn, args, iters, sink):
        self.windows.append(iters)
        return 0.125

    def one_call_s(self, fn, args, sink):
        self.windows.append(1)
        return 0.0002


def test_gpu_copy_bandwidth_times_ten_copies_between_cuda_events():
    timer = _CountingTimer("cuda")
    s = P.copy_seconds(lambda: None, timer)
    assert timer.windows[0] == 1  # the first touch, untimed
    assert timer.windows[1:] == [P.COPY_CALLS] * 3 and P.COPY_CALLS >= 10
    assert s == pytest.approx(0.125e-3)


# --- the re-record limit (issue 24 #12) --------------------------------------------------------


def test_the_quoted_rerecord_limit_is_torchs_default():
    torch_config = pytest.importorskip("torch._inductor.config")
    limit = torch_config.triton.cudagraph_unexpected_rerecord_limit
    assert limit == 128  # 2.11 and 2.13 alike
    notes = (REPO / "docs" / "torch-notes.md").read_text()
    assert f"re-recording limit (={limit})" in notes and "(=50)" not in notes


# --- gpu_monitor_check.py's child (issue 24 #7) ------------------------------------------------


def _monitor_check() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location(
        "gpu_monitor_check", REPO / "scripts" / "gpu_monitor_check.py"
    )
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_monitor_check_child_times_out_silent_and_never_stalls_on_stderr(tmp_path):
    run_child = _monitor_check().run_child
    lines: list[str] = []
    # Silent for 60 s, then a mark: the mark says it ran out its sleep, the
    # timeout's kill having missed it (not how long the machine took).
    woke = tmp_path / "woke"
    silent = [sys.executable, "-c", f"import time; time.sleep(60); open({str(woke)!r}, 'w')"]
    assert run_child(silent, {}, tmp_path / "a.err", 1.0, lambda pid: None, lines.append) is None
    assert not woke.exists(), "the child was not killed at the timeout: it exited later"
    # 4 MB on stderr (a pipe holds 64 KB) and then a line on stdout.
    loud = [
        sys.executable,
        "-c",
        "import sys; sys.stderr.write('x' * 4_000_000); sys.stderr.flush(); print('{}')",
    ]
    code = run_child(loud, {}, tmp_path / "b.err", 60.0, lambda pid: None, lines.append)
    assert code == 0 and lines == ["{}\n"]
    assert (tmp_path / "b.err").stat().st_size == 4_000_000
