"""Hotspots pane: where the selected run's compiling worker spent its time (py-spy)."""

from __future__ import annotations

import os
from typing import Any

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import device as fd
from dlcprof.figures import hotspots as fh
from dlcprof.figures import observer as fo
from dlcprof.session import Run
from dlcprof.tui.ordering import Figured
from dlcprof.tui.view import View
from dlcprof.tui.widgets.sorted_table import Row, SortedTable

_MAX_ROWS = 40


def _relative(path: str) -> str:
    """A user file under the cwd, relative (the sampler already shortened
    installed files to 'torch/...')."""
    return path.removeprefix(os.getcwd().rstrip("/") + "/")


def frames_title(run: Run, all_threads: bool = False) -> str:
    scope = fh.hot_scope(fh.shown_thread(run, all_threads), fh.samples_shown(run, all_threads))
    other = "the compiling thread" if all_threads else "all threads"
    return f"py-spy on the worker: {scope} · own = in the function itself · t: {other}"


def frame_columns(rows: list[fh.HotRow]) -> list[tuple[str, int | None]]:
    columns: list[tuple[str, int | None]] = [
        ("own", 5),
        ("total", 5),
        ("function", 36),
        ("file:line", 56),
        ("thread", 12),
    ]
    return columns + [("phase", 16)] if any(r.phase for r in rows) else columns


def frame_rows(rows: list[fh.HotRow]) -> list[Row]:
    """Each hot frame as a table row; ``e`` opens its file:line."""
    has_phase = any(r.phase for r in rows)
    out = []
    for i, r in enumerate(rows):
        function = Text(
            r.function, style="yellow" if r.waiting else "dim" if r.program_work else ""
        )
        where = f"{_relative(r.file)}:{r.line}"
        own, total = Figured(text.pct(r.own), r.own), Figured(text.pct(r.total), r.total)
        cells: list[object] = [own, total, function, where, r.thread]
        if has_phase:
            cells.append(r.phase or "")
        line = r.line if isinstance(r.line, int) else None
        out.append(Row(cells, str(i), (r.file, line) if line is not None else None))
    return out


def body(view: View, all_threads: bool = False) -> tuple[Group, list[fh.HotRow], Group]:
    """The pane's content: py-spy's status and the table's title, the hot
    frames, then the threads not shown, why there are none, the profile saved."""
    run = view.run
    head: list[Text] = []
    tail: list[Text] = []
    status = fd.monitors(view.session, run).get("py-spy")
    if status is not None:
        msg = status.message
        if not msg.startswith("py-spy"):
            msg = f"py-spy: {msg}"
        spy = [w for w in fo.watchers(run) if w.name == "py-spy"] if run is not None else []
        if spy and spy[0].cpu_share is not None:
            msg += f", using {text.core_share(spy[0].cpu_share)}"
        head.append(
            Text(msg, style="dim") if status.available else Text(text.na(msg), style="yellow")
        )
    why = fh.why_none(run) if run is not None else None
    rows = fh.hot_rows(run, _MAX_ROWS, all_threads) if run is not None else []
    if run is not None and rows:
        head.append(Text(frames_title(run, all_threads)))
        others = fh.other_threads(run, all_threads)
        if others:
            tail.append(Text(fh.threads_not_shown(others), style="dim"))
    elif why is not None:
        tail.append(Text(text.na(why), style="dim"))
    elif status is None or status.available:
        if view.replay:
            why = "this run holds no py-spy samples"
        elif run is None:
            why = "no py-spy samples yet (sampling starts with a run)"
        else:
            why = "no py-spy samples for this run (yet)"
        tail.append(Text(text.na(why), style="dim"))
    if run is not None and run.profile is not None:
        tail.append(Text(fh.profile_line(run.profile), style="dim"))
    return Group(*head), rows, Group(*tail)


class HotspotsPane(VerticalScroll):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.all_threads = False  # the compiling thread only, by default

    def compose(self) -> ComposeResult:
        yield Static(id="hotspots-body")
        columns = frame_columns([])
        # file:line takes the width the pane leaves it, a long path cut in its middle.
        flex = [label for label, _ in columns].index("file:line")
        yield SortedTable(columns, flex=flex, id="hotspots-table")
        yield Static(id="hotspots-tail")

    def show(self, view: View) -> None:
        head, rows, tail = body(view, self.all_threads)
        self.query_one("#hotspots-body", Static).update(head)
        table = self.query_one(SortedTable)
        table.set_columns(frame_columns(rows))  # a phase column comes with the samples
        table.fill(frame_rows(rows))
        table.display = bool(rows)
        self.query_one("#hotspots-tail", Static).update(tail)

    def tab_label(self, view: View) -> str:
        table = self.query_one(SortedTable)
        return table.counted("Hotspots") if table.rows_given else "Hotspots"
