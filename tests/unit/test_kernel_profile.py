"""The kernel profiling stage: time per kernel inside the compiled call, the
eager cost of what each kernel fused, bytes and copy bandwidth.

Pure parts on payloads recorded from real runs; one real profiled run through
the worker (transformer-block, small: generated C++ kernels, extern GEMMs and
attention); one in-process compile for the adapter that must degrade.
"""

from __future__ import annotations

import json

import pytest
from helpers.events import kineto_op, run_started
from helpers.paths import FIXTURES

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import kernels as fk
from dlcprof.session import Session
from dlcprof.trace_records import kernels as K
from dlcprof.worker import launches
from dlcprof.worker import profile as P
from dlcprof.worker.probes import compiled_code as cc

TRACES = FIXTURES / "trace"

# Printed by Dynamo (the `dynamo_output_graph` payload) for layernorm-residual,
# size small, torch 2.13: copied from a real run.
DYNAMO_GRAPH = """class GraphModule(torch.nn.Module):
    def forward(self, L_x_: "f32[4, 1024][1024, 1]cpu", L_residual_: "f32[4, 1024][1024, 1]cpu", L_self_modules_norm_parameters_weight_: "f32[1024][1]cpu", L_self_modules_norm_parameters_bias_: "f32[1024][1]cpu", L_self_parameters_scale_: "f32[1024][1]cpu"):
        l_x_ = L_x_
        l_residual_ = L_residual_
        l_self_modules_norm_parameters_weight_ = L_self_modules_norm_parameters_weight_
        l_self_modules_norm_parameters_bias_ = L_self_modules_norm_parameters_bias_
        l_self_parameters_scale_ = L_self_parameters_scale_

        # File: /home/user/dlcprof/workloads/layernorm_residual.py:20 in forward, code: h = x + residual
        h: "f32[4, 1024][1024, 1]cpu" = l_x_ + l_residual_;  l_x_ = l_residual_ = None

        # File: /home/user/dlcprof/workloads/layernorm_residual.py:21 in forward, code: return self.norm(h) * self.scale, h
        layer_norm: "f32[4, 1024][1024, 1]cpu" = torch.nn.functional.layer_norm(h, (1024,), l_self_modules_norm_parameters_weight_, l_self_modules_norm_parameters_bias_, 1e-05);  l_self_modules_norm_parameters_weight_ = l_self_modules_norm_parameters_bias_ = None
        mul: "f32[4, 1024][1024, 1]cpu" = layer_norm * l_self_parameters_scale_;  layer_norm = l_self_parameters_scale_ = None
        return (mul, h)
"""  # noqa: E501


