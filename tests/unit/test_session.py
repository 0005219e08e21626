"""Session folding, on event streams recorded from real runs (tests/fixtures,
made by scripts/record_fixtures.py), plus the derived figures."""

from __future__ import annotations

import pytest

from dlcprof import events as ev
from dlcprof.figures.benchmark import break_even, speed
from dlcprof.figures.device import activity_spans
from dlcprof.figures.phases import nest_phases
from dlcprof.figures.recompiles import cumulative, sweep_total
from dlcprof.session import Session


def Phase(name, start_t, duration_s, thread, compile_id):  # noqa: N802 - reads like the old class
    return ev.PhaseEnded(
        run_id="r",
        compile_id=compile_id,
        name=name,
        thread=thread,
        start_t=start_t,
        duration_s=duration_s,
    )


def test_pointwise_chain_folds_into_one_compile_with_a_fused_kernel(fixture_events):
    s = Session.from_events(fixture_events("pointwise_chain"))
    run = s.latest_run
    assert run.status == "ok" and run.workload == "pointwise-chain"
    assert s.worker is not None and s.worker.torch_version.startswith("2.")
    assert list(run.compiles) == ["0/0"]
    c = run.compiles["0/0"]
    assert c.finished and c.wall_s > 0
    assert any(p.name == "bytecode_tracing" and p.duration_s > 0 for p in c.phases)
    (kernel,) = run.kernels
    assert len(kernel.fused_ops) >= 5 and kernel.kind == "pointwise"
    assert not run.open_phases  # every Begin met its End
    b = run.benchmark
    assert speed(b).speedup == pytest.approx(b.eager_ms / b.compiled_ms)


def test_static_sweep_recompiles_and_prices_each_recompile(fixture_events):
    s = Session.from_events(fixture_events("variable_length_static"))
    run = s.latest_run
    assert run.settings.dynamic == "false"
    # Every new length after the first recompiles, each for its size guard.
    assert len(run.recompiles) == len(run.sweep) - 1 >= 2
    assert all("size mismatch" in r.reason for r in run.recompiles)
    assert all(r.cost_s is not None and r.cost_s > 0 for r in run.recompiles)
    assert all(st.recompiled for st in run.sweep)
    assert cumulative(run)[-1] == pytest.approx(sweep_total(run))


def test_dynamic_sweep_compiles_less_than_static(fixture_events):
    static = Session.from_events(fixture_events("variable_length_static")).latest_run
    dynamic = Session.from_events(fixture_events("variable_length_dynamic")).latest_run
    assert len(dynamic.compiles) < len(static.compiles)
    assert dynamic.dynamic_dims and not dynamic.recompiles
    assert not any(st.recompiled for st in dynamic.sweep[1:])


def test_graph_breaks_carry_user_file_and_line(fixture_events):
    run = Session.from_events(fixture_events("graph_breaks")).latest_run
    assert len(run.graph_breaks) == 2
    for gb in run.graph_breaks:
        path, _, line = gb.location.rpartition(":")
        assert path.endswith("graph_breaks.py") and line.isdigit()
    assert len(run.compiles) >= 3  # each resume function is its own frame


def test_replaying_the_stream_twice_gives_the_same_state(fixture_events):
    events = fixture_events("variable_length_static")
    a, b = Session.from_events(events), Session.from_events(list(events))
    ra, rb = a.latest_run, b.latest_run
    assert ra.compiles.keys() == rb.compiles.keys()
    assert [k.name for k in ra.kernels] == [k.name for k in rb.kernels]
    assert ra.sweep == rb.sweep


def test_worker_death_marks_the_unfinished_run_crashed_or_cancelled(fixture_events):
    events = [e for e in fixture_events("pointwise_chain") if not isinstance(e, ev.RunFinished)]
    events = [e for e in events if not isinstance(e, ev.WorkerExited)]
    crashed = Session.from_events(
        [*events, ev.WorkerExited(returncode=-11, signal="SIGSEGV", message="died")]
    )
    assert crashed.latest_run.status == "crashed"
    cancelled = Session.from_events(
        [*events, ev.WorkerExited(returncode=-15, signal="SIGTERM", message="c", cancelled=True)]
    )
    assert cancelled.latest_run.status == "cancelled"


def test_running_phase_is_the_innermost_open_one():
    s = Session()
    s.apply(ev.PhaseStarted(run_id="r", compile_id=None, name="dynamo", thread=1, t=10.0))
    s.apply(
        ev.PhaseStarted(run_id="r", compile_id="0/0", name="inductor_compile", thread=1, t=11.0)
    )
    assert s.runs["r"].running_phase.name == "inductor_compile"


@pytest.mark.parametrize(
    ("compile_s", "eager_ms", "compiled_ms", "expected"),
    [(2.0, 3.0, 1.0, 1000.0), (1.0, 1.0, 1.0, None), (1.0, 3.24, 3.75, None)],
)
def test_break_even(compile_s, eager_ms, compiled_ms, expected):
    assert break_even(compile_s, eager_ms, compiled_ms) == expected


def test_nest_phases_depth_per_thread():
    outer = Phase("dynamo", 0.0, 10.0, 1, "0/0")
    inner = Phase("inductor_compile", 1.0, 5.0, 1, "0/0")
    leaf = Phase("Scheduler.codegen", 2.0, 1.0, 1, "0/0")
    after = Phase("build_guards", 7.0, 1.0, 1, "0/0")
    pool = Phase("compile_file", 2.5, 1.0, 2, None)
    depths = {p.name: d for p, d in nest_phases([after, leaf, pool, inner, outer])}
    assert depths == {
        "dynamo": 0,
        "inductor_compile": 1,
        "Scheduler.codegen": 2,
        "build_guards": 1,
        "compile_file": 0,
    }


def test_activity_spans_split_compiles_from_what_follows(fixture_events):
    run = Session.from_events(fixture_events("pointwise_chain")).latest_run
    (compile_span, after) = activity_spans(run)
    c = run.compiles["0/0"]
    assert compile_span == ("compile", c.start_t, c.start_t + c.wall_s)
    assert after == ("after compile", c.start_t + c.wall_s, run.finished_t)
    # The benchmark happened after the compile.
    bench = next(e for e in run_events(fixture_events("pointwise_chain"), ev.BenchmarkMeasured))
    assert after[1] < bench.t <= after[2]


def run_events(events, cls):
    return (e for e in events if isinstance(e, cls))
