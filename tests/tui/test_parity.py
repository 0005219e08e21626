"""Every view states the same figures in the same words.

For each recorded session (tests/fixtures, from real runs), the TUI panes,
the headless console tables, the Markdown report and the HTML report must
state the same speedup (with glibc's default allocator and with the
allocator held steady), break-even, noise verdict, allocator verdict, sweep
verdict and newest recompile reason: each is computed once in dlcprof.figures
and worded once in dlcprof.text, and this test catches a view that derives or
words its own.
"""

from __future__ import annotations

import dataclasses
import re

import pytest
from helpers.recorded import load_fixture
from helpers.views import plain, unhtml, views
from textual.widgets import DataTable, Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import device as fd
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import observer as fo
from dlcprof.figures import recompiles as fr
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Run, Session
from dlcprof.tui.app import DlcprofApp


def expected(session: Session, run: Run) -> list[str]:
    """The sentences every view must contain, worded by dlcprof.text."""
    out = []
    a = fa.contrast(run)
    if a is not None:
        s = a.default
        out += [fb.speedup_text(s), fb.break_even_text(s), a.sentence, fa.headline(a.allocator)]
        # The cache state beside the compile time and the break-even.
        out.append(s.compile_text)
        if a.steady is not None:
            out += [fb.speedup_text(a.steady), fb.break_even_text(a.steady)]
        if not s.measurable:
            out.append(text.NO_DIFFERENCE)
        assert run.benchmark is not None
        out += fb.split_notes(run.benchmark, s)
    if run.benchmark is not None:
        out.append(fo.line(run))  # what watched the run while it was timed
    if run.recompiles:
        out.append(str(fr.newest_reason(run.recompiles[-1].reason)))
    pair = fr.sweep_pair(session, run)
    if pair is not None and pair.complete:
        out.append(pair.verdict)
    # What the mode did, and every mode side by side.
    mode = run.settings.mode if run.settings else ""
    if mode in fm.AUTOTUNE_MODES:
        out.append(fm.autotune(run).line)
    cg = fm.cudagraphs(run)
    if cg.graphs:
        out.append(f"CUDA graphs: {cg.line}")
    table = fm.mode_table(session, run)
    if table is not None:
        out += [cell for row in table.rows for cell in row.words()] + table.notes
    return out


def _noisy(events: list[ev.Event]) -> list[ev.Event]:
    """The pointwise run with a spread wider than its difference."""
    out = []
    for e in events:
        if isinstance(e, ev.BenchmarkMeasured):
            gap = abs(e.eager_ms - e.compiled_ms)
            e = dataclasses.replace(e, eager_spread_ms=2 * gap, compiled_spread_ms=gap)
        out.append(e)
    return out


def _sensitive(events: list[ev.Event]) -> list[ev.Event]:
    """The default-size pointwise run as a quiet machine measures it (issue 14:
    eager 2.8x faster once its buffers stay mapped)."""
    out = []
    for e in events:
        if isinstance(e, ev.SteadyAllocatorMeasured):
            e = dataclasses.replace(
                e,
                eager_ms=e.eager_ms / 2.8,
                eager_spread_ms=e.eager_spread_ms / 10,
                compiled_spread_ms=e.compiled_spread_ms / 10,
            )
        if isinstance(e, ev.BenchmarkMeasured):
            e = dataclasses.replace(
                e,
                eager_spread_ms=e.eager_spread_ms / 10,
                compiled_spread_ms=e.compiled_spread_ms / 10,
            )
        out.append(e)
    return out


def _two_clusters(events: list[ev.Event]) -> list[ev.Event]:
    """Eager repetitions that split four and three: both figures, no median."""
    out = []
    for e in events:
        if isinstance(e, ev.BenchmarkMeasured):
            x = e.eager_ms
            e = dataclasses.replace(e, eager_reps_ms=[x, x, x * 1.01, x, 2 * x, 2 * x, 2.02 * x])
        out.append(e)
    return out


def _sampled(events: list[ev.Event]) -> list[ev.Event]:
    """The CPU monitor's samples every 0.1 s of each run (a resident set over
    10 GB at its peak: a mean in MB beside a max in GB)."""
    out: list[ev.Event] = []
    start = None
    for e in events:
        out.append(e)
        if isinstance(e, ev.RunStarted):
            start = e.t
        if isinstance(e, ev.RunFinished) and start is not None:
            n = int((e.t - start) / 0.1)
            out[-1:-1] = [
                ev.DeviceSampled(
                    t=start + i * 0.1,
                    source="cpu",
                    run_id=e.run_id,
                    values={
                        "worker_cpu_pct": 50.0 + i % 50,
                        "children_cpu_pct": 0.0,
                        "cxx_compilers": float(i % 3),
                        "worker_rss_mb": 11000.0 - 2000 * (i % 2),
                    },
                )
                for i in range(n + 1)
            ]
    return out


