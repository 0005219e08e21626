"""Modes pane: what the selected run's mode did (autotuning, CUDA graphs), and
every mode of its workload side by side once they have run (key a)."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof.figures import modes as fm
from dlcprof.tables import autotune_table, cudagraphs_table, modes_table
from dlcprof.tui.view import View

NO_TABLE = "no other mode of this workload yet: a runs all four, side by side"
NO_TABLE_REPLAY = "no other mode of this workload in this session"


class ModesReport:
    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run = self.view.run
        if run is None or run.settings is None:
            yield Text(
                self.view.no_run("no run yet: press a to compile the workload in every mode"),
                style="dim",
            )
            return
        table = fm.mode_table(self.view.session, run)
        if table is not None:
            yield modes_table(table)
        else:
            yield Text(NO_TABLE_REPLAY if self.view.replay else NO_TABLE, style="dim")
        mode = run.settings.mode
        yield Text()
        yield Text.assemble((f"this run, {mode}: ", "bold"), fm.MODE_MEANINGS.get(mode, ""))
        for part in (autotune_table(run), cudagraphs_table(run)):
            if part is not None:
                yield part


class ModesPane(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="modes-body")

    def show(self, view: View) -> None:
        self.query_one("#modes-body", Static).update(ModesReport(view))
