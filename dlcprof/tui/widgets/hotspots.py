"""Hotspots pane: where the selected run's compiling worker spent its time (py-spy)."""

from __future__ import annotations

import os
from typing import Any

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import device as fd
from dlcprof.figures import hotspots as fh
from dlcprof.figures import observer as fo
from dlcprof.session import Run
from dlcprof.tui.view import View

_MAX_ROWS = 40


def _relative(path: str) -> str:
    """A user file under the cwd, relative (the sampler already shortened
    installed files to 'torch/...')."""
    return path.removeprefix(os.getcwd().rstrip("/") + "/")


def frames_table(run: Run, all_threads: bool = False) -> Table:
    scope = fh.hot_scope(fh.shown_thread(run, all_threads), fh.samples_shown(run, all_threads))
    t = Table(
        title=f"py-spy on the worker: {scope} · own = in the function itself · t: "
        + ("the compiling thread" if all_threads else "all threads"),
        title_justify="left",
        expand=True,
        box=box.SIMPLE_HEAD,
    )
    t.add_column("own", width=5, justify="right")
    t.add_column("total", width=5, justify="right")
    t.add_column("function", ratio=2, no_wrap=True, overflow="ellipsis")
    t.add_column("file:line", ratio=3, no_wrap=True, overflow="ellipsis")
    t.add_column("thread", width=12, no_wrap=True, overflow="ellipsis")
    rows = fh.hot_rows(run, _MAX_ROWS, all_threads)
    has_phase = any(r.phase for r in rows)
    if has_phase:
        t.add_column("phase", width=16, no_wrap=True, overflow="ellipsis")
    for r in rows:
        function = Text(
            r.function, style="yellow" if r.waiting else "dim" if r.program_work else ""
        )
        cells = [
            text.pct(r.own),
            text.pct(r.total),
            function,
            f"{_relative(r.file)}:{r.line}",
            r.thread,
        ]
        if has_phase:
            cells.append(r.phase or "")
        t.add_row(*cells)
    others = fh.other_threads(run, all_threads)
    if others:
        t.caption = fh.threads_not_shown(others)
        t.caption_justify = "left"
    return t


def body(view: View, all_threads: bool = False) -> Group:
    """The pane's content: py-spy's status, the hot frames or why there are none."""
    run = view.run
    parts: list[Table | Text] = []
    status = fd.monitors(view.session, run).get("py-spy")
    if status is not None:
        msg = status.message
        if not msg.startswith("py-spy"):
            msg = f"py-spy: {msg}"
        spy = [w for w in fo.watchers(run) if w.name == "py-spy"] if run is not None else []
        if spy and spy[0].cpu_share is not None:
            msg += f", using {text.core_share(spy[0].cpu_share)}"
        parts.append(
            Text(msg, style="dim") if status.available else Text(text.na(msg), style="yellow")
        )
    why = fh.why_none(run) if run is not None else None
    if run is not None and fh.hot_rows(run, 1, all_threads):
        parts.append(frames_table(run, all_threads))
    elif why is not None:
        parts.append(Text(text.na(why), style="dim"))
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
    return Group(*parts)


class HotspotsPane(VerticalScroll):
    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.all_threads = False  # the compiling thread only, by default

    def compose(self) -> ComposeResult:
        yield Static(id="hotspots-body")

    def show(self, view: View) -> None:
        self.query_one("#hotspots-body", Static).update(body(view, self.all_threads))
