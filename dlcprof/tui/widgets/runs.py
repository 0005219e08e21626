"""Run selector: every run of the session, selectable to inspect and compare."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.widgets import OptionList
from textual.widgets.option_list import Option

from dlcprof.figures import outcome as fout
from dlcprof.figures.job import lanes as rl
from dlcprof.figures.job.ranks import rank_runs
from dlcprof.session import Run
from dlcprof.settings import OPTION
from dlcprof.tui.messages import RunChosen
from dlcprof.tui.view import View

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
    else:
        out.append(f"run {run.run_id}", style="dim")
    if run.sweep or run.sweep_done is not None:
        out.append(" · sweep", style="cyan")
    return out


class RunSelector(OptionList):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._syncing = False

    def on_mount(self) -> None:
        self.border_title = "Runs"

    def show(self, view: View) -> None:
        session, selected = view.session, view.run.run_id if view.run else None
        self._syncing = True
        try:
            self.clear_options()
            ranked = rank_runs(session)  # by rank, before any other run
            first = {r.run_id for r in ranked}
            runs = ranked + [r for r in session.runs.values() if r.run_id not in first]
            ids = [r.run_id for r in runs]
            self.add_options([Option(run_prompt(r), id=r.run_id) for r in runs])
            if selected in ids:
                self.highlighted = ids.index(selected)
            self.border_title = f"Runs ({len(ids)})" if ids else "Runs"
            shown = rl.shown_words(session, view.run)
            if ranked:
                self.border_title = f"Ranks ({len(ranked)}) · {shown or 'no rank'} shown"
            if not ids:
                hint = view.no_run("no runs yet: r compiles")
                self.add_option(Option(Text(hint, style="dim"), disabled=True))
        finally:
            self._syncing = False

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.post_message(RunChosen(event.option.id))