SESSIONS = {
    "pointwise_chain": lambda: load_fixture("pointwise_chain"),
    "pointwise_chain_allocator": lambda: load_fixture("pointwise_chain_allocator"),
    "allocator_sensitive": lambda: _sensitive(load_fixture("pointwise_chain_allocator")),
    "two_clusters": lambda: _two_clusters(load_fixture("pointwise_chain_allocator")),
    "graph_breaks": lambda: load_fixture("graph_breaks"),
    "variable_length_static": lambda: load_fixture("variable_length_static"),
    "static_and_dynamic_sweeps": lambda: [
        *load_fixture("variable_length_static"),
        *load_fixture("variable_length_dynamic"),
    ],
    "within_noise": lambda: _noisy(load_fixture("pointwise_chain")),
    "every_mode_with_freezing": lambda: load_fixture("gelu_mlp_modes"),
}


@pytest.mark.parametrize("name", SESSIONS)
def test_views_state_the_same_figures_in_the_same_words(name):
    session = Session.from_events(SESSIONS[name]())
    for run in session.runs.values():
        wanted = expected(session, run)
        assert wanted or run.sweep, f"{name}: nothing to compare"
        for view, rendered in views(session, run).items():
            flat = " ".join(rendered.split())
            for sentence in wanted:
                assert " ".join(sentence.split()) in flat, f"{name} / {view}: {sentence!r}"


def test_the_device_table_reads_the_same_in_every_view():
    """The device's mean / max per span: the console's table and both reports'
    (the TUI's Device pane draws the samples over time instead), each figure
    with its unit."""
    session = Session.from_events(_sampled(load_fixture("pointwise_chain")))
    run = session.latest_run
    assert run is not None
    spans = fd.span_table(run)
    assert spans is not None and len(spans.spans) == 2, "compile and after compile"
    cells = [c for _, row in spans.rows() for c in row]
    joined = " ".join(cells)
    assert "%" in joined and " MB" in joined and " GB" in joined
    wanted = spans.columns()[1:] + [label for label, _ in spans.rows()] + cells
    for view, rendered in views(session, run).items():
        if view == "tui":
            continue
        flat = " ".join(rendered.split())
        for sentence in wanted:
            assert sentence in flat, f"{view}: {sentence!r}"


def test_the_allocator_sessions_show_what_they_are_for():
    for name, wanted in (("allocator_sensitive", fa.SENSITIVE), ("two_clusters", None)):
        run = Session.from_events(SESSIONS[name]()).latest_run
        assert run is not None
        a = fa.contrast(run)
        assert a is not None and a.steady is not None
        if wanted:
            assert a.verdict == wanted
        else:
            assert len(a.default.modes) == 2 and text.TWO_CLUSTERS in fb.speedup_text(a.default)


def kernel_sentences(run: Run) -> list[str]:
    """What every view says about the kernels' time: the cells and the totals."""
    timings = fk.kernel_timings(run)
    notes = text.Footnotes()
    cells = [fk.timing_cells(timings[fk.kernel_key(k)], notes) for k in run.kernels]
    # Every figure with its unit: ms and µs, x, GB/s and % (bytes: kernel_bytes).
    figures = [f for c in cells for f in (c.time, c.share, c.eager, c.gain, c.gbps, c.bw_share)]
    return figures + fk.summary_lines(run, False)


def kernel_bytes(run: Run) -> list[str]:
    """Each kernel's bytes, in the views that have the column (the TUI's table
    shows GB/s, its bytes are in the kernel's sentence on Enter)."""
    timings = fk.kernel_timings(run)
    return [fk.timing_cells(timings[fk.kernel_key(k)], text.Footnotes()).bytes for k in run.kernels]


@pytest.mark.parametrize("name", ["pointwise_chain", "graph_breaks"])
async def test_every_view_states_the_same_kernel_times(name):
    session = Session.from_events(load_fixture(name))
    run = session.latest_run
    assert run is not None and run.kernel_profile is not None, "re-record the fixture"
    wanted = kernel_sentences(run)
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    async with app.run_test(size=(220, 60)) as pilot:
        app.select_run(run.run_id)
        await pilot.pause()
        table = app.query_one("#kernels-table", DataTable)
        rows = [" ".join(str(c) for c in table.get_row_at(i)) for i in range(table.row_count)]
        hint = str(app.query_one("#kernels-hint", Static).render())
    rendered = {
        "tui": " ".join(rows) + " " + hint,
        **{k: v for k, v in views(session, run).items() if k != "tui"},
    }
    for view, text_ in rendered.items():
        flat = " ".join(text_.split())
        for sentence in wanted + (kernel_bytes(run) if view != "tui" else []):
            assert " ".join(sentence.split()) in flat, f"{name} / {view}: {sentence!r}"


