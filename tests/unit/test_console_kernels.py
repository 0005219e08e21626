"""The console's kernels table on a recorded profiled run (stacked_linears): on a
narrow terminal a figure is left out whole and said, never cut; names take the
room that is left; wide, or off a terminal, every column is there."""

from __future__ import annotations

import re

from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof import console as dc
from dlcprof.figures import kernels as fk
from dlcprof.session import Session


def _run():
    s = Session()
    for e in load_fixture("stacked_linears"):
        s.apply(e)
    (run,) = [r for r in s.runs.values() if r.kernel_profile is not None]
    return run


def _render(width: int, fit: bool = True) -> tuple[list[str], str]:
    out = Console(width=width, color_system=None, record=True, force_terminal=fit)
    out.print(dc.kernels_table(_run(), fit))
    lines = out.export_text().splitlines()
    header = next(ln for ln in lines if ln.startswith("┃"))
    return [c.strip() for c in header.strip("┃").split("┃")], "\n".join(lines)


def test_a_narrow_terminal_leaves_figures_out_whole_and_says_which():
    header, shown = _render(80)
    assert max(len(ln) for ln in shown.splitlines()) <= 80
    left_out = [c for c in dc.KERNEL_FIGURES_LEFT_OUT if c not in header]
    assert left_out and set(fk.TIMING_COLUMNS) - set(header) == set(left_out)
    said = " ".join(shown.split())
    assert f"left out at 80 columns: {', '.join(left_out)}" in said
    assert "time" in header and "fusion gain" in header and "fused ops" in header
    # Every figure shown whole: a time, a percentage or a gain, no ellipsis in it.
    rows = [ln for ln in shown.splitlines() if ln.startswith("│")]
    for row in rows:
        cells = [c.strip() for c in row.strip("│").split("│")]
        figures = cells[header.index("time") : header.index("fused ops")]
        assert all("…" not in f for f in figures), row
        assert re.fullmatch(r"[\d.]+ (ms|µs|s)", figures[0]), row


def test_a_wide_terminal_and_a_pipe_show_every_column():
    for header, shown in (_render(400), _render(dc.PIPE_WIDTH, fit=False)):
        assert [c for c in fk.TIMING_COLUMNS if c not in header] == []
        assert "left out" not in shown
