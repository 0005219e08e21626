"""What went wrong on real models, replayed from recorded structured traces
(tests/fixtures/trace, scripts/record_fixtures.py): each compile owns its
phases and kernels, restarts are priced, dims are told apart from scalars.
"""

from __future__ import annotations

import re

import pytest
from helpers.trace import outside_their_compile, replay
from rich.console import Console

from dlcprof import events as ev
from dlcprof import text
from dlcprof.console import run_summary
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import build_report
from dlcprof.session import Run, Session


def session_of(name: str) -> tuple[Session, Run]:
    session = Session.from_events(replay(name))
    return session, session.run("r")


def test_a_lazy_backward_owns_its_phases_and_kernels():
    """The training step's backward compiles at the first .backward(): its
    lowering, codegen, C++ builds and kernels are its own, inside its span."""
    _, run = session_of("training_step")
    fwd, bwd = run.compiles["0/0"], run.compiles["0/0 (bwd)"]
    assert bwd.is_backward and not fwd.is_backward
    assert {"entire_backward_compile", "GraphLowering.run", "Scheduler.codegen"} <= {
        p.name for p in bwd.phases
    }
    assert any(p.name == "compile_file" for p in bwd.phases)  # pool-thread g++ builds too
    assert bwd.kernels and all(k.graph == "backward" for k in bwd.kernels)
    assert fwd.kernels and all(k.graph == "forward" for k in fwd.kernels)
    assert outside_their_compile(run) == []
    # Inductor's time fits in each compile's wall.
    for c in (fwd, bwd):
        inductor = sum(p.duration_s for p in c.phases if p.name == "inductor_compile")
        assert 0 < inductor <= c.wall_s
    # Every view names the backward compile by its own id.
    live = [e for e in replay("training_step") if isinstance(e, ev.PhaseEnded)]
    assert any(p.compile_id == "0/0 (bwd)" and p.name == "GraphLowering.run" for p in live)


