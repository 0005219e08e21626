"""figures.modes on event streams written here (a unit test of dlcprof's own
logic; the real runs are in tests/e2e/test_modes.py), and the GPU-only parsing on
strings written from torch 2.13's source, marked "[from torch's source]"."""

from __future__ import annotations

import dataclasses

import pytest
from helpers.events import run_started

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import modes as fm
from dlcprof.session import Session


def started(
    run_id: str,
    mode: str,
    device: str = "cpu",
    freezing: bool = False,
    target: str = "gelu-mlp",
    backend: str = "inductor",
) -> ev.RunStarted:
    return run_started(
        run_id=run_id,
        target=target,
        workload=target,
        mode=mode,
        backend=backend,
        device=device,
        device_name="x",
        size="small",
        iters=3,
        torch_version="2.13",
        freezing=freezing,
    )


def compiled(
    run_id: str, cache: str = "miss", autotune_us: int | None = None
) -> ev.CompileFinished:
    metrics = {} if autotune_us is None else {"compile_time_autotune_time_us": autotune_us}
    return ev.CompileFinished(
        run_id=run_id,
        compile_id="0/0",
        wall_s=2.0,
        start_t=0.0,
        is_backward=False,
        recompile_reason=None,
        fail_type=None,
        fail_reason=None,
        graph_op_count=3,
        guard_count=4,
        cache=cache,
        metrics=metrics,
    )


def bench(run_id: str, compiled_ms: float, spread: float = 0.01) -> ev.BenchmarkMeasured:
    return ev.BenchmarkMeasured(
        run_id=run_id,
        eager_ms=2.0,
        compiled_ms=compiled_ms,
        eager_spread_ms=0.01,
        compiled_spread_ms=spread,
        reps=3,
        iters=3,
        warmup=5,
        compile_s=2.5,
        threads=1,
        load_avg=[0.1],
        timer="perf_counter",
    )


def finished(run_id: str) -> ev.RunFinished:
    return ev.RunFinished(run_id=run_id, status="ok", wall_s=5.0)


def tuned(run_id: str, cached: bool = False) -> ev.OpAutotuned:
    return ev.OpAutotuned(
        run_id=run_id,
        compile_id="0/0",
        op="packed_linear",
        shapes=["4x256", "1024x256"],
        dtypes=["float32", "float32"],
        choices=[
            {"name": "cpp_CppMicroGemmFP32Vec_0", "ms": 0.0147, "description": ""},
            {"name": "_mkl_linear", "ms": 0.0693, "description": ""},
        ],
        precompile_s=0.001,
        benchmark_s=None if cached else 3.79,
        cached=cached,
    )


def kernel(run_id: str, name: str) -> ev.KernelGenerated:
    return ev.KernelGenerated(
        run_id=run_id,
        compile_id="0/0",
        name=name,
        kind="pointwise",
        fused_ops=["aten.sin"] if "fused" in name else [],
        source="",
        source_lines=[],
        order=0,
    )


def run_of(*events: ev.Event):
    return Session.from_events(list(events)).latest_run


# --- autotuning -------------------------------------------------------------------------


def test_an_autotuned_op_states_its_choices_winner_and_seconds():
    a = fm.autotune(
        run_of(
            started("r", "max-autotune", freezing=True),
            tuned("r"),
            compiled("r", autotune_us=3_791_000),
            finished("r"),
        )
    )
    (op,) = a.ops
    assert op.winner is not None and op.winner.name == "cpp_CppMicroGemmFP32Vec_0"
    assert [c.name for c in op.choices] == ["cpp_CppMicroGemmFP32Vec_0", "_mkl_linear"]
    assert a.seconds == pytest.approx(3.791) and a.torch_seconds == pytest.approx(3.791)
    assert a.why_none is None and a.line == "1 op autotuned in 3.79 s"


def test_cached_timings_say_nothing_was_benchmarked():
    a = fm.autotune(run_of(started("r", "max-autotune", freezing=True), tuned("r", cached=True)))
    assert a.all_cached and fm.AUTOTUNE_CACHED in a.line