def test_no_view_derives_a_break_even_from_noise():
    session = Session.from_events(_noisy(load_fixture("pointwise_chain")))
    run = session.latest_run
    assert run is not None
    s = fb.run_speed(run)
    assert s is not None and not s.measurable and s.break_even is None
    for view, rendered in views(session, run).items():
        assert not re.search(r"\d[\d,]* runs\b", rendered), view


def test_the_papers_findings_read_the_same_in_every_view():
    """`dlcprof paper`'s table: printed by the CLI, on the TUI's paper screen
    and in both reports, every cell worded by figures.paper_tables and text."""
    from helpers.paper import paper_events

    from dlcprof.figures import paper as fpa
    from dlcprof.figures import paper_tables as fpt
    from dlcprof.tables import paper_tables

    session = Session.from_events(paper_events())
    f = fpa.findings(session)
    assert f is not None
    rendered = {
        "console": plain(paper_tables(f)),
        "tui": plain(paper_tables(f, fill=True)),
        "markdown": render_markdown(build_model(session)),
        "html": unhtml(render_html(build_model(session))),
    }
    wanted = [c for r in fpt.summary_rows(f) for c in r]
    wanted += [c for r in fpt.workload_rows(f) for c in r] + fpt.notes(f)
    assert "8.21x" in wanted[1] and len(wanted) > 40
    for view, page in rendered.items():
        flat = " ".join(page.split())
        for sentence in wanted:
            assert " ".join(sentence.split()) in flat, f"{view}: {sentence!r}"


def test_the_live_log_and_the_log_pane_word_each_event_alike():
    """A run's start, a recompile, the recompile limit, a compile that raised, a
    graph break, a log line,
    an error, a probe that is n/a, a worker's exit, a monitor's status: the
    console's live line and the TUI's Log pane say the same words
    (figures.live_log.event_line)."""
    from dlcprof.console import live_line
    from dlcprof.figures import live_log as ll
    from dlcprof.tui.widgets.log import log_line

    events = load_fixture("variable_length_static")
    session = Session.from_events(events)
    assert session.latest_run is not None
    rid = session.latest_run.run_id
    worded: list[ev.Event] = [
        e for e in events if isinstance(e, (ev.RunStarted, ev.RecompileTriggered))
    ]
    worded += [
        ev.RecompileLimitHit(
            t=0.0,
            run_id=rid,
            function="forward",
            limit=8,
            message="forward (model.py:12) hit recompile_limit (8)",
            location="model.py:12",
        ),
        ev.EagerCallsCounted(t=0.0, run_id=rid, calls=3),
        ev.CompileRaised(
            run_id=rid,
            error="InternalTorchDynamoError: AttributeError: no __dict__",
            location="model.py:20",
            inside="/usr/lib/python3.11/inspect.py:2474",
        ),
        ev.GraphBroken(
            run_id=rid,
            compile_id="0/0",
            reason="Unsupported Tensor.backward() call",
            location="model.py:12",
            detail="/v/lib/python3.11/site-packages/torch/optim/optimizer.py:79",
            hints=["move the call out of the compiled function"],
        ),
        ev.LogEmitted(run_id=rid, level="warning", source="torch", message="a warning"),
        ev.ErrorRaised(run_id=rid, stage="load", message="no such file", traceback="Trace\n x"),
        ev.ProbeUnavailable(run_id=rid, probe="kernels", reason="no such API"),
        ev.WorkerExited(returncode=1, signal=None, message="worker exited with status 1"),
        ev.MonitorStatus(monitor="py-spy", available=False, message="py-spy not found"),
    ]
    assert {type(e) for e in worded} == {
        ev.RunStarted,
        ev.RecompileTriggered,
        ev.RecompileLimitHit,
        ev.EagerCallsCounted,
        ev.CompileRaised,
        ev.GraphBroken,
        ev.LogEmitted,
        ev.ErrorRaised,
        ev.ProbeUnavailable,
        ev.WorkerExited,
        ev.MonitorStatus,
    }
    for e in worded:
        parts = ll.event_line(e)
        assert parts is not None
        line = "".join(words for words, part in parts if part != ll.TRACE)
        console = live_line(e, session)
        pane = log_line(e, None)
        assert console is not None and pane is not None
        assert line in console.plain, console.plain
        assert line in pane[1].plain, pane[1].plain
