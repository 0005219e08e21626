"""The paper screen: the findings of arXiv 2611.04273 beside this machine's,
filling in as the runs of ``dlcprof paper --quick`` finish."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import Screen
from textual.widgets import Footer, Static

from dlcprof.figures import paper as fpa
from dlcprof.session import Run, Session

REFRESH_S = 0.25  # the screen polls the session: it is not one of the main screen's panes


def progress(session: Session, live: Run | None, replay: bool) -> Text:
    """Which run of the plan is going, or how the plan ended."""
    plan = session.paper
    if plan is None:
        return Text(fpa.paper_none(replay), style="dim")
    runs = fpa.paper_runs(session)
    n = fpa.planned_runs(plan)
    if live is not None and live in runs:
        i = runs.index(live) + 1
        return Text.assemble(("▶ ", "bold green"), f"[{i}/{n}] {fpa.step(live)}",
                             ("  · c cancels", "dim"))  # fmt: skip
    done = sum(not r.live for r in runs)
    failed = [r for r in runs if r.status != "ok" and not r.live]
    if failed:
        return Text(fpa.paper_stopped(done, n, failed[-1].name, failed[-1].status, replay),
                    style="bold yellow")  # fmt: skip
    return Text(fpa.paper_done(done, n, replay), style="dim")


def findings_table(f: fpa.Findings) -> RenderableType:
    """The same tables ``dlcprof paper`` prints, from figures.paper."""
    t = Table(expand=True, header_style="bold", title_justify="left",
              title=fpa.PAPER_TITLE)  # fmt: skip
    t.add_column(fpa.PAPER_COLUMNS[0], style="bold", ratio=2)
    t.add_column(fpa.PAPER_COLUMNS[1], ratio=2)
    t.add_column(fpa.PAPER_COLUMNS[2], ratio=5)
    for row in fpa.summary_rows(f):
        t.add_row(*row)
    w = Table(expand=True, header_style="bold", title=fpa.PAPER_WORKLOADS,
              title_justify="left")  # fmt: skip
    for i, col in enumerate(fpa.WORKLOAD_COLUMNS):
        # The workload and its kind whole; the figures wrap at their spaces.
        w.add_column(col, justify="right" if i >= 2 else "left", no_wrap=i < 2,
                     overflow="fold")  # fmt: skip
    for row in fpa.workload_rows(f):
        w.add_row(*row)
    return Group(t, Text(""), w, *(Text(n, style="dim") for n in fpa.notes(f)))


class PaperScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("r", "app.paper(True)", "Run again"),
        Binding("c", "app.cancel", "Cancel"),
    ]

    def __init__(self) -> None:
        super().__init__()
        self._shown: tuple[int, str | None] | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="paper-progress")
        with VerticalScroll(id="paper-body"):
            yield Static(id="paper-tables")
        yield Footer()

    def on_mount(self) -> None:
        self.set_interval(REFRESH_S, self.refresh_tables)
        self.refresh_tables()

    def refresh_tables(self) -> None:
        """Repaint when an event was folded or the live run changed."""
        session = self.app.session  # type: ignore[attr-defined]
        live = self.app.runs.live_run()  # type: ignore[attr-defined]
        key = (len(session.events), live.run_id if live else None)
        if key == self._shown:
            return
        self._shown = key
        replay = self.app.replay  # type: ignore[attr-defined]
        self.query_one("#paper-progress", Static).update(progress(session, live, replay))
        f = fpa.findings(session)
        body = findings_table(f) if f is not None else Text("")
        self.query_one("#paper-tables", Static).update(body)
