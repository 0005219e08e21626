"""``dlcprof paper``: the plan, the findings read back from recorded real runs,
and (slow) the command itself, end to end."""

from __future__ import annotations

import dataclasses
import json
import statistics

import pytest
from helpers.events import run_started
from helpers.paper import BENCHMARKS, FRESH, SWEEPS, paper_events
from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof import text
from dlcprof.cli import main
from dlcprof.exit_codes import EXIT_USAGE
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import graph_kind as fgk
from dlcprof.figures import paper as fpa
from dlcprof.figures import paper_tables as fpt
from dlcprof.figures import recompiles as fr
from dlcprof.paper import QUICK_WORKLOADS, PlanError, make_plan, quick_sizes
from dlcprof.report.load import load_session
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import build_report
from dlcprof.session import Session
from dlcprof.workloads import bundled_names


def findings(events: list[ev.Event]) -> fpa.Findings:
    f = fpa.findings(Session.from_events(events))
    assert f is not None
    return f


def row(f: fpa.Findings, label: str) -> str:
    return dict((r[0], r[2]) for r in fpt.summary_rows(f))[label]


# --- the plan ----------------------------------------------------------------------


def test_quick_plan_runs_one_of_each_kind_one_fresh_compile_and_two_sweeps():
    p = make_plan(quick=True, device="cpu")
    targets = [(s.target, s.cache, s.sweep or bool(s.shapes), s.dynamic) for s in p.runs]
    assert targets == [
        *((t, "warm", False, "auto") for t in QUICK_WORKLOADS),
        ("pointwise-epilogue", "fresh", False, "auto"),
        ("variable-length", "fresh", True, "false"),
        ("variable-length", "fresh", True, "true"),
    ]
    sweeps = p.runs[-2:]
    assert all(not s.benchmark and s.shapes == [32, 64, 160, 256] for s in sweeps)
    assert all(s.device == "cpu" for s in p.runs)
    assert p.event.fresh == ["pointwise-epilogue"] and p.event.sizes == [32, 64, 160, 256]
    assert fpa.planned_runs(p.event) == len(p.runs)


def test_full_plan_benchmarks_and_compiles_fresh_every_bundled_workload():
    p = make_plan(quick=False, size="small")
    names = bundled_names()
    assert p.event.workloads == names == p.event.fresh
    assert len(p.runs) == 2 * len(names) + 2
    # --size small sweeps the workload's SMALL_SIZES, all of them.
    assert p.runs[-1].shapes == [4, 6, 8] and p.runs[-1].size == "small"


def test_plan_rejects_bad_input_in_one_line():
    for kwargs, words in (
        ({"workloads": ["nope"]}, "unknown workload 'nope'"),
        ({"sweep": "tiny-ops"}, "tiny-ops has no inputs_for"),
    ):
        with pytest.raises(PlanError) as e:
            make_plan(quick=True, **kwargs)
        assert words in str(e.value) and "\n" not in str(e.value)


def test_quick_sizes_spread_over_the_sizes_first_and_last_included():
    assert quick_sizes([32, 48, 64, 96, 128, 160, 192, 256]) == [32, 64, 160, 256]
    assert quick_sizes([4, 6, 8]) == [4, 6, 8]


@pytest.mark.parametrize(
    ("argv", "words"),
    [
        (["--workloads", "nope"], "unknown workload 'nope'"),
        (["--device", "tpu"], "invalid --device 'tpu'"),
        (["--size", "huge"], "invalid --size 'huge'"),
        (["--sweep-workload", "graph-breaks"], "graph-breaks has no inputs_for"),
        (["--workloads", ","], "--workloads names no workload"),
    ],
)
def test_cli_bad_input_is_one_line_and_exit_2(argv, words, capsys):
    assert main(["paper", *argv]) == EXIT_USAGE
    err = capsys.readouterr().err
    assert words in err and err.count("\n") == 1


