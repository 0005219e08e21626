"""Every view of a session as plain text: the TUI panes, the headless console
tables, the Markdown report and the HTML report (the parity tests)."""

from __future__ import annotations

import html
import re

from rich.console import Console, RenderableType

from dlcprof.console import run_summary
from dlcprof.figures import modes as fm
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Run, Session
from dlcprof.tables import modes_table
from dlcprof.tui.ordering import plain as cell_words
from dlcprof.tui.view import View
from dlcprof.tui.widgets.benchmark import BenchmarkReport
from dlcprof.tui.widgets.modes import ModesReport
from dlcprof.tui.widgets.recompiles import RecompileReport, recompile_rows

WIDTH = 400  # wide enough that no view wraps a sentence


def plain(renderable: RenderableType) -> str:
    """A Rich renderable as plain text, unwrapped."""
    console = Console(width=WIDTH, record=True, color_system=None, file=open("/dev/null", "w"))  # noqa: SIM115
    console.print(renderable)
    return console.export_text()


def unhtml(page: str) -> str:
    """An HTML page's visible text."""
    page = re.sub(r"<style.*?</style>|<title>.*?</title>", "", page, flags=re.S)
    return html.unescape(re.sub(r"<[^>]+>", "", page)).replace("\xa0", " ")


def views(session: Session, run: Run) -> dict[str, str]:
    """What each view (TUI panes, console tables, Markdown, HTML) says of ``run``."""
    view = View(session, run, now=None, replay=True)
    tables = [modes_table(t) for t in fm.mode_tables(session)]  # `dlcprof run --mode all`
    return {
        "tui": plain(BenchmarkReport(view)) + recompiles(view) + plain(ModesReport(view)),
        "console": plain(run_summary(run, session)) + "".join(plain(t) for t in tables),
        "markdown": render_markdown(build_model(session)),
        "html": unhtml(render_html(build_model(session))),
    }


def recompiles(view: View) -> str:
    """The Recompiles pane: what comes before its table, the table's rows, what after."""
    rows = "".join(" ".join(cell_words(c) for c in r) + "\n" for r in recompile_rows(view.run))
    return plain(RecompileReport(view, "head")) + rows + plain(RecompileReport(view, "tail"))
