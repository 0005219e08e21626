"""An attached program, atop the sidebar: its timeline, each compiled graph's
life, and what DDP did to its graphs."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job.program import program_lines
from dlcprof.tui.view import View


class ProgramPane(Static):
    def show(self, view: View) -> None:
        lines = program_lines(view.session, view.now) + fddp.session_lines(view.session)
        self.update(Text("\n".join(lines)))