# --- the findings, from recorded real runs ------------------------------------------


def test_each_workload_is_judged_from_the_kernels_it_compiled():
    f = findings(paper_events())
    kinds = {w.name: w.character for w in f.workloads}
    assert {n: c.kind for n, c in kinds.items() if c} == {
        "pointwise-chain": fgk.FUSION_FRIENDLY,
        "gelu-mlp": fgk.GEMM_BOUND,
        "tiny-ops": fgk.OVERHEAD_BOUND,
    }
    # The evidence is the runs' own: gelu-mlp's two addmm library calls beside
    # one fused GELU; tiny-ops' eager time per graph op.
    gelu = next(w for w in f.workloads if w.name == "gelu-mlp").run
    assert [k.kind for k in gelu.kernels].count("extern") == 2 and len(gelu.kernels) == 3
    assert "library calls (addmm ×2) are 2 of 3 kernels" in kinds["gelu-mlp"].evidence
    tiny = next(w for w in f.workloads if w.name == "tiny-ops").run
    ops = sum(c.record.graph_op_count for c in tiny.compiles.values())
    per_op = tiny.benchmark.eager_ms * 1e3 / ops
    assert per_op < fgk.OVERHEAD_US_PER_OP
    assert kinds["tiny-ops"].evidence == fgk.overhead_evidence(ops, per_op, fgk.OVERHEAD_US_PER_OP)
    chain = next(w for w in f.workloads if w.name == "pointwise-chain").run
    (compiled,) = chain.compiles.values()
    assert len(chain.kernels) == 1 and kinds["pointwise-chain"].evidence == (
        fgk.fusion_evidence(compiled.record.graph_op_count, 1, 0)
    )
    assert kinds["pointwise-chain"].evidence.endswith("compiled into 1 fused kernel")


def test_per_kernel_times_decide_where_a_run_has_them():
    """A profiling stage's times (the KernelsProfiled event's dicts) replace the
    kernel count: library kernels at a minority of the time are no GEMM-bound
    graph, and the fusion gain is the fused ops' eager time over their kernels'."""
    session = Session.from_events(paper_events())
    f = fpa.findings(session)
    gelu = next(w for w in f.workloads if w.name == "gelu-mlp").run
    timed = []
    for k in gelu.kernels:
        library = k.kind == "extern"
        timed.append(
            {
                "compile_id": k.compile_id,
                "graph": k.graph,
                "name": k.name,
                "order": k.order,
                "time_ms": 1.0 if library else 6.0,
                "eager_ms": None if library else 18.0,
            }
        )
    session.apply(
        ev.KernelsProfiled(
            run_id=gelu.run_id, method="stand-in", calls=1, wall_s=0.0, kernels=timed
        )
    )
    times = fgk.kernel_times(gelu)
    assert times is not None and times.library_share == pytest.approx(2 / 8)
    assert times.fusion_gain == pytest.approx(3.0)
    c = fgk.character(gelu)
    assert c is not None and c.kind == fgk.FUSION_FRIENDLY
    cells = dict(
        zip(fpt.WORKLOAD_COLUMNS, fpt.workload_rows(fpa.findings(session))[1], strict=True)
    )
    assert cells["fusion gain"] == "3.00x"
    # Without times, the count decides and the gain says why it is n/a.
    assert cells["graph"] == fgk.FUSION_FRIENDLY
    other = dict(zip(fpt.WORKLOAD_COLUMNS, fpt.workload_rows(f)[0], strict=True))
    assert other["fusion gain"] == text.na(fgk.NO_KERNEL_TIMES)


