"""Every view states the same figures in the same words.

For each recorded session (tests/fixtures, from real runs), the TUI panes,
the headless console tables, the Markdown report and the HTML report must
state the same speedup, break-even, noise verdict, sweep verdict and newest
recompile reason: each is computed once in dlcprof.figures and worded once
in dlcprof.text, and this test catches a view that derives or words its own.
"""

from __future__ import annotations

import dataclasses
import html
import re

import pytest
from conftest import load_fixture
from rich.console import Console

from dlcprof import events as ev
from dlcprof import text
from dlcprof.console import run_summary
from dlcprof.figures import benchmark as fb
from dlcprof.figures import observer as fo
from dlcprof.figures import recompiles as fr
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.session import Run, Session
from dlcprof.tui.view import View
from dlcprof.tui.widgets.benchmark import BenchmarkReport
from dlcprof.tui.widgets.recompiles import RecompileReport

WIDTH = 400  # wide enough that no view wraps a sentence


def _plain(renderable) -> str:  # type: ignore[no-untyped-def]
    console = Console(width=WIDTH, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def _unhtml(page: str) -> str:
    page = re.sub(r"<style.*?</style>|<title>.*?</title>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page))


def views(session: Session, run: Run) -> dict[str, str]:
    view = View(session, run, now=None, replay=True)
    return {
        "tui": _plain(BenchmarkReport(view)) + _plain(RecompileReport(view)),
        "console": _plain(run_summary(run, session)),
        "markdown": render_markdown(session),
        "html": _unhtml(render_html(session)),
    }


def expected(session: Session, run: Run) -> list[str]:
    """The sentences every view must contain, worded by dlcprof.text."""
    out = []
    s = fb.run_speed(run)
    if s is not None:
        out += [
            text.speedup_verdict(s.speedup, s.measurable),
            text.break_even(s.break_even, s.measurable),
        ]
        if not s.measurable:
            out.append(text.NO_DIFFERENCE)
    if run.benchmark is not None:
        out.append(fo.line(run))  # what watched the run while it was timed
    if run.recompiles:
        out.append(str(fr.newest_reason(run.recompiles[-1].reason)))
    pair = fr.sweep_pair(session, run)
    if pair is not None and pair.complete:
        out.append(text.sweep_verdict(pair.static_s, pair.dynamic_s, pair.reduction, pair.steady))
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


SESSIONS = {
    "pointwise_chain": lambda: load_fixture("pointwise_chain"),
    "graph_breaks": lambda: load_fixture("graph_breaks"),
    "variable_length_static": lambda: load_fixture("variable_length_static"),
    "static_and_dynamic_sweeps": lambda: [
        *load_fixture("variable_length_static"),
        *load_fixture("variable_length_dynamic"),
    ],
    "within_noise": lambda: _noisy(load_fixture("pointwise_chain")),
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


def test_no_view_derives_a_break_even_from_noise():
    session = Session.from_events(_noisy(load_fixture("pointwise_chain")))
    run = session.latest_run
    s = fb.run_speed(run)
    assert s is not None and not s.measurable and s.break_even is None
    for view, rendered in views(session, run).items():
        assert not re.search(r"\d[\d,]* runs\b", rendered), view
