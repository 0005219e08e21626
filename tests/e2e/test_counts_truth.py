"""Issue 29, items 4, 6, 7, 8 and 12 (whole kernel names off a terminal): the
counts every view states are what torch made.

Real data: tests/fixtures/variable_length_static.jsonl and pointwise_chain.jsonl
(recorded worker runs), tests/fixtures/programs/nested_log.jsonl (a real
``dlcprof run -- python tests/programs/nested_log.py``, recorded by
scripts/record_program_fixture.py), and, marked slow, the program itself.
"""

from __future__ import annotations

import io
import subprocess
import sys
import time

import pytest
from helpers.paths import PROGRAMS
from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof import events as ev
from dlcprof import text
from dlcprof.console import make_console, program_summary, run_summary
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures import kernels as fk
from dlcprof.figures.advice import compile_rules as cr
from dlcprof.figures.job import program as fprog
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import build_report
from dlcprof.session import Session
from dlcprof.tui.view import View
from dlcprof.tui.widgets.kernels import _hint

NESTED = PROGRAMS / "nested_log.py"


def plain(renderable, console: Console | None = None) -> str:
    console = console or Console(width=400, color_system=None, file=io.StringIO())
    console.begin_capture()
    console.print(renderable)
    return console.end_capture()


def flat(s: str) -> str:
    return " ".join(s.split())


def nested() -> Session:
    return Session.from_events(load_fixture("programs/nested_log"))


# --- item 4: one kernel count, what each compile's output code has ----------------------


def test_every_view_counts_the_kernels_each_compile_generated():
    """A static sweep recompiled 5 times: each compile's output code has its own
    kernel and library call. The console said "1 fused kernel, 1 library call"
    where the JSON lists 6 and 6 and the TUI 12 rows."""
    session = Session.from_events(load_fixture("variable_length_static"))
    run = session.latest_run
    report = build_report(build_model(session))
    (jrun,) = [r for r in report["runs"] if r["run_id"] == run.run_id]
    kinds = [k["kind"] for c in jrun["compiles"] for k in c["kernels"]]
    truth = (sum(k != "extern" for k in kinds), kinds.count("extern"))
    assert truth == (6, 6)
    count = fk.kernel_count(run)
    assert (count.fused, count.library) == truth
    words = count.words
    assert words.startswith("6 fused kernels, 6 library calls")
    assert words in flat(plain(run_summary(run, session)))
    view = View(session, run, now=None, replay=True)
    assert words in _hint(view, run, len(run.kernels), text.Footnotes())
    assert "| 6 / 6 |" in render_markdown(build_model(session))
    assert "6 / 6" in render_html(build_model(session))


def test_a_row_shared_by_recompiles_lists_each_compile():
    """The grouped console row named its other compiles "+5": now each is listed
    and the caption says why there are fewer rows than kernels."""
    session = Session.from_events(load_fixture("variable_length_static"))
    run = session.latest_run
    out = flat(plain(run_summary(run, session)))
    assert "0/0, sweep:0/0, sweep:0/1, sweep:0/2, sweep:0/3 +1 more" in out
    assert fk.kernel_count(run).rows_words in out


# --- item 12: whole kernel names off a terminal ------------------------------------------


def test_piped_output_prints_whole_kernel_names(monkeypatch):
    """A CI log is searched for a kernel's name: off a terminal every name is
    whole; on a terminal a long one still loses its middle to fit."""
    monkeypatch.delenv("COLUMNS", raising=False)
    session = Session.from_events(load_fixture("pointwise_chain"))
    run = session.latest_run
    (kernel,) = run.kernels
    assert len(kernel.name) > fk.NAME_CELL
    pipe = make_console(file=io.StringIO())
    assert not pipe.is_terminal
    piped = plain(run_summary(run, session), pipe)
    assert kernel.name in piped
    assert fk.ops_whole(kernel) in piped
    # On a terminal: whole where the table has room, its middle cut ("…") where
    # the column is full, its end (the kernel's number) kept.
    wide = Console(width=400, force_terminal=True, color_system=None, file=io.StringIO())
    assert kernel.name in plain(run_summary(run, session), wide)
    tty = Console(width=120, force_terminal=True, color_system=None, file=io.StringIO())
    shown = plain(run_summary(run, session), tty)
    (line,) = [ln for ln in shown.splitlines() if kernel.name[:5] in ln]
    cell = next(c.strip() for c in line.split("│") if c.strip().startswith(kernel.name[:5]))
    assert "…" in cell and kernel.name.endswith(cell.split("…")[1])
    assert len(cell) >= 8  # the name gave the room, not all of it


# --- item 6: a compile in progress counts up to now -------------------------------------


def test_a_compile_in_progress_counts_up_to_now():
    """28 s into a 40 s first compile the live TUI said "compiles took 0 µs, 0%":
    the compile still running counts from its first phase to now."""
    events = load_fixture("programs/nested_log")
    first = next(i for i, e in enumerate(events) if isinstance(e, ev.CompileFinished))
    cut = events[: first - 1]
    session = Session.from_events(cut)
    (run,) = fprog.attached_runs(session)
    began = fprog.compiling_since(run)
    assert began is not None
    now = cut[-1].t + 2.0
    t = fprog.timeline(session, run, now)
    assert t.compile_s == pytest.approx(now - began)
    assert t.compile_s >= 2.0
    line = fprog.program_lines(session, now)[1]
    assert line.startswith(f"compiles took {text.secs(now - began)} of this")
    assert "compiling now" in line and "0 µs" not in line
    # Without a clock (a deterministic TUI) it says a compile runs, not "0 µs, 0%".
    assert "not counting the one compiling now" in fprog.program_lines(session, None)[1]


