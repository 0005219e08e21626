"""compare(): two sessions side by side."""

from __future__ import annotations

import re

import pytest
from helpers.events import run_started
from helpers.recorded import load_fixture
from helpers.report import (
    benchmark_session,
    full_session,
    graph_break_session,
    sweep_sessions,
)
from rich.console import Console

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import kernels as fk
from dlcprof.figures.check.baseline import beyond_noise
from dlcprof.figures.compare import CompareError, PhaseDelta, compare
from dlcprof.figures.compare_metrics import MetricDelta
from dlcprof.report.html import render_compare_html
from dlcprof.session import Session
from dlcprof.tables import compare_table as render_compare_table


def _text(renderable) -> str:
    console = Console(width=160, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_static_vs_dynamic_sweeps() -> None:
    static, dynamic = sweep_sessions()
    cmp = compare(static, dynamic)
    assert ("dynamic", "false", cmp.b_run.settings.dynamic) in cmp.settings
    # Static recompiled per shape; dynamic did not (or less): those are gone.
    assert cmp.recompiles_gone
    assert len(cmp.recompiles_gone) > len(cmp.recompiles_added)
    assert all(not re.match(r"^\d+/\d+:", r) for r in cmp.recompiles_gone)
    # Phase deltas for the phases both ran.
    names = {p.name for p in cmp.phases}
    assert names and any(p.a_s and p.b_s for p in cmp.phases)
    total = cmp.metric("compile wall")
    assert total.a is not None and total.b is not None and total.delta is not None
    sweep = cmp.metric("sweep transition cost")
    assert sweep.a is not None and sweep.b is not None
    # Over only a few shapes dynamic can cost more (its first compile is
    # dearer): the verdict follows the measured sign, whichever it is, past
    # what two runs differ by.
    moved = beyond_noise(sweep.a, sweep.b)
    assert sweep.verdict == ("same" if not moved else "better" if sweep.b < sweep.a else "worse")

    text = _text(render_compare_table(cmp))
    assert "recompile" in text and "gone" in text and "compile time by phase" in text
    html = render_compare_html(cmp)
    assert html.startswith("<!DOCTYPE html>") and "Cumulative shape-transition cost" in html
    assert "<script" not in html and "http://" not in html.replace("http://www.w3.org/2000/svg", "")


def test_compile_seconds_differ_only_past_what_two_runs_differ_by() -> None:
    """Compile seconds are one run a side: under 25% or 0.25 s apart, the same."""
    near = MetricDelta("compile wall", 10.0, 9.0, "s")
    assert near.verdict == "same" and near.delta_text == f"-1.00 s (-10%): {text.NO_DIFFERENCE}"
    assert MetricDelta("compile wall", 0.1, 0.3, "s").verdict == "same"  # 3x, but 0.2 s
    assert MetricDelta("compile wall", 10.0, 5.0, "s").verdict == "better"
    assert MetricDelta("compiled", 10.0, 9.0, "ms").verdict == "better"
    # Repetitions' medians: the same inside the wider side's spread.
    spread = MetricDelta("compiled", 10.0, 9.0, "ms", spread=1.5)
    assert spread.verdict == "same" and spread.delta_text.endswith(f": {text.NO_DIFFERENCE}")
    assert MetricDelta("compiled", 10.0, 8.0, "ms", spread=1.5).verdict == "better"
    assert PhaseDelta("inductor_compile", 1.0, 1.2).verdict == "same"
    assert PhaseDelta("inductor_compile", 1.0, 2.0).verdict == "worse"
    assert PhaseDelta("autotune", None, 0.1).verdict == "worse"  # a phase only B ran


def test_same_session_has_no_changes() -> None:
    s = benchmark_session()
    cmp = compare(s, s)
    assert not (cmp.kernels.added or cmp.kernels.removed or cmp.kernels.changed)
    assert cmp.kernels.same == len(
        {(k.name, tuple(sorted(k.fused_ops))) for k in s.latest_run.kernels}
    )
    assert not (cmp.recompiles_added or cmp.recompiles_gone or cmp.graph_breaks_added)
    assert all(p.delta == 0 for p in cmp.phases)
    assert cmp.settings == []
    assert cmp.metric("speedup").verdict == "same"


def test_kernels_and_graph_breaks_differences() -> None:
    a, b = benchmark_session(), graph_break_session()
    cmp = compare(a, b)
    assert cmp.graph_breaks_added and not cmp.graph_breaks_gone
    reason, location = cmp.graph_breaks_added[0]
    assert reason and location
    assert cmp.kernels.added or cmp.kernels.changed
    text = _text(render_compare_table(cmp))
    assert "graph break" in text


def _kernel_session(kernels: list[tuple[str, list[str]]], breaks: list[tuple[str, str]]) -> Session:
    events: list[ev.Event] = [
        run_started(target="w", workload="w", iters=1, torch_version="2.13"),
    ]
    for i, (name, ops) in enumerate(kernels):
        events.append(ev.KernelGenerated("r", "0/0", name, "pointwise", ops, "", [], i))
    for reason, loc in breaks:
        events.append(ev.GraphBroken("r", "0/0", reason, loc))
    return Session.from_events(events)


def test_kernel_matching_by_name_then_by_fused_ops() -> None:
    a = _kernel_session(
        [
            ("k_same", ["aten.sin"]),
            ("k_changed", ["aten.add"]),
            ("k_old", ["aten.mul", "aten.relu"]),
            ("k_gone", ["aten.exp"]),
        ],
        [("Data-dependent branching", "m.py:3"), ("Tensor.item()", "m.py:9")],
    )
    b = _kernel_session(
        [
            ("k_same", ["aten.sin"]),
            ("k_changed", ["aten.add", "aten.mul"]),
            ("k_new", ["aten.relu", "aten.mul"]),
            ("k_added", ["aten.tanh"]),
        ],
        [("Tensor.item()", "m.py:9"), ("print()", "m.py:12")],
    )
    cmp = compare(a, b)
    assert cmp.kernels.same == 1
    changed = {(c.a.name, c.b.name, c.how) for c in cmp.kernels.changed}
    assert changed == {
        ("k_changed", "k_changed", "fused ops changed"),
        ("k_old", "k_new", "renamed"),
    }
    assert [k.name for k in cmp.kernels.added] == ["k_added"]
    assert [k.name for k in cmp.kernels.removed] == ["k_gone"]
    assert cmp.graph_breaks_added == [("print()", "m.py:12")]
    assert cmp.graph_breaks_gone == [("Data-dependent branching", "m.py:3")]
    html = render_compare_html(cmp)
    assert "k_old" in html and "renamed" in html


def test_runs_chosen_by_index_and_id() -> None:
    s = full_session()
    ids = list(s.runs)
    assert compare(s, s, 1, 2).a_run.run_id == ids[0]
    assert compare(s, s, -1, ids[2]).b_run.run_id == ids[2]
    with pytest.raises(CompareError) as e:
        compare(s, s, 99, 1)
    assert "no run 99" in str(e.value)
    with pytest.raises(CompareError):
        compare(Session(), s)


def test_break_even_never_when_slower() -> None:
    a, b = benchmark_session(), graph_break_session()
    cmp = compare(a, b)
    be = cmp.metric("break-even")
    speed = fb.run_speed(b.latest_run)
    assert speed is not None and speed.verdict == fb.SLOWER  # as recorded
    assert be.b is None and be.b_text == text.NEVER
    assert be.a_text.endswith(" runs") and be.verdict == "worse"
    table = _text(render_compare_table(cmp))
    assert text.NEVER in table and "now never" in table and " calls" not in table


def test_break_even_not_a_number_without_a_measurable_difference() -> None:
    static, dynamic = sweep_sessions()
    cmp = compare(static, dynamic)
    sa = fb.run_speed(cmp.a_run)
    assert sa is not None and not sa.measurable  # the static recording is within its spread
    be = cmp.metric("break-even")
    assert be.a is None and be.a_text == f"n/a ({text.NO_DIFFERENCE})"
    assert be.verdict == "" and be.delta_text == "—"
    assert cmp.metric("speedup").a_text == text.speedup_verdict(sa.speedup, False)
    verdicts = next(r for r in cmp.headline() if r.name == "compiled vs eager")
    assert verdicts.a == text.NO_DIFFERENCE
    table = _text(render_compare_table(cmp))
    html = render_compare_html(cmp)
    for page in (table, html):
        assert f"n/a ({text.NO_DIFFERENCE})" in page
    # The newest failed guard, worded as every view words it.
    rc = cmp.a_run.recompiles[-1]
    from dlcprof.figures.recompiles import newest_reason

    assert str(newest_reason(rc.reason)) in table.replace("\n", " ") or any(
        str(newest_reason(rc.reason)) == newest for _, newest in cmp.recompile_changes
    )


def test_compare_html_escapes_session_strings() -> None:
    evil = "<script>alert(1)</script>"
    a = _kernel_session([(f"k{evil}", ["aten.sin"])], [(evil, f"{evil}.py:1")])
    b = _kernel_session([], [])
    html = render_compare_html(compare(a, b))
    assert "<script" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html


def test_a_cache_hit_against_a_miss_is_said_and_not_judged(fixture_events) -> None:
    """Recorded runs: the static sweep's first compile missed Inductor's graph
    cache, the dynamic one's hit it. Their compile times are not like for like."""
    a = Session.from_events(fixture_events("variable_length_static"))
    b = Session.from_events(fixture_events("variable_length_dynamic"))
    cmp = compare(a, b)
    assert cmp.cache_note.startswith("The two sides' caches differ (A: cache miss; B: cache hit)")
    compile_s = cmp.metric("compile_s (benchmark)")
    assert compile_s.a is not None and compile_s.b is not None
    assert compile_s.verdict == "" and compile_s.delta_text.endswith("(cache differs)")
    (row,) = [r for r in cmp.headline() if r.name == "compile cache"]
    assert (row.a, row.b, row.delta) == ("cache miss", "cache hit", "differs")
    table = _text(render_compare_table(cmp))
    assert "not like for like" in " ".join(table.split())
    assert "not like for like" in render_compare_html(cmp)
    # The same cache on both sides: nothing to say.
    assert compare(b, b).cache_note is None


def test_repeated_library_calls_are_timed_together() -> None:
    """Four addmm launches in one compiled call: one row "×4, total" whose time is
    the four launches' (it was the first launch's alone)."""
    s = Session.from_events(load_fixture("stacked_linears"))
    run = s.latest_run
    assert run is not None
    timings = fk.kernel_timings(run)
    launches = [timings[fk.kernel_key(k)] for k in run.kernels if k.name == "extern_kernels.addmm"]
    assert len(launches) == 4
    cmp = compare(s, s)
    row = next(kt for kt in cmp.kernels.times if kt.name == "extern_kernels.addmm")
    assert row.a is not None and row.a.launches == 4
    assert row.a.time_ms == pytest.approx(sum(t.time_ms for t in launches))
    assert "(×4, total)" in row.a_text
    assert "(×4, total)" in _text(render_compare_table(cmp))
    assert "(×4, total)" in render_compare_html(cmp)


def test_regenerated_kernels_are_unchanged_and_counted_per_compile() -> None:
    """A static sweep regenerates its kernels once per shape: the rows say
    "unchanged" and count compiles, never "once a compile" over 112 events."""
    static, dynamic = sweep_sessions()
    cmp = compare(static, dynamic)
    assert cmp.kernels.recompiled and not (cmp.kernels.added or cmp.kernels.removed)
    compiles_a = len(cmp.a_run.compiles)
    words = cmp.kernels.recompiled[0].words
    assert words.startswith(f"generated by {compiles_a} compiles in A")
    table = _text(render_compare_table(cmp))
    assert cmp.kernels.title in table and "once a compile" not in table
    assert f"kernels: 0 added, 0 removed, 0 changed, {cmp.kernels.same} unchanged" in table
    assert "│ unchanged │ extern_kernels.addmm" in table
    # Four addmm call sites in B against two in A: the same kernel, more calls.
    gelu = Session.from_events(load_fixture("paper/gelu_mlp"))
    linears = Session.from_events(load_fixture("stacked_linears"))
    (g,) = compare(gelu, linears).kernels.recompiled
    assert g.words == (
        "generated by 1 compile in A, 2 call sites each; 1 compile in B, 4 call sites each"
    )


def test_a_session_of_several_runs_says_which_run_and_takes_run(tmp_path, capsys) -> None:
    from dlcprof.cli import main
    from dlcprof.report.folder import save_session

    s = full_session()
    cmp = compare(s, benchmark_session())
    (note,) = cmp.notes
    assert note.startswith(f"A holds {len(s.runs)} runs: comparing its latest, run {len(s.runs)}")
    assert "--run" in note and note in _text(render_compare_table(cmp))
    assert not compare(s, s, 1, 2).notes
    a = save_session(s, tmp_path / "a")
    b = save_session(benchmark_session(), tmp_path / "b")
    ids = list(s.runs)
    capsys.readouterr()
    assert main(["compare", str(a), str(b), "--run", ids[0], "1"]) == 0
    out = capsys.readouterr().out
    assert "holds" not in out and s.runs[ids[0]].workload in out
    assert main(["compare", str(a), str(b), "--run", "99"]) == 2
    assert "no run '99'" in capsys.readouterr().err
