"""Run selector: every run of the session, selectable to inspect and compare."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from dlcprof.figures import outcome as fout
from dlcprof.figures.job import lanes as rl
from dlcprof.figures.job.program import compile_setting
from dlcprof.figures.job.rank_runs import rank_runs
from dlcprof.figures.runs import is_test
from dlcprof.session import Run
from dlcprof.settings import OPTION
from dlcprof.tui import ordering
from dlcprof.tui.messages import RunChosen
from dlcprof.tui.view import View
from dlcprof.tui.widgets.sorted_table import Ordered, Row

_STATUS_STYLE = {
    "ok": "green",
    "running": "yellow",
    "pending": "yellow",
    "error": "red",
    "crashed": "bold red",
    "cancelled": "magenta",
    fout.NOTHING_COMPILED: "bold red",
}


def run_prompt(run: Run) -> Text:
    """Two lines: what ran and how it ended; then the settings that tell runs apart."""
    s = run.settings
    out = Text(overflow="ellipsis")
    status = fout.status(run)
    out.append("● ", style=_STATUS_STYLE.get(status, ""))
    p = run.process
    if p is not None and p.rank is not None:
        out.append(f"rank {p.rank}", style="bold reverse")  # the script is every rank's
    else:
        out.append(run.name, style="bold")
    out.append(f" {status}", style=_STATUS_STYLE.get(status, "dim"))
    out.append("\n  ")
    if s is not None:
        out.append(f"{OPTION['mode'].label(s.mode)} · dyn={s.dynamic}", style="dim")
        if s.backend != "inductor":
            out.append(f" · {s.backend}", style="dim")
    elif p is not None and p.rank is not None:
        out.append(f"pid {p.pid} on {p.host}", style="dim")
    elif is_test(run):  # its name is its run id: the settings its compile calls passed
        mode, dynamic = compile_setting(run, "mode"), compile_setting(run, "dynamic")
        out.append(f"{mode or 'mode n/a'} · dyn={dynamic or 'n/a'}", style="dim")
    else:
        out.append(f"run {run.run_id}", style="dim")
    if run.sweep or run.sweep_done is not None:
        out.append(" · sweep", style="cyan")
    return out


def run_cells(run: Run) -> list[str]:
    """What o sorts the runs by and / searches: (run, status, mode, dynamic)."""
    s, p = run.settings, run.process
    name = f"rank {p.rank}" if p is not None and p.rank is not None else run.name
    mode = OPTION["mode"].label(s.mode) if s is not None else ""
    return [name, fout.status(run), mode, s.dynamic if s is not None else ""]


class RunSelector(Ordered, OptionList):
    """Every run, ranks first; o sorts by run, status, mode or dynamic, / filters."""

    BINDINGS = [Ordered.ESCAPE]
    spec = [("run", None), ("status", None), ("mode", None), ("dynamic", None)]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._syncing = False
        self._runs: dict[str, Run] = {}
        self._rows: list[Row] = []
        self._selected: str | None = None
        self._title = ("Runs", "")  # the count goes between
        self._hint = ""

    def on_mount(self) -> None:
        self.border_title = "Runs"

    def show(self, view: View) -> None:
        session = view.session
        self._selected = view.run.run_id if view.run else None
        ranked = rank_runs(session)  # by rank, before any other run
        first = {r.run_id for r in ranked}
        runs = ranked + [r for r in session.runs.values() if r.run_id not in first]
        self._runs = {r.run_id: r for r in runs}
        self._rows = [Row(run_cells(r), r.run_id) for r in runs]
        shown = rl.shown_words(session, view.run)
        self._title = ("Ranks", f" · {shown or 'no rank'} shown") if ranked else ("Runs", "")
        self._hint = "" if runs else view.no_run("no runs yet: r compiles")
        self.rearrange()

    def rearrange(self) -> None:
        order = self.order
        rows, self.error = ordering.arrange(self._rows, order)
        self._syncing = True
        try:
            self.clear_options()
            self.add_options([Option(run_prompt(self._runs[r.key]), id=r.key) for r in rows])
            ids = [r.key for r in rows]
            if self._selected in ids:
                self.highlighted = ids.index(self._selected)
            head, tail = self._title
            title = ordering.counted(head, len(rows), len(self._rows), order) + tail
            if order.column is not None:
                title += f" · by {ordering.marked(self.spec[order.column][0], order.column, order)}"
            self.border_title = title
            if self._hint:
                self.add_option(Option(Text(self._hint, style="dim"), disabled=True))
        finally:
            self._syncing = False

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(RunChosen(event.option.id))
