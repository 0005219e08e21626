"""Hotspots pane: where the compiling worker spends its time, from py-spy."""

from __future__ import annotations

import os

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof.report import fmt
from dlcprof.report import summary as sm
from dlcprof.session import Session
from dlcprof.tui.view import NA, View

_MAX_ROWS = 40


def _relative(path: str) -> str:
    """A user file under the cwd, relative (the sampler already shortened
    installed files to 'torch/...')."""
    return path.removeprefix(os.getcwd().rstrip("/") + "/")


def frames_table(session: Session, hot: ev.HotFramesSampled) -> Table:
    t = Table(
        title=f"py-spy on the worker: {hot.samples} samples (own = in the function itself)",
        title_justify="left", expand=True, box=box.SIMPLE_HEAD,
    )  # fmt: skip
    t.add_column("own", width=5, justify="right")
    t.add_column("total", width=5, justify="right")
    t.add_column("function", ratio=2, no_wrap=True, overflow="ellipsis")
    t.add_column("file:line", ratio=3, no_wrap=True, overflow="ellipsis")
    t.add_column("thread", width=12, no_wrap=True, overflow="ellipsis")
    rows = sm.hotspot_rows(session, _MAX_ROWS)  # heaviest first
    has_phase = any(r["phase"] for r in rows)
    if has_phase:
        t.add_column("phase", width=16, no_wrap=True, overflow="ellipsis")
    for row in rows:
        where = f"{_relative(str(row.get('file', '?')))}:{row.get('line', '?')}"
        cells = [
            fmt.pct(sm.hotspot_share(row.get("own"), hot.samples)),
            fmt.pct(sm.hotspot_share(row.get("total"), hot.samples)),
            str(row.get("function", "?")), where, str(row.get("thread", "")),
        ]  # fmt: skip
        if has_phase:
            cells.append(str(row.get("phase") or ""))
        t.add_row(*cells)
    return t


class HotspotsPane(VerticalScroll):
    def compose(self):  # type: ignore[override]
        yield Static(id="hotspots-body")

    def show(self, view: View) -> None:
        session = view.session
        parts: list[Table | Text] = []
        status = session.monitors.get("py-spy")
        if status is not None:
            msg = (
                status.message
                if status.message.startswith("py-spy")
                else f"py-spy: {status.message}"
            )
            if status.available:
                parts.append(Text(msg, style="dim"))
            else:
                parts.append(Text(f"{NA} — {msg}", style="yellow"))
        hot = session.hot_frames
        if hot is not None and hot.rows:
            latest = session.latest_run
            if view.run is not None and latest is not None and view.run is not latest:
                # The session keeps the newest aggregate only.
                parts.append(Text(f"from the newest run ({latest.run_id}), not the selected one",
                                  style="yellow"))  # fmt: skip
            parts.append(frames_table(session, hot))
        elif status is None or status.available:
            why = (
                "this session holds no py-spy samples"
                if view.replay
                else "no py-spy samples yet (sampling starts with a run)"
            )
            parts.append(Text(f"{NA}: {why}", style="dim"))
        saved = [e for e in session.events if isinstance(e, ev.ProfileSaved)]
        for e in saved[-3:]:
            parts.append(Text(f"{e.format} profile ({e.samples} samples): {e.path}", style="dim"))
        self.query_one("#hotspots-body", Static).update(Group(*parts))