@pytest.mark.parametrize(
    ("events", "why"),
    [
        ([started("r", "default")], "mode default does not autotune (the max-autotune modes do)"),
        ([started("r", "max-autotune", backend="aot_eager")], "backend aot_eager does not run"),
        ([started("r", "max-autotune"), compiled("r"), finished("r")], fm.CPU_NEEDS_FREEZING),
        (
            [
                started("r", "max-autotune"),
                compiled("r"),
                kernel("r", "extern_kernels.addmm"),
                finished("r"),
            ],
            fm.CPU_NEEDS_FREEZING,
        ),
        # No matmul to choose for: the freezing advice would be untrue (issue 20, 6).
        (
            [
                started("r", "max-autotune"),
                compiled("r"),
                kernel("r", "cpp_fused_sin_0"),
                finished("r"),
            ],
            fm.NO_TUNABLE_OPS,
        ),
        (
            [started("r", "max-autotune", freezing=True), compiled("r"), finished("r")],
            fm.NO_TUNABLE_OPS,
        ),
        (
            [
                started("r", "max-autotune", device="cuda"),
                compiled("r", cache="hit"),
                finished("r"),
            ],
            fm.FROM_FX_CACHE,
        ),
        ([started("r", "max-autotune")], "not compiled yet"),
        (
            [
                started("r", "max-autotune"),
                ev.ProbeUnavailable(run_id="r", probe="autotune", reason="add_feedback_saver gone"),
            ],
            "add_feedback_saver gone",
        ),
    ],
)
def test_nothing_autotuned_always_says_why(events, why):
    a = fm.autotune(run_of(*events))
    assert not a.ops and a.why_none is not None and a.why_none.startswith(why)
    assert a.line == fm.nothing_autotuned(a.why_none)


def test_runtime_triton_autotuning_counts_toward_the_cost():
    """[from torch's source] CachingAutotuner.benchmark_all_configs is timed by
    dynamo_timed with log_pt2_compile_event=True: a chromium phase of that name."""
    p = ev.PhaseEnded(
        run_id="r",
        compile_id="0/0",
        name=fm.RUNTIME_TRITON_PHASES[0],
        thread=1,
        start_t=0.0,
        duration_s=0.25,
    )
    a = fm.autotune(run_of(started("r", "max-autotune", device="cuda"), p, tuned("r")))
    assert a.runtime_kernels == 1 and a.seconds == pytest.approx(3.791 + 0.25)
    assert "1 Triton kernel at their first call" in a.line


def test_triton_template_configs_read_as_tiles():
    """[from torch's source] TritonTemplate.generate: extra = "-".join(f"{k}={repr(v)}"
    for sorted kwargs) + num_stages/num_warps, then .strip("-").replace("-", ", ")."""
    kwargs = {
        "ACC_TYPE": "tl.float32",
        "ALLOW_TF32": False,
        "BLOCK_K": 32,
        "BLOCK_M": 64,
        "BLOCK_N": 128,
        "EVEN_K": True,
        "GROUP_M": 8,
        "USE_FAST_ACCUM": False,
    }
    extra = "-".join(f"{k}={v!r}" for k, v in sorted(kwargs.items()))
    description = f"{extra}-num_stages=3-num_warps=4-".strip("-").replace("-", ", ")
    cfg = fm.triton_config(description)
    assert cfg["BLOCK_M"] == "64" and cfg["ACC_TYPE"] == "tl.float32" and cfg["num_warps"] == "4"
    assert fm.config_label(description) == "64×128×32 tile, 3 stages, 4 warps"
    assert fm.config_label("") == ""  # a C++ template or an extern kernel
    assert fm.config_label("k_split=4") == "k_split=4"  # decompose-k: as torch says it