def recorded_payloads(name: str, wanted: str) -> list[str]:
    out = []
    for line in (TRACES / f"{name}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        md = rec["metadata"]
        key = next(iter(md))
        if key == "artifact":
            key = md["artifact"]["name"]
        if key == wanted:
            out.append(rec["payload"])
    return out


# --- the compiled code, instrumented (pure) ---------------------------------------------


def test_every_launch_the_kernel_probe_reads_goes_through_the_hook():
    # The training step's forward launches one C++ kernel twice and three GEMMs.
    for code in recorded_payloads("training_step", "inductor_output_code"):
        parsed = K.parse_output_code(code)
        tree, launches = cc.instrument_source(code, parsed.definitions)
        assert [(x.name, x.extern) for x in launches] == [(c.name, c.extern) for c in parsed.calls]
        rewritten = compile(tree, "<x>", "exec").co_consts  # it compiles
        assert rewritten
        src = __import__("ast").unparse(tree)
        assert src.count(f"{cc.HOOK}.launch(") == len(launches)
        assert f"{cc.HOOK}.enter(args)" in src
    forward = K.parse_output_code(recorded_payloads("training_step", "inductor_output_code")[0])
    assert [c.name for c in forward.calls].count("cpp_fused_relu_0") == 2


def test_a_wrapper_without_call_cannot_be_instrumented():
    with pytest.raises(cc.CodeUnavailable, match="no call"):
        cc.instrument_source("x = 1\n", {})


def test_the_printed_dynamo_graph_is_timed_node_by_node():
    tree, nodes, placeholders = cc.timed_forward_source(DYNAMO_GRAPH)
    assert nodes == ["h", "layer_norm", "mul"]  # the names provenance's preToPost uses
    assert [p.name for p in placeholders][:2] == ["L_x_", "L_residual_"]
    assert placeholders[0].annotation == "f32[4, 1024][1024, 1]cpu"
    src = __import__("ast").unparse(tree)
    # Each node's timing ends after the statements that free what it no longer needs.
    assert src.index("l_x_ = l_residual_ = None") < src.index(f"{cc.HOOK}.end(0")
    assert src.index(f"{cc.HOOK}.end(2") < src.index("return (mul, h)")
    with pytest.raises(cc.CodeUnavailable, match="no forward"):
        cc.timed_forward_source("class G:\n    pass\n")


def test_kernel_parameters_say_which_buffers_are_read_and_written():
    cpp = 'extern "C"  void  kernel(float* in_out_ptr0,\n const float* in_ptr0,\n float* out_ptr0,\n const int64_t ks0)\n{'  # noqa: E501
    assert launches.param_names(cpp) == ["in_out_ptr0", "in_ptr0", "out_ptr0", "ks0"]
    triton = "@triton.jit\ndef triton_poi_fused_add_0(in_out_ptr0, in_ptr0, xnumel, XBLOCK : tl.constexpr):\n    pass"  # noqa: E501
    assert launches.param_names(triton) == ["in_out_ptr0", "in_ptr0", "xnumel", "XBLOCK"]
    assert launches.param_names("") == []


def test_placeholder_annotations_check_the_inputs():
    assert P.shape_matches("f32[4, 1024][1024, 1]cpu", [4, 1024])
    assert not P.shape_matches("f32[4, 1024][1024, 1]cpu", [8, 1024])
    assert P.shape_matches("f32[s0, 1024][1024, 1]cpu", [8, 1024])  # symbolic
    assert P.shape_matches("Sym(s0)", None)
    assert not P.shape_matches("f32[4][1]cpu", None)


def test_per_launch_medians_add_up_to_the_median_repetition():
    # Two launches; a stall hits one or the other in most repetitions.
    reps = [[1.0, 2.0], [1.5, 2.0], [1.0, 2.5], [1.0, 2.0], [1.5, 2.0]]
    values, scale = launches.summing_medians(reps)
    assert sum(values) == pytest.approx(3.5)  # the median repetition, not 1.0 + 2.0
    assert values[0] / values[1] == pytest.approx(0.5) and scale == pytest.approx(3.5 / 3.0)
    assert launches.summing_medians([[1.0, 2.0], [1.0, 2.0]]) == ([1.0, 2.0], 1.0)
    assert launches.summing_medians([]) == ([], 1.0)


def test_an_ops_eager_time_goes_to_the_kernels_its_nodes_went_to():
    pre_to_post = {
        "linear": ["permute", "addmm", "view"],  # a GEMM, its output viewed by kernel 1
        "ln": ["var_mean", "sub", "mul"],  # cut in two kernels
        "flat": ["view_1"],  # a view: no kernel
    }
    post_to_kernels = {"addmm": [0], "view": [1], "var_mean": [1], "sub": [2], "mul": [2]}
    node_ms = {"linear": 10.0, "ln": 3.0, "flat": 0.5}
    # With compiled times: the GEMM's time follows the GEMM, not the view.
    split = P.split_eager(node_ms, pre_to_post, post_to_kernels, {0: 9.0, 1: 1.0, 2: 2.0})
    assert split[0] == pytest.approx(9.0)
    assert split[1] == pytest.approx(1.0 + 1.0)
    assert split[2] == pytest.approx(2.0)
    assert sum(split.values()) == pytest.approx(13.0)  # the view's 0.5 ms stays out
    # A kernel not timed: by how many of the op's nodes each kernel holds.
    split = P.split_eager(node_ms, pre_to_post, post_to_kernels, {0: 9.0})
    assert split[0] == pytest.approx(5.0) and split[2] == pytest.approx(2.0)


def test_a_library_call_takes_its_own_time_of_the_op_it_shares():
    """Issue 20, 4: a Linear 0.35 ms eager, its addmm 0.30 ms compiled, the view
    of its output fused into a LayerNorm kernel of 0.60 ms. In proportion to
    compiled time the addmm got 0.117 ms (a "gain" of 0.39x) and the LayerNorm
    kernel the Linear's time; eager runs the same addmm, so it keeps its own
    0.30 ms and only the rest goes to the kernel that fused the view."""
    pre_to_post = {"linear": ["addmm", "view"], "ln": ["var_mean", "mul"]}
    post_to_kernels = {"addmm": [0], "view": [1], "var_mean": [1], "mul": [1]}
    node_ms = {"linear": 0.35, "ln": 0.5}
    times = {0: 0.30, 1: 0.60}
    split = P.split_eager(node_ms, pre_to_post, post_to_kernels, times, frozenset({0}))
    assert split[0] == pytest.approx(0.30)
    assert split[1] == pytest.approx(0.05 + 0.5)
    assert sum(split.values()) == pytest.approx(0.85)
    # Alone in its op (a bare mm), a library call takes the op's whole time.
    alone = P.split_eager({"mm": 0.2}, {"mm": ["mm"]}, {"mm": [0]}, {0: 0.3}, frozenset({0}))
    assert alone == {0: pytest.approx(0.2)}


# --- figures and words -----------------------------------------------------------------


def _kernel(name: str, order: int, kind: str = "pointwise") -> ev.KernelGenerated:
    return ev.KernelGenerated(
        run_id="r",
        compile_id="0/0",
        name=name,
        kind=kind,
        fused_ops=["aten.sin"],
        source="",
        source_lines=[],
        order=order,
        graph="inference",
    )


def _profiled_session(**profile) -> Session:
    events: list[ev.Event] = [
        run_started(size="small", torch_version="2.13"),
        _kernel("cpp_fused_a_0", 0),
        _kernel("extern_kernels.mm", 1, "extern"),
        _kernel("cpp_fused_b_1", 2),
        ev.BenchmarkMeasured(
            run_id="r",
            eager_ms=12.0,
            compiled_ms=4.0,
            eager_spread_ms=0.1,
            compiled_spread_ms=0.1,
            reps=7,
            iters=20,
            warmup=5,
            compile_s=1.0,
            threads=1,
            load_avg=[0.1, 0.1, 0.1],
            timer="perf_counter",
        ),
    ]
    kernels = [
        {
            "compile_id": "0/0",
            "graph": "inference",
            "name": "cpp_fused_a_0",
            "order": 0,
            "time_ms": 1.0,
            "spread_ms": 0.05,
            "launches": 1,
            "bytes": 8_000_000,
            "eager_ms": 3.0,
            "why": {},
        },
        {
            "compile_id": "0/0",
            "graph": "inference",
            "name": "extern_kernels.mm",
            "order": 1,
            "time_ms": 2.5,
            "spread_ms": 0.1,
            "launches": 1,
            "bytes": 4_000_000,
            "eager_ms": None,
            "why": {"eager_ms": "none of its nodes comes from a user op"},
        },
    ]
    events.append(
        ev.KernelsProfiled(
            run_id="r",
            method=launches.CPU_METHOD,
            calls=70,
            wall_s=1.5,
            kernels=kernels,
            compiled_ms=4.2,
            call_ms=4.3,
            eager_ms=12.5,
            eager_nodes_ms=11.0,
            copy_gbps=10.0,
            **profile,
        )
    )
    return Session.from_events(events)


def test_figures_join_times_to_kernels_and_word_every_gap():
    run = _profiled_session().runs["r"]
    t = fk.kernel_timings(run)
    a, mm, b = (t[fk.kernel_key(k)] for k in run.kernels)
    assert a.share == pytest.approx(1.0 / 4.2)  # of the call timed alongside
    assert a.gain == pytest.approx(3.0) and a.gbps == pytest.approx(8.0)
    assert a.bw_share == pytest.approx(0.8)
    assert mm.gain is None and mm.reason("gain") == "none of its nodes comes from a user op"
    assert b.time_ms is None and b.reason("time_ms") == "compiled after the profiling stage"
    assert b.reason("gbps") == b.reason("time_ms")
    s = fk.profile_summary(run)
    assert s is not None and s.coverage == pytest.approx(3.5 / 4.2)
    assert sum(x.share for x in t.values() if x.share) == pytest.approx(s.coverage)
    assert s.eager_coverage == pytest.approx(11.0 / 12.5)
    assert [k.name for k in fk.by_time(run.kernels, t)] == [
        "extern_kernels.mm",
        "cpp_fused_a_0",
        "cpp_fused_b_1",
    ]
    notes = text.Footnotes()
    cells = fk.timing_cells(b, notes)
    assert cells.time == "n/a¹" and cells.gain == "n/a¹"
    assert notes.lines() == ["¹ n/a: compiled after the profiling stage"]
    assert fk.timing_cells(a, notes).values() == (
        "1.00 ms",
        "24%",
        "3.00 ms",
        "3.00x",
        "8 MB",
        "8 GB/s",
        "80%",
    )
    lines = fk.summary_lines(run)
    assert lines[0].startswith("kernels 3.50 ms = 83% of the compiled call (4.20 ms")
    assert lines[1].startswith("eager ops one by one 11.0 ms = 88% of the eager call")
    assert "10 GB/s" in lines[2]


def test_no_profile_says_why_in_every_figure():
    events = [e for e in _profiled_session().events if not isinstance(e, ev.KernelsProfiled)]
    live = Session.from_events(events).runs["r"]
    assert {x.reason("time_ms") for x in fk.kernel_timings(live).values()} == {
        "measured after the benchmark"
    }
    events.append(ev.RunFinished(run_id="r", status="ok", wall_s=1.0))
    r = Session.from_events(events).runs["r"]
    t = fk.kernel_timings(r)
    assert all(x.time_ms is None for x in t.values())
    assert {x.reason("time_ms") for x in t.values()} == {"no profiling stage in this run"}
    assert fk.summary_lines(r) == ["time per kernel: n/a (no profiling stage in this run)"]


# --- the GPU path, on a trace in kineto's format ---------------------------------------

# Constructed: event shapes as kineto's ChromeTraceLogger writes them
# (libkineto/src/output_json.cpp, handleActivity: {"ph": "X", "cat": <ActivityType>,
# "name", "pid", "tid", "ts", "dur", "args"}; category names from ActivityType.cpp;
# "correlation" in the CUPTI kernel and runtime metadata), each case in one
# trace. Real ones, recorded on an H200 by scripts/gpu_check.sh, are in
# tests/fixtures/gpu/ (the test after this one).


CONSTRUCTED_TRACE = {
    "schemaVersion": 1,
    "traceEvents": [
        kineto_op("cpu_op", "aten::mm", 100.0, 6.0, 1, **{"External id": 7}),
        kineto_op("user_annotation", "dlcprof:0:0", 99.0, 9.0, 1, **{"External id": 6}),
        kineto_op("cuda_runtime", "cudaLaunchKernel", 102.0, 3.0, 1, cbid=211, correlation=501),
        kineto_op(
            "kernel",
            "sm90_xmma_gemm_f32f32_tf32f32_f32_tn_n_tilesize128x128x32",
            110.0,
            40.0,
            7,
            device=0,
            stream=7,
            correlation=501,
            grid=[8, 1, 1],
            block=[128, 1, 1],
        ),
        kineto_op("user_annotation", "dlcprof:0:1", 120.0, 5.0, 1, **{"External id": 8}),
        kineto_op("cuda_driver", "cuLaunchKernel", 121.0, 2.0, 1, cbid=307, correlation=502),
        kineto_op(
            "kernel",
            "triton_poi_fused_add_relu_1",
            151.0,
            4.5,
            7,
            device=0,
            stream=7,
            correlation=502,
            grid=[64, 1, 1],
            block=[128, 1, 1],
        ),
        kineto_op(
            "gpu_user_annotation", "dlcprof:0:1", 151.0, 4.5, 7
        ),  # device-side copy: not counted
        # Launched outside every range (an allocator memset, say).
        kineto_op("cuda_runtime", "cudaMemsetAsync", 130.0, 1.0, 1, cbid=51, correlation=503),
        kineto_op(
            "gpu_memset", "Memset (Device)", 160.0, 1.0, 7, device=0, stream=7, correlation=503
        ),
        {"ph": "s", "id": 501, "pid": 4242, "tid": 1, "ts": 102.0, "cat": "ac2g", "name": "ac2g"},
        {"name": "Record Window End", "ph": "i", "s": "g", "pid": "", "tid": "", "ts": 200.0},
    ],
}


def test_device_time_goes_to_the_range_around_each_launch():
    times = __import__("dlcprof.worker.gpu_trace", fromlist=["x"]).device_times(
        CONSTRUCTED_TRACE, launches.RANGE_PREFIX
    )
    assert times.by_label == {"dlcprof:0:0": 40.0, "dlcprof:0:1": 4.5}
    # A Triton kernel on the device is named as Inductor named it.
    assert times.names["dlcprof:0:1"] == ["triton_poi_fused_add_relu_1"]
    assert times.unattributed_us == 1.0
    assert times.total_us == 45.5


GPU_FIXTURES = FIXTURES / "gpu"
RECORDED_GPU = sorted(p for p in GPU_FIXTURES.glob("*") if (p / "trace.json").exists())


@pytest.mark.skipif(
    not RECORDED_GPU,
    reason="no GPU trace recorded yet (scripts/record_gpu_kernel_trace.py on a GPU box)",
)
@pytest.mark.parametrize("where", RECORDED_GPU, ids=lambda p: p.name)
def test_a_recorded_gpu_trace_times_every_launch(where):
    from dlcprof.worker.gpu_trace import device_times

    trace = json.loads((where / "trace.json").read_text())
    recorded = json.loads((where / "launches.json").read_text())
    times = device_times(trace, launches.RANGE_PREFIX)
    for label, info in recorded.items():
        if times.by_label.get(label, 0) == 0:
            # Only a launch CUDA graphs replay runs no range: its kernel ran by name.
            assert times.replayed_us, (label, info)
            continue
        if info["kind"] != "extern" and info["kernel"].startswith("triton_"):
            assert times.names[label] == [info["kernel"]]  # named as Inductor named it
    if not (where / "events.jsonl").exists():
        return  # scripts/gpu_check.sh keeps the trace; the events are in its session JSONs
    events = [ev.decode(line) for line in (where / "events.jsonl").read_text().splitlines()]
    run = Session.from_events(events).latest_run
    assert run is not None
    assert all(t.time_ms for t in fk.kernel_timings(run).values())
    s = fk.profile_summary(run)
    assert s is not None and s.device_busy and 0 < s.device_busy <= 1.1


def test_compare_matches_kernels_and_states_time_deltas_beyond_their_spread():
    from dlcprof.figures.compare import compare
    from dlcprof.report.html import render_compare_html
    from dlcprof.tables import compare_table as render_compare_table

    a = _profiled_session()
    events = []
    for e in a.events:
        if isinstance(e, ev.KernelsProfiled):
            kernels = [dict(d) for d in e.kernels]
            kernels[0]["time_ms"] = 1.02  # within its 0.05 ms spread
            kernels[1]["time_ms"] = 1.5  # 1 ms faster
            e = ev.KernelsProfiled(**{**e.__dict__, "kernels": kernels})
        events.append(e)
    cmp = compare(a, Session.from_events(events))
    rows = {kt.name: kt for kt in cmp.kernels.times}
    assert [kt.name for kt in cmp.kernels.times][0] == "extern_kernels.mm"  # slowest first
    assert rows["extern_kernels.mm"].verdict == "better"
    assert rows["extern_kernels.mm"].delta_text == "-1.00 ms"
    assert rows["cpp_fused_a_0"].verdict == "same"
    assert rows["cpp_fused_a_0"].delta_text == text.NO_DIFFERENCE
    assert rows["cpp_fused_b_1"].a_text == "n/a (compiled after the profiling stage)"
    console = " ".join(_console_text(render_compare_table(cmp)).split())
    assert "kernel time per compiled call" in console and "-1.00 ms" in console
    assert "Kernel time per compiled call" in render_compare_html(cmp)


def _console_text(renderable) -> str:
    from rich.console import Console

    c = Console(width=200, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    c.print(renderable)
    return c.export_text()
