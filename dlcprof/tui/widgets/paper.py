"""The paper pane: the findings of arXiv 2611.04273 beside this machine's,
filling in as the runs of ``dlcprof paper --quick`` finish (on its own screen)."""

from __future__ import annotations

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical, VerticalScroll
from textual.widgets import Static

from dlcprof import tables
from dlcprof.figures import paper as fpa
from dlcprof.session import Run, Session
from dlcprof.tui.view import View


def progress(session: Session, live: Run | None, replay: bool) -> Text:
    """Which run of the plan is going, or how the plan ended."""
    plan = session.paper
    if plan is None:
        return Text(fpa.paper_none(replay), style="dim")
    runs = fpa.paper_runs(session)
    n = fpa.planned_runs(plan)
    if live is not None and live in runs:
        i = runs.index(live) + 1
        return Text.assemble(
            ("▶ ", "bold green"), f"[{i}/{n}] {fpa.step(live)}", ("  · c cancels", "dim")
        )
    done = sum(not r.live for r in runs)
    failed = [r for r in runs if r.status != "ok" and not r.live]
    if failed:
        return Text(
            fpa.paper_stopped(done, n, failed[-1].name, failed[-1].status, replay),
            style="bold yellow",
        )
    return Text(fpa.paper_done(done, n, replay), style="dim")


class PaperPane(Vertical):
    def compose(self) -> ComposeResult:
        yield Static(id="paper-progress")
        with VerticalScroll(id="paper-body"):
            yield Static(id="paper-tables")

    def show(self, view: View) -> None:
        self.query_one("#paper-progress", Static).update(
            progress(view.session, view.live, view.replay)
        )
        f = fpa.findings(view.session)
        body = tables.paper_tables(f, fill=True) if f is not None else Text("")
        self.query_one("#paper-tables", Static).update(body)