# --- CUDA graphs ------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("message", "short"),
    [
        # cudagraph_utils.format_default_skip_message / check_multiple_devices_or_any_cpu_nodes
        ("skipping cudagraphs due to cpu device (arg0_1)", "cpu device (arg0_1)"),
        ("skipping cudagraphs due to multiple devices: ", "multiple devices"),
        # output_code.post_compile logs a cached graph's stored reason with the prefix again
        (
            "skipping cudagraphs due to skipping cudagraphs due to mutated inputs (1 instances). "
            'Found from : \n   File "m.py", line 3, in forward',
            "mutated inputs (1 instances)",
        ),
        # compile_fx: an op CUDA graphs cannot capture
        (
            "disabling cudagraphs due to incompatible op aten._local_scalar_dense.default Found "
            'from \n File "m.py", line 9',
            "incompatible op aten._local_scalar_dense.default",
        ),
        # cudagraph_trees: the re-recording limit, at run time
        (
            "skipping cudagraph due to function 0 exceeding max re-recording limit (=128) on "
            "cudagraph node 3 due to static input data pointer changed.",
            "function 0 exceeding max re-recording limit (=128) on cudagraph node 3 due to static "
            "input data pointer changed",
        ),
    ],
)
def test_skip_messages_from_torchs_source_read_short(message, short):
    """[from torch's source] the skip messages torch 2.13 writes."""
    assert fm.skip_reason(message) == short


def test_cudagraph_verdicts():
    cpu = run_of(
        started("r", "reduce-overhead"),
        compiled("r"),
        ev.CudagraphDecided(
            run_id="r",
            compile_id="0/0",
            graph="inference",
            graphed=False,
            reason="skipping cudagraphs due to multiple devices: ",
        ),
        finished("r"),
    )
    cg = fm.cudagraphs(cpu)
    assert cg.verdict == "no" and not cg.counted
    assert cg.line == "no: the graph runs on the CPU (torch: multiple devices)"
    assert fm.cudagraphs(run_of(started("r", "default"))).line == "off (not used by this mode)"
    assert fm.cudagraphs(run_of(started("r", "max-autotune"))).verdict is None  # not yet


def test_gpu_graphs_show_recordings_and_replays():
    """[from torch's source] a GPU run: one forward graphed, one backward skipped."""
    run = run_of(
        started("r", "reduce-overhead", device="cuda"),
        ev.CudagraphDecided(
            run_id="r", compile_id="0/0", graph="forward", graphed=True, reason=None
        ),
        ev.CudagraphDecided(
            run_id="r",
            compile_id="0/0",
            graph="backward",
            graphed=False,
            reason="skipping cudagraphs due to mutated inputs (1 instances)",
        ),
        ev.CudagraphsCounted(
            run_id="r",
            skips=1,
            per_compile={"0/0": {"recordings": 2, "rerecordings": 1, "replays": 40}},
        ),
    )
    cg = fm.cudagraphs(run)
    assert cg.counted and (cg.recordings, cg.rerecordings, cg.replays) == (2, 1, 40)
    assert cg.verdict == "partly (1 of 2 graphs)"
    assert cg.line == "partly (1 of 2 graphs): mutated inputs (1 instances)"


# --- every mode side by side --------------------------------------------------------------


def _modes_session(compiled_ms: dict[str, float]) -> Session:
    events: list[ev.Event] = []
    for i, (mode, ms) in enumerate(compiled_ms.items()):
        rid = f"r{i}"
        events += [started(rid, mode), compiled(rid), bench(rid, ms), finished(rid)]
    # Another workload, one mode only: no table of its own.
    events += [started("x", "default", target="tiny-ops"), finished("x")]
    return Session.from_events(events)


def test_one_table_per_workload_in_mode_order_with_the_noise_verdict():
    session = _modes_session({"max-autotune": 0.5, "default": 1.0, "reduce-overhead": 1.005})
    (table,) = fm.mode_tables(session)
    assert [r.mode for r in table.rows] == ["default", "reduce-overhead", "max-autotune"]
    words = {r.mode: r.words() for r in table.rows}
    vs = fm.COLUMNS.index("vs default")
    assert words["default"][vs] == "—"
    assert words["reduce-overhead"][vs] == text.NO_DIFFERENCE  # inside the spread
    assert words["max-autotune"][vs] == "2.00x faster"
    assert words["max-autotune"][1] == "2.50 s (nothing autotuned)"
    assert words["default"][1] == "2.50 s"
    assert fm.WARM_CACHE_ORDER in table.notes
    assert any(n.startswith("max-autotune: nothing autotuned") for n in table.notes)
    assert fm.mode_table(session, session.runs["x"]) is None
    mine = fm.mode_table(session, session.runs["r1"])
    assert mine is not None and [r.run for r in mine.rows] == [r.run for r in table.rows]