# --- item 7: one break hit by nested frames -----------------------------------------------


def test_a_break_hit_by_nested_frames_is_one_row_with_its_frames():
    """warning_once three modules deep: Dynamo broke in each of the three frames
    at the same line. One row, "×3 frames", in the console, HTML and Markdown."""
    session = nested()
    run = session.latest_run
    assert len(run.graph_breaks) == 3
    (b,) = fgb.breaks(run)
    assert b.frames == "0/0, 1/0, 2/0 (×3 frames)"
    console = plain(run_summary(run, session))
    rows = [ln for ln in console.splitlines() if ln.startswith("│") and b.reason in ln]
    assert len(rows) == 1 and "×3 frames" in rows[0]
    md = render_markdown(build_model(session))
    assert md.count(f"| {b.reason} |") == 1 and "×3 frames" in md
    page = render_html(build_model(session))
    assert page.count(f"<td>{b.reason}</td>") == 1 and "×3 frames" in page


def test_the_advice_names_the_logging_method_and_not_a_0_op_frame_as_a_graph():
    """The advice rested on "an extra graph compiled after it" that was a frame
    with 0 ops, and did not name the method to ignore."""
    session = nested()
    run = session.latest_run
    empty = [c.compile_id for c in run.compiles.values() if c.record.graph_op_count == 0]
    assert empty == ["2/0"]
    (item,) = cr.graph_breaks(session, run, 1000)
    assert "logging.Logger.warning_once" in item.change
    assert "ignore_logging_functions" in item.change
    assert item.snippet.endswith(
        "torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning_once)"
    )
    evidence = " ".join(item.evidence)
    assert "hit by 3 frames" in evidence
    assert "4 extra graphs compiled because of it (1/0, 3/0, 4/0, 5/0)" in evidence
    assert "no graph, 0 ops (2/0)" in evidence
    # Removed, the break's graphs merge: their ops still compile, only the 0-op frame
    # (2/0), each graph's overhead and the attempts thrown away restarting up to
    # the break (0/0's, 1/0's) go, not every added compile's seconds.
    added = sum(run.compiles[c].wall_s for c in ("1/0", "2/0", "3/0", "4/0", "5/0"))
    first_restart = fgb.restart_s(run.compiles["0/0"])
    assert item.predicted is not None and first_restart > 0
    assert run.compiles["2/0"].wall_s < item.predicted.saving_s < added + first_restart
    assert "restarting 0/0, 1/0 up to the break" in item.predicted.how
    advice = flat(plain(program_summary(session)))
    assert "logging.Logger.warning_once" in advice


@pytest.mark.slow
def test_the_advised_setting_removes_the_break():
    """The snippet the advice gives, applied to the same program: no break, one graph."""
    fix = (
        "from torch._dynamo.utils import counters\n"
        "src = open(%r).read().replace('torch.compile(Outer())',"
        " \"torch.compile(Outer(), backend='eager')\")\n"
        "src = src.replace('logging.Logger.warning_once = warning_once\\n',"
        " 'logging.Logger.warning_once = warning_once\\n' + %r + '\\n')\n"
        "exec(compile(src, 'nested_log', 'exec'), {'__name__': '__main__'})\n"
        "print('breaks', sum(counters['graph_break'].values()),"
        " 'graphs', counters['stats']['unique_graphs'])\n"
    )
    session = nested()
    (item,) = cr.graph_breaks(session, session.latest_run, 1000)
    setting = item.snippet.splitlines()[-1]
    out = subprocess.run(
        [sys.executable, "-c", fix % (str(NESTED), setting)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    ).stdout
    assert out.splitlines()[-1] == "breaks 0 graphs 1"


# --- item 8: a graph called at most 4 times -----------------------------------------------


def test_a_graph_timed_on_its_first_call_alone_says_so():
    """Called 3 times, 2 of them sampled for kernel times: the "per call" time
    was the first call alone."""
    session = nested()
    lives = fprog.graph_lives(session.latest_run)
    assert lives and all(g.calls == 3 and g.sampled == 2 for g in lives)
    for g in lives:
        assert "per call inside" not in g.line
        assert f"1 timed, the first: {text.secs(g.first_s)}" in g.line
        assert text.na(fprog.ONLY_FIRST) in g.line
    program = "\n".join(fprog.program_lines(session))
    assert "per call inside the compiled code" not in program


# --- item 6, live: a real program's first compile ----------------------------------------


@pytest.mark.slow
def test_a_live_first_compile_counts_up():
    """The real program under dlcprof's AttachedProgram: while its first compile runs, the
    program's timeline counts that compile up to now."""
    from dlcprof.attach.program import start_program

    session = Session()
    seen: list[tuple[float, str]] = []

    def emit(e: ev.Event) -> None:
        session.apply(e)
        runs = fprog.attached_runs(session)
        if isinstance(e, ev.PhaseStarted) and runs and not any(r.compiles for r in runs):
            time.sleep(0.05)
            now = time.time()
            seen.append((now, fprog.timeline(session, runs[0], now).line))

    program = start_program(
        [sys.executable, str(NESTED)], emit, output="capture", hotspots=False, raw_trace=False
    )
    assert program.wait(300)
    assert session.program_exit is not None and session.program_exit.returncode == 0
    assert seen, "no phase began before the first compile finished"
    for _, line in seen:
        assert "compiling now" in line and not line.startswith("compiles took 0 µs"), line
