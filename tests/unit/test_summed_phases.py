"""A pool phase's seconds add up each pool thread's, so they can exceed the
compile's wall (issue 29 item 11): every view says so beside the wall, in
figures.phases' words. gelu_mlp_modes' max-autotune run built C++/Triton
kernels on three pool threads, 20.08 s summed inside a 19.72 s compile."""

from __future__ import annotations

from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof.console import phases_table
from dlcprof.figures import phases as fp
from dlcprof.report import build_model, render_markdown
from dlcprof.session import Run, Session
from dlcprof.tui.view import View
from dlcprof.tui.widgets.phases import PhaseTimeline

WORDS = "C++/Triton compile 20.08 s ×5, summed over 3 threads"


def _session() -> tuple[Session, Run]:
    s = Session.from_events(load_fixture("gelu_mlp_modes"))
    return s, s.runs["aa95bdcd"]


def _text(renderable: object, width: int = 200) -> str:
    console = Console(width=width, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_figures_word_the_summed_key_phase() -> None:
    _, run = _session()
    c = run.compiles["0/0"]
    assert sum(k.seconds for k in fp.summed(c) if k.seconds) > c.wall_s
    assert fp.summed_words(c) == WORDS


def test_console_says_summed_over_threads_beside_the_wall() -> None:
    _, run = _session()
    out = _text(phases_table(run))
    rows = {
        ln.split("│")[1].strip(): ln.split("│")[2].strip() for ln in out.splitlines() if "│" in ln
    }
    assert rows["wall (torch compilation_metrics)"] == "19.72 s"
    assert rows["C++/Triton compile"] == "20.08 s ×5, summed over 3 threads"
    assert "are summed over threads: compare the wall row" in " ".join(out.split())


def test_tui_phases_header_says_summed_beside_the_wall() -> None:
    s, run = _session()
    out = _text(PhaseTimeline(View(s, run, None)), 240)
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("compile 0/0"))
    assert "wall 19.72 s" in lines[at]
    assert lines[at + 1].strip() == WORDS


def test_markdown_names_the_pool_threads_it_sums() -> None:
    s, _ = _session()
    md = render_markdown(build_model(s))
    assert fp.SUMMED_NOTE in md
    assert "| compile_file (summed over 2 pool threads) | 2 | 12.06 s | 61% |" in md