def test_no_faster_or_slower_when_eager_itself_drifted():
    """Issue 20, 6: eager 1.27 ms in one worker, 2.27 ms in another: the modes'
    latencies differ because the machine did, not the mode."""
    session = _modes_session({"default": 1.0, "max-autotune": 1.4})
    b = session.runs["r1"].benchmark
    assert b is not None
    session.runs["r1"].benchmark = dataclasses.replace(b, eager_ms=3.2)
    (table,) = fm.mode_tables(session)
    vs = fm.COLUMNS.index("vs default")
    said = table.rows[1].words()[vs]
    assert "faster" not in said and "slower" not in said
    assert said == fm.eager_drifted(2.0, 3.2)


def test_a_split_benchmark_reads_as_one_statement_in_the_modes_table():
    """Issue 20, 5 and 22: repetitions in two clusters state both speedups and
    no break-even, in the modes table as in the benchmark, and the JSON states
    no median of the mix."""
    from dlcprof.figures import benchmark as fb
    from dlcprof.report.benchmark import benchmark_block
    from dlcprof.report.schema import benchmark_dict

    session = _modes_session({"default": 1.0, "reduce-overhead": 0.9})
    run = session.runs["r1"]
    assert run.benchmark is not None
    run.benchmark = dataclasses.replace(
        run.benchmark, eager_reps_ms=[2.0] * 3, compiled_reps_ms=[1.0, 1.0, 1.01, 2.6, 2.6, 2.62]
    )
    s = fb.run_speed(run)
    assert s is not None and len(s.modes) == 2 and s.verdict == fb.MIXED
    row = fm.mode_table(session, run).rows[1].words()
    cols = fm.COLUMNS
    assert row[cols.index("speedup")] == fb.speedup_text(s)
    assert row[cols.index("break-even")] == fb.break_even_text(s)
    assert text.TWO_CLUSTERS in row[cols.index("speedup")]
    block = benchmark_block(run)
    assert block is not None and benchmark_dict(block)["speedup"] is None


def test_the_latest_run_of_a_mode_is_the_one_compared():
    session = _modes_session({"default": 1.0, "max-autotune": 0.9})
    again = [started("r9", "max-autotune"), compiled("r9"), bench("r9", 0.4), finished("r9")]
    for e in again:
        session.apply(e)
    (table,) = fm.mode_tables(session)
    assert [r.run.run_id for r in table.rows] == ["r0", "r9"]


def test_autotune_phases_have_a_stage_of_their_own():
    from dlcprof.figures import phases as fp

    for name in (
        "packed_linear_template_autotuning",
        "mm_template_precompiling",
        *fm.RUNTIME_TRITON_PHASES,
    ):
        assert fp.stage_of(name) is fp.AUTOTUNE


def test_a_skip_at_run_time_is_not_a_yes():
    """[from torch's source] cudagraph_trees: the re-recording limit, logged at run time."""
    run = run_of(
        started("r", "reduce-overhead", device="cuda"),
        ev.CudagraphDecided(
            run_id="r", compile_id="0/0", graph="inference", graphed=True, reason=None
        ),
        ev.CudagraphSkipped(
            run_id="r",
            compile_id="0/0",
            reason="skipping cudagraph due to "
            "function 0 exceeding max re-recording limit (=128) on cudagraph "
            "node 1 due to static input data pointer changed.",
        ),
    )
    cg = fm.cudagraphs(run)
    assert cg.verdict == fm.SKIPPED_AT_RUN_TIME and "re-recording limit" in cg.line