def test_a_fusion_gain_that_cannot_be_known_says_why():
    """A fused kernel whose ops had no eager time (a backward's, say) leaves the
    run's fusion gain n/a with that kernel's reason; no fused kernel at all, too."""
    session = Session.from_events(paper_events())
    gelu = next(w for w in fpa.findings(session).workloads if w.name == "gelu-mlp").run
    why = "the backward's ops are not replayed eagerly"
    timed = [
        {
            "compile_id": k.compile_id,
            "graph": k.graph,
            "name": k.name,
            "order": k.order,
            "time_ms": 1.0,
            "eager_ms": None,
            "why": {"eager_ms": why},
        }
        for k in gelu.kernels
    ]
    session.apply(
        ev.KernelsProfiled(
            run_id=gelu.run_id, method="stand-in", calls=1, wall_s=0.0, kernels=timed
        )
    )
    cells = dict(
        zip(fpt.WORKLOAD_COLUMNS, fpt.workload_rows(fpa.findings(session))[1], strict=True)
    )
    assert cells["fusion gain"] == text.na(why)
    assert fgk.KernelTimes(1.0, 0.0, None).gain_why == fgk.NO_FUSED_KERNEL


def test_the_findings_table_puts_the_paper_beside_the_runs_figures():
    session = Session.from_events(paper_events())
    f = fpa.findings(session)
    rows = fpt.summary_rows(f)
    assert [r[1] for r in rows] == [
        fpt.PAPER_BEST,
        fpt.PAPER_LITTLE,
        fpt.PAPER_BREAK_EVEN,
        fpt.PAPER_BREAK_EVEN,
        fpt.PAPER_TRANSITIONS,
        fpt.PAPER_STEADY,
    ]
    assert "8.21x" in rows[0][1] and "thousands" in rows[2][1] and "−70%" in rows[4][1]

    # Finding 1: the best is the largest measurable speedup, both allocator figures stated.
    speeds = {w.name: fa.contrast(w.run) for w in f.workloads}
    best = max(speeds, key=lambda n: speeds[n].default.speedup)
    a = speeds[best]
    assert row(f, fpt.FINDING_BEST) == fpt.best_speedup(
        best, fb.speedup_text(a.default), fb.speedup_text(a.steady)
    )
    # gelu-mlp gained little (1.14x, under 1.5x): named with its kind.
    assert speeds["gelu-mlp"].default.speedup < fpa.LITTLE
    assert row(f, fpt.FINDING_LITTLE) == fpt.gained_little(
        "gelu-mlp", fb.speedup_text(speeds["gelu-mlp"].default), fgk.GEMM_BOUND
    )

    # Finding 2: every break-even = compile s / saving per call, cluster by cluster.
    values = []
    for a in speeds.values():
        for m in a.default.modes or (a.default,):
            values.append(m.compile_s / ((m.eager_ms - m.compiled_ms) / 1e3))
    warm = row(f, fpt.FINDING_BREAK_EVEN)
    assert warm == fpt.break_even_span(min(values), statistics.median(values), max(values), 0, 3)
    # The fresh compile's seconds over the warm run's saving per call.
    chain = next(w for w in f.workloads if w.name == "pointwise-chain")
    fresh_b, warm_b = chain.fresh_run.benchmark, chain.run.benchmark
    assert fresh_b.compile_s > warm_b.compile_s  # a fresh cache compiles for real
    runs = fresh_b.compile_s / ((warm_b.eager_ms - warm_b.compiled_ms) / 1e3)
    fresh = row(f, fpt.FINDING_FRESH)
    assert fresh.startswith(text.runs(runs)) and "on a fresh cache" in fresh

    # Finding 3: the same pair and figures as the recompiles pane's.
    (pair,) = fr.sweep_pairs(session)
    assert pair.reduction is not None and pair.reduction > 0
    assert row(f, fpt.FINDING_TRANSITIONS).startswith(fpt.change(-pair.reduction) + ":")
    assert fpt.change(-pair.reduction).startswith("−")
    size, s_ms, d_ms = pair.steady
    assert row(f, fpt.FINDING_STEADY).startswith(f"{text.speedup(d_ms / s_ms)} static's")
    assert str(size) in row(f, fpt.FINDING_STEADY)


