"""Hotspots pane: where the selected run's compiling worker spent its time (py-spy)."""

from __future__ import annotations

import os

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import device as fd
from dlcprof.figures import hotspots as fh
from dlcprof.session import Run
from dlcprof.tui.view import View

_MAX_ROWS = 40


def _relative(path: str) -> str:
    """A user file under the cwd, relative (the sampler already shortened
    installed files to 'torch/...')."""
    return path.removeprefix(os.getcwd().rstrip("/") + "/")


def frames_table(run: Run) -> Table:
    samples = run.hot_frames.samples if run.hot_frames else 0
    t = Table(
        title=f"py-spy on the worker: {samples} samples (own = in the function itself)",
        title_justify="left", expand=True, box=box.SIMPLE_HEAD,
    )  # fmt: skip
    t.add_column("own", width=5, justify="right")
    t.add_column("total", width=5, justify="right")
    t.add_column("function", ratio=2, no_wrap=True, overflow="ellipsis")
    t.add_column("file:line", ratio=3, no_wrap=True, overflow="ellipsis")
    t.add_column("thread", width=12, no_wrap=True, overflow="ellipsis")
    rows = fh.hot_rows(run, _MAX_ROWS)
    has_phase = any(r.phase for r in rows)
    if has_phase:
        t.add_column("phase", width=16, no_wrap=True, overflow="ellipsis")
    for r in rows:
        cells = [
            text.pct(r.own), text.pct(r.total), r.function, f"{_relative(r.file)}:{r.line}",
            r.thread,
        ]  # fmt: skip
        if has_phase:
            cells.append(r.phase or "")
        t.add_row(*cells)
    return t


class HotspotsPane(VerticalScroll):
    def compose(self):  # type: ignore[override]
        yield Static(id="hotspots-body")

    def show(self, view: View) -> None:
        run = view.run
        parts: list[Table | Text] = []
        status = fd.monitors(view.session, run).get("py-spy")
        if status is not None:
            msg = status.message
            if not msg.startswith("py-spy"):
                msg = f"py-spy: {msg}"
            parts.append(
                Text(msg, style="dim") if status.available else Text(text.na(msg), style="yellow")
            )
        if run is not None and run.hot_frames is not None and run.hot_frames.rows:
            parts.append(frames_table(run))
        elif status is None or status.available:
            if view.replay:
                why = "this run holds no py-spy samples"
            elif run is None:
                why = "no py-spy samples yet (sampling starts with a run)"
            else:
                why = "no py-spy samples for this run (yet)"
            parts.append(Text(text.na(why), style="dim"))
        if run is not None and run.profile is not None:
            p = run.profile
            parts.append(Text(f"{p.format} profile ({p.samples} samples): {p.path}", style="dim"))
        self.query_one("#hotspots-body", Static).update(Group(*parts))