def test_restarts_are_priced_and_explained():
    """dynamic=true on float attributes: Dynamo throws its first attempt away
    (TensorifyScalarRestartAnalysis); its cost is shown, not summed into the phases."""
    session, run = session_of("dynamic_scalars")
    (c,) = run.compiles.values()
    r = fp.restarts(c)
    assert r is not None and r.count == 1
    assert r.reasons == ["TensorifyScalarRestartAnalysis"]
    ((n, secs),) = r.attempts
    assert n == 0 and 0 < secs <= r.cost_s < c.wall_s
    assert r.cost_s == pytest.approx(c.record.metrics["dynamo_time_before_restart_s"])
    # The key phases count the kept attempt only: one bytecode trace, not two.
    trace = next(k for k in fp.key_phases(c) if k.name == "bytecode_tracing")
    assert trace.count == 1
    assert sum(p.name == "bytecode_tracing" for p in c.phases) == 2
    words = f"1 restart threw away {text.secs(r.cost_s)} (TensorifyScalarRestartAnalysis)"
    console = Console(width=200, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(run_summary(run, session))
    assert words in console.export_text()
    assert words in render_markdown(build_model(session))
    (compile_json,) = build_report(build_model(session))["runs"][0]["compiles"]
    assert compile_json["restarts"]["reasons"] == ["TensorifyScalarRestartAnalysis"]


def test_graph_break_restarts_say_they_are_graph_breaks():
    _, run = session_of("training_step")
    r = fp.restarts(run.compiles["0/0"])
    assert r is not None and r.reasons == ["graph break: Unsupported Tensor.backward() call"]


def test_dims_made_dynamic_are_tensor_dims_and_scalars_are_listed_apart():
    session, run = session_of("dynamic_scalars")
    assert [d.source for d in fr.unique_dims(run)] == ["L['x'].size()[0]", "L['x'].size()[1]"]
    names = [fr.scalar_name(d.source) for d in fr.symbolic_scalars(run)]
    assert names == ["self.norm.eps", "math.pi", "self.p", "self.scale"]
    report = build_report(build_model(session))["runs"][0]
    assert report["dynamic_dims"] == ["s77 = L['x'].size()[0]", "s27 = L['x'].size()[1]"]
    assert len(report["dynamic_scalars"]) == 4
    md = render_markdown(build_model(session))
    assert "4 scalars made symbols (not dims): self.norm.eps, math.pi" in md
    # Issue 41, 6: a tensor torch made itself (FSDP2 on torchtitan) is no dim of the user's.
    internal = "__meta_utils_unknown_tensor23.size()[1]"
    session.apply(
        ev.DimMadeDynamic(run_id=run.run_id, compile_id="0/1", symbol="s87", source=internal)
    )
    assert internal not in " ".join(
        fr.dim_words(run) + [d.source for d in fr.symbolic_scalars(run)]
    )
    assert len(fr.dim_words(run)) == 2


def test_kernel_source_lines_are_the_lines_of_its_ops():
    """A kernel comes from the lines that made its ops, not from the outer
    frames every op shares (the loss line a relu is called under); a backward
    kernel from the forward line it differentiates."""
    _, run = session_of("training_step")
    fwd, bwd = run.compiles["0/0"].kernels, run.compiles["0/0 (bwd)"].kernels

    def lines(k: ev.KernelGenerated) -> list[str]:
        return [line.rsplit("/", 1)[1] for line in k.source_lines]

    (relu,) = [k for k in fwd if k.name == "cpp_fused_relu_0"]
    assert lines(relu) == ["training_step.py:25 return self.net(x)"]
    (loss_bwd,) = [k for k in bwd if "_log_softmax_backward_data" in k.name]
    assert lines(loss_bwd) == ["training_step.py:43 loss = F.cross_entropy(model(x), target)"]
    # The weight-gradient matmuls come from the layers, not from the loss.
    mms = [k for k in bwd if k.name == "extern_kernels.mm"]
    assert len(mms) == 5 and all(lines(k) == lines(relu) for k in mms)


def test_a_break_inside_the_optimizer_points_at_the_users_step_line():
    """Dynamo locates the optimizer's break in torch/optim/optimizer.py; the
    user's line is `opt.step()`, with torch's frame as the detail."""
    session, run = session_of("optimizer_step")
    inside = [gb for gb in run.graph_breaks if gb.detail]
    assert len(inside) == 2
    for gb in inside:
        assert gb.location.endswith("optimizer_step.py:14"), gb.location  # opt.step()
        assert text.short_path(gb.detail) == "torch/optim/optimizer.py:79"
    # A break in the user's own line has no detail.
    assert run.graph_breaks[0].location.endswith("optimizer_step.py:13")
    assert not run.graph_breaks[0].detail
    words = "optimizer_step.py:14 (broke inside torch/optim/optimizer.py:79)"
    console = Console(width=300, record=True, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(run_summary(run, session))
    assert words in console.export_text().replace("`", "")
    assert words in render_markdown(build_model(session)).replace("`", "")


def test_piped_output_keeps_the_whole_kernels_table(monkeypatch):
    """Off a terminal Rich would cut tables to 80 columns; the CLI's console is
    wide there, and the kernels table fits it whole: every column and the right
    border (issue 20, 13). A long name is whole where the column has room."""
    import io

    from dlcprof.console import PIPE_WIDTH, kernels_table, make_console
    from dlcprof.figures import kernels as fk

    monkeypatch.delenv("COLUMNS", raising=False)
    pipe = io.StringIO()
    console = make_console(file=pipe)
    assert not console.is_terminal and console.width == PIPE_WIDTH
    session, run = session_of("training_step")
    console.print(kernels_table(run))
    lines = pipe.getvalue().splitlines()
    longest = max(run.kernels, key=lambda k: len(k.name)).name
    assert len(longest) > fk.NAME_CELL
    table = [ln for ln in lines if ln[:1] in "┏┃┡│└"]
    assert "fused ops" in table[1] and all(ln.rstrip()[-1] in "┓┃┩│┘" for ln in table)
    assert all(k.name in pipe.getvalue() for k in run.kernels)


@pytest.mark.parametrize("width", [200, 220])
def test_a_long_kernel_name_leaves_every_figure_on_the_line(fixture_events, width):
    """Issue 20, 19: a transformer's 140-character kernel name pushed bytes,
    GB/s, copy share and fused ops off a 220-column table, and its wrapped
    cells left blank rows."""
    import dataclasses

    from dlcprof.console import kernels_table

    long = "cpp_fused_" + "_".join(["add_clone_mul_native_layer_norm_view"] * 4) + "_0"
    assert len(long) > 130
    events = []
    for e in fixture_events("pointwise_chain"):
        if isinstance(e, ev.KernelGenerated):
            e = dataclasses.replace(e, name=long)
        if isinstance(e, ev.KernelsProfiled):
            e = dataclasses.replace(e, kernels=[{**d, "name": long} for d in e.kernels])
        events.append(e)
    run = Session.from_events(events).latest_run
    console = Console(width=width, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(kernels_table(run))
    table = [ln for ln in console.export_text().splitlines() if ln[:1] in "┏┃┡│└"]
    assert len(table) == 4 + len(run.kernels), "one line per kernel, no wrapped rows"
    assert all(ln.rstrip()[-1] in "┓┃┩│┘" for ln in table), "the right border"
    for col in ("bytes", "GB/s", "of copy BW", "fused ops"):
        assert col in table[1]


def test_a_sweep_lists_each_kernel_once_and_counts_no_library_call_as_fused(fixture_events):
    """Issue 20, 12: a static sweep regenerates every kernel once per size: one
    row per kernel with its compiles, not one per compile; the count says fused
    kernels and library calls apart. Issue 29, 4: it counts what each compile's
    output code has, and says why the table has fewer rows."""
    from dlcprof.console import kernels_table
    from dlcprof.figures import kernels as fk

    session = Session.from_events(fixture_events("variable_length_static"))
    run = session.latest_run
    assert len(run.kernels) == 12 and len(run.compiles) == 6
    table = kernels_table(run)
    assert table.row_count == 2
    count = fk.kernel_count(run)
    assert count.words == "6 fused kernels, 6 library calls (in 6 compiles)"
    assert count.words in " ".join(str(table.caption).split())
    assert count.rows_words and count.rows_words.startswith("2 rows")


def test_recompiles_torch_recorded_but_dynamo_did_not_announce_are_listed(fixture_events):
    """Issue 20, 7: a static sweep recompiled, torch's compilation_metrics name
    each reason, but no recompile was announced: every view lists them."""
    from helpers.views import views

    events = [
        e
        for e in fixture_events("variable_length_static")
        if not isinstance(e, ev.RecompileTriggered)
    ]
    session = Session.from_events(events)
    run = session.latest_run
    assert not run.recompiles
    rows = fr.recompile_rows(run)
    assert [r.compile_id for r in rows] == [f"sweep:0/{i}" for i in range(1, 5)]
    assert rows[-1].cumulative_s == pytest.approx(sum(r.cost_s for r in rows))
    for view, rendered in views(session, run).items():
        assert "Recompiles" in rendered, view
        flat = " ".join(rendered.split())
        for r in rows:
            assert str(fr.newest_reason(r.reason)) in flat, (view, r.compile_id)


def test_the_first_sweep_step_is_a_compile_not_a_recompile(fixture_events):
    """Recorded static sweep: the first size compiled, each later one recompiled."""
    from helpers.views import views

    session = Session.from_events(fixture_events("variable_length_static"))
    run = session.latest_run
    flags = [fr.step_flag(i, st) for i, st in enumerate(run.sweep)]
    assert flags[0] == "compiled" and set(flags[1:]) == {"recompiled"}
    assert run.sweep[0].recompiled  # what the worker said: it compiled there
    for view, rendered in views(session, run).items():
        flat = " ".join(rendered.split())
        assert re.search(r"\b32\b[\s│|]*compiled\b", flat), view


def test_a_compile_of_one_kernel_reads_in_the_singular(fixture_events):
    """Issue 20, 12: "1 kernels" in the phase timeline's compile header."""
    from dlcprof.tui.view import View
    from dlcprof.tui.widgets.phases import PhaseTimeline

    session = Session.from_events(fixture_events("graph_breaks"))
    run = session.latest_run
    c = next(c for c in run.compiles.values() if len(c.kernels) == 1)
    header = PhaseTimeline(View(session, run, now=None, replay=True))._header("compile", c)
    assert "1 kernel" in header.plain and "1 kernels" not in header.plain


# A guard failure as torch 2.13 words it when the guard came from user code it
# inlined (here a lambda): the line's file is cut, the stack names it in full.
_STACKED_REASON = (
    "1/0: flag == True                                             "
    "# g = torch.compile(lambda x, flag: x + 1 if flag else x - 1)  "
    "# mp/wtest/rc.py:9 in <lambda>\n"
    "User stack trace:\n"
    '  File "/home/me/model.py", line 30, in forward\n'
    "    y = self.block(x)\n"
    '  File "/tmp/wtest/rc.py", line 9, in <lambda>\n'
    "    g = torch.compile(lambda x, flag: x + 1 if flag else x - 1)\n"
)


def test_a_multi_line_recompile_reason_is_one_line_with_its_source_everywhere():
    from dlcprof.console import live_line, recompiles_table
    from dlcprof.report.html import render_html
    from dlcprof.tui.widgets.log import log_line

    e = ev.RecompileTriggered(run_id="r", compile_id="1/1", reason=_STACKED_REASON)
    session = Session.from_events([e])
    reason = fr.newest_reason(e.reason)
    assert reason is not None and reason.at == "/tmp/wtest/rc.py:9"
    assert "\n" not in reason.newest and reason.guard.startswith("1/0: flag == True # g = ")
    live = live_line(e, session)
    assert live is not None and live.plain.count("\n") == 0 and "rc.py:9" in live.plain
    logged = log_line(e, None)
    assert logged is not None and logged[1].plain.count("\n") == 0
    console = Console(width=300, record=True)
    console.print(recompiles_table(session.run("r")))
    assert "at /tmp/wtest/rc.py:9" in console.export_text()
    assert "User stack trace" not in console.export_text()
    # The HTML cuts a long guard, never the location after it.
    html = render_html(build_model(session))
    assert "at /tmp/wtest/rc.py:9" in html


def test_a_sweeps_disabled_cache_and_a_first_compiles_header_say_why(fixture_events):
    """Recorded static sweep under --cache warm: the sweep's compiles ran with the
    graph caches off (dlcprof's doing), and a first compile that also built the
    precompiled header says so beside its cache state."""
    from dlcprof.console import live_line, phases_table
    from dlcprof.figures import benchmark as fb
    from dlcprof.figures import cache as fc

    session = Session.from_events(fixture_events("variable_length_static"))
    run = session.latest_run
    assert run.settings.cache == "warm"
    off = [c for c in run.compiles.values() if c.cache == "disabled"]
    assert off and {fc.compile_cache(run, c) for c in off} == {fc.SWEEP_OFF}
    console = Console(width=400, record=True)
    console.print(phases_table(run))
    assert "off for the sweep" in console.export_text()
    from dlcprof.report.html import render_html

    html = render_html(build_model(session))  # the timeline's hover text too
    assert "cache: off for the sweep" in html and "cache: disabled" not in html

    events = fixture_events("pointwise_chain")
    run_id = next(e.run_id for e in events if isinstance(e, ev.RunStarted))
    built = ev.HeaderPrecompiled(run_id=run_id, path="/tmp/x/precompiled_headers/a.gch")
    session = Session.from_events([*events, built])
    run = session.run(built.run_id)
    assert fb.cache_text(fb.compile_cache(run)).endswith(fc.HEADER_BUILT)
    first = next(iter(run.compiles.values()))
    assert fc.compile_cache(run, first).endswith(fc.HEADER_BUILT)
    assert "precompiled header" in live_line(built, session).plain


def test_a_phase_that_comes_again_after_a_restart_says_so_live(fixture_events):
    """Issue 40, 7: "[1/0] bytecode_tracing" twice in run's live lines; the
    second is Dynamo's retry after it threw the first attempt away."""
    from dlcprof.console import live_line

    session = Session()
    said = []
    for e in fixture_events("graph_breaks"):
        session.apply(e)
        line = live_line(e, session)
        if line is not None and "bytecode_tracing" in line.plain:
            said.append(line.plain)
    again = [s for s in said if "[1/0]" in s]
    assert len(again) == 2
    assert "restart" not in again[0] and "attempt 2, after a Dynamo restart" in again[1]
    assert not [s for s in said if "[1/0]" not in s and "restart" in s]


def test_a_figure_over_100_percent_says_why_where_it_shows(fixture_events):
    """Issue 40, 7: "of copy BW 1546%" and "kernels … = 102% of the compiled
    call … the rest is Python" were explained in the TUI's help only."""
    from dlcprof.console import kernels_table
    from dlcprof.figures import kernels as fk

    session = Session.from_events(fixture_events("stacked_linears"))
    run = session.latest_run
    assert max(t.bw_share or 0 for t in fk.kernel_timings(run).values()) > 1
    console = Console(width=400, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(kernels_table(run))
    assert f"of copy BW {fk.OVER_COPY}" in console.export_text()
    assert fk.OVER_COPY in render_markdown(build_model(session))
    # Over 100% is noise only where the kernels' summed spread reaches back to the call.
    over = fk.kernel_coverage(55.6, 54.5, 55.6 / 54.5, spread_ms=1.5)
    assert fk.OVER_CALL in over and "the rest is" not in over
    starved = fk.kernel_coverage(96.6, 54.5, 96.6 / 54.5, spread_ms=4.0)
    assert fk.OVER_CALL_BEYOND in starved and fk.OVER_CALL not in starved
    assert fk.OVER_CALL_UNJUDGED in fk.kernel_coverage(55.6, 54.5, 55.6 / 54.5)
    assert "the rest is Python" in fk.kernel_coverage(2.7, 47.8, 2.7 / 47.8)
    # The eager ops one by one over the call they come from: said, not left bare.
    assert fk.OVER_EAGER in fk.eager_coverage(14.6, 13.0, 14.6 / 13.0, None)
    assert fk.OVER_EAGER not in fk.eager_coverage(12.0, 13.0, 12.0 / 13.0, None)


def test_the_limits_last_guard_is_the_newest_entrys_once():
    """Issue 41, 8: every entry's guard was joined ("...: grad_mode; ...: grad_mode")."""
    message = (
        "torch._dynamo hit config.recompile_limit (8)\n   function: 'f'\n   last reason: "
        "0/7: GLOBAL_STATE changed: grad_mode; 0/6: GLOBAL_STATE changed: grad_mode"
    )
    hit = ev.RecompileLimitHit(run_id="r", function="f", limit=8, message=message, location="")
    assert fr.limit_words(hit).endswith("; last guard failed: GLOBAL_STATE changed: grad_mode")