def test_rows_read_n_a_with_the_reason_until_their_runs_ran():
    # Only the first benchmark ran so far, and a second run is live.
    events = paper_events(BENCHMARKS[:1])
    live = run_started(
        run_id="live1",
        target="gelu-mlp",
        workload="gelu-mlp",
        torch_version="2.13",
        t=events[-1].t + 1,
    )
    f = findings([*events, live])
    cells = {w.name: w for w in f.workloads}
    assert cells["gelu-mlp"].why == "running"
    assert cells["tiny-ops"].why == "waiting its turn"
    assert row(f, fpt.FINDING_TRANSITIONS) == text.na("waiting its turn")
    # The live run was cancelled: what never ran says so.
    exited = ev.WorkerExited(
        returncode=-15, signal="SIGTERM", message="cancelled", cancelled=True, t=live.t + 1
    )
    f = findings([*events, live, exited])
    cells = {w.name: w for w in f.workloads}
    assert cells["gelu-mlp"].why == "cancelled"
    assert cells["tiny-ops"].why == "not run: the paper run cancelled"
    assert fpt.workload_rows(f)[2][2] == text.na("not run: the paper run cancelled")


def test_a_sweep_that_failed_says_so_and_the_rest_stand():
    events = paper_events(BENCHMARKS + FRESH + SWEEPS)
    # The static sweep's worker failed before its SweepFinished.
    static = next(
        e.run_id
        for e in events
        if isinstance(e, ev.RunStarted) and e.sweep and e.dynamic == "false"
    )
    cut = []
    for e in events:
        if getattr(e, "run_id", None) == static and isinstance(e, ev.SweepFinished):
            continue
        if getattr(e, "run_id", None) == static and isinstance(e, ev.RunFinished):
            e = dataclasses.replace(e, status="error")
        cut.append(e)
    f = findings(cut)
    why = text.na(fpa.sweep_ended("false", "error"))
    assert row(f, fpt.FINDING_TRANSITIONS) == why == row(f, fpt.FINDING_STEADY)
    assert not row(f, fpt.FINDING_BEST).startswith(text.NA)


def test_runs_before_the_plan_are_not_the_papers():
    earlier = load_fixture("paper/gelu_mlp")
    events = paper_events(BENCHMARKS[:1])
    # A gelu-mlp run of the same session, made before `dlcprof paper` started.
    shifted = [dataclasses.replace(e, t=events[0].t - 10) for e in earlier]
    f = findings([*shifted, *events])
    gelu = next(w for w in f.workloads if w.name == "gelu-mlp")
    assert gelu.run is None and gelu.why == "not run"


def test_a_session_without_a_plan_has_no_findings():
    assert fpa.findings(Session.from_events(load_fixture("pointwise_chain"))) is None


def test_the_report_states_the_findings_and_replays_them(tmp_path):
    from dlcprof.report.folder import save_session

    session = Session.from_events(paper_events(BENCHMARKS + FRESH + SWEEPS))
    folder = save_session(session, tmp_path / "rep")
    report = json.loads((folder / "session.json").read_text())
    paper = report["paper"]
    assert paper["plan"]["sweep"] == "variable-length"
    assert [r["paper"] for r in paper["findings"]][0] == fpt.PAPER_BEST
    gelu = next(w for w in paper["workloads"] if w["workload"] == "gelu-mlp")
    assert gelu["graph"] == fgk.GEMM_BOUND and gelu["speedup"] > 1
    # A saved paper session replays with its plan: the same table.
    again = load_session(folder / "session.json")
    assert fpt.summary_rows(fpa.findings(again)) == fpt.summary_rows(fpa.findings(session))
    assert build_report(build_model(again))["paper"]["findings"] == paper["findings"]
    md = (folder / "report.md").read_text()
    assert f"## {fpt.PAPER_TITLE}" in md
