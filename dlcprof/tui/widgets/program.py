"""An attached program, atop the sidebar: its timeline, each compiled graph's
life, and what DDP did to its graphs."""

from __future__ import annotations

from rich.cells import cell_len
from rich.text import Text
from textual.widgets import Static

from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job.program import program_lines
from dlcprof.tui.view import View


class ProgramPane(Static):
    _unwrapped = -1  # the line count last shown, when no line wrapped; -1: a layout is due

    def show(self, view: View) -> None:
        lines = program_lines(view.session, view.now) + fddp.session_lines(view.session)
        # It repaints twice a second while the program runs (its clock moves): a
        # layout pass only when its height may change (benchmarks/RESULTS.md §13).
        width = self.content_region.width
        fits = width > 0 and all(cell_len(line) <= width for line in lines)
        same = fits and len(lines) == self._unwrapped
        self._unwrapped = len(lines) if fits else -1
        self.update(Text("\n".join(lines)), layout=not same)
