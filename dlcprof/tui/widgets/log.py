"""Log pane: graph breaks with file:line, warnings, errors, probes that are n/a."""

from __future__ import annotations

import time
from collections import deque
from typing import Any

from rich.table import Table
from rich.text import Text
from textual.events import Resize
from textual.widgets import RichLog

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import hotspots as fh
from dlcprof.figures import live_log as ll
from dlcprof.figures import outcome as fout
from dlcprof.tui import ordering
from dlcprof.tui.view import View
from dlcprof.tui.widgets.sorted_table import Ordered

_MAX_QUEUED = 200  # newest lines kept for drawing; older ones are counted, not drawn
FLUSH_BUDGET_S = 0.008  # drawing time per UI tick, so keys stay answered
_LEVEL_STYLE = {"info": "", "warning": "yellow", "error": "bold red"}
# The mark and the style of each part of a line figures.live_log.event_line words.
_EVENT_STYLE: dict[type[ev.Event], tuple[str, dict[str, str]]] = {
    ev.RunStarted: ("── ", {ll.HEAD: "bold"}),
    ev.RecompileTriggered: ("", {ll.HEAD: "bold yellow"}),
    ev.RecompileLimitHit: (
        "",
        {ll.HEAD: "bold white on red", ll.PLACE: "underline", ll.ASIDE: "dim"},
    ),
    ev.CompileRaised: ("", {ll.HEAD: "bold white on red", ll.PLACE: "underline", ll.ASIDE: "dim"}),
    ev.EagerCallsCounted: ("", {ll.HEAD: "bold red"}),
    ev.GraphBroken: ("", {ll.HEAD: "bold magenta", ll.PLACE: "underline", ll.ASIDE: "dim"}),
    ev.LogEmitted: ("", {ll.ASIDE: "dim"}),  # its head in its level's style
    ev.ErrorRaised: ("", {ll.HEAD: "bold white on red", ll.TRACE: "dim red"}),
    ev.ProbeUnavailable: ("", {ll.HEAD: "yellow"}),
}
_INDENT = " " * 10  # a traceback line under its message, past the time stamp


def _whole_line_style(e: ev.Event) -> str | None:
    """The one style of a line shown all alike, or None for a line styled by parts."""
    match e:
        case ev.WorkerExited():
            bad = (e.signal is not None or (e.returncode or 0) != 0) and not e.cancelled
            return "bold red" if bad else ("yellow" if e.cancelled else "dim")
        case ev.MonitorStatus():
            return "dim"
    return None


def _placed(e: ev.Event, line: ll.Line) -> Text:
    whole = _whole_line_style(e)
    if whole is not None:
        return Text("".join(words for words, _ in line), style=whole)
    mark, styles = _EVENT_STYLE[type(e)]
    if isinstance(e, ev.RunStarted):  # a rule between runs, with the run's id
        mark = f"{mark}run {e.run_id}: "
    if isinstance(e, ev.LogEmitted):
        styles = {**styles, ll.HEAD: _LEVEL_STYLE.get(e.level, "")}
    (head, _), *rest = line
    body = Text.assemble((f"{mark}{head}", styles.get(ll.HEAD, "")))
    for words, part in rest:
        if part == ll.TRACE:
            words = f"\n{_INDENT}{words}"
        body.append(words, style=styles.get(part, ""))
    return body


def log_line(e: ev.Event, t0: float | None) -> tuple[Text, Text] | None:
    """One log line for an event, or None when the event is not a log matter.

    ``t0`` None: no time stamp (UI notes carry wall-clock times)."""
    stamp = Text(f"{max(e.t - t0, 0.0):8.2f}s" if t0 is not None else "       ui", style="dim")
    line = ll.event_line(e)
    if line is not None:
        return stamp, _placed(e, line)
    match e:
        case ev.RunFinished():
            body = Text(
                f"── run {e.run_id} finished: {e.status} in {text.secs(e.wall_s)}",
                style="bold green" if e.status == "ok" else "bold red",
            )
        case ev.NothingCompiled():
            lines = [fout.headline(e), *fout.hint_lines(e)]
            body = Text("\n".join(lines), style="bold white on red")
        case ev.ProfileSaved():
            body = Text(fh.profile_line(e), style="dim")
        case _:
            return None
    return stamp, body


_LOGGED = (
    ev.GraphBroken,
    ev.LogEmitted,
    ev.ErrorRaised,
    ev.ProbeUnavailable,
    ev.WorkerExited,
    ev.RunStarted,
    ev.RunFinished,
    ev.RecompileTriggered,
    ev.RecompileLimitHit,
    ev.CompileRaised,
    ev.EagerCallsCounted,
    ev.NothingCompiled,
    ev.MonitorStatus,
    ev.ProfileSaved,
)


def _hanging(stamp: Text, body: Text) -> Table:
    """Stamp in its own column, so wrapped lines stay indented under the message."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=9, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(stamp, body)
    return grid


class LogPane(Ordered, RichLog):
    """Collects what is new cheaply on every change; renders it only when shown.

    Drawing a line costs 1-2 ms in RichLog: a flooding workload (20k lines)
    would stall the UI if every line were drawn. So at most the newest
    ``_MAX_QUEUED`` lines wait to be drawn (the pane says how many it left
    out; they stay in the session), and each UI tick draws for at most
    ``FLUSH_BUDGET_S`` while the pane is visible. A filter (``/``) redraws
    the newest ``_MAX_QUEUED`` lines drawn so far that match it.
    """

    BINDINGS = [Ordered.ESCAPE]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(max_lines=5000, wrap=True, markup=False, highlight=False, **kwargs)
        self._run_id: str | None = None
        self._seen = 0
        self._notes_seen = 0
        self._last_rid: str | None = None
        self._pending: deque[tuple[ev.Event, float | None]] = deque(maxlen=_MAX_QUEUED)
        self._dropped = 0
        self.errors = 0
        self._drawn: deque[tuple[Text, Text]] = deque(maxlen=5000)  # what a filter sifts
        self._matching = 0

    @property
    def has_pending(self) -> bool:
        return bool(self._pending) or self._dropped > 0

    def tab_label(self, view: View) -> str:
        title = f"Log ⚠ {self.errors}" if self.errors else "Log"
        if not self.order.query:
            return title
        return ordering.counted(title, self._matching, len(self._drawn), self.order)

    def rearrange(self) -> None:
        """Draw again what the filter keeps of the lines drawn so far."""
        self.clear()
        kept, self.error = ordering.arrange(list(self._drawn), self.order, _words)
        self._matching = len(kept)
        if len(kept) > _MAX_QUEUED:
            left = len(kept) - _MAX_QUEUED
            self.write(Text(f"… {left} earlier matching lines not shown here", style="dim"))
        for stamp, body in kept[-_MAX_QUEUED:]:
            self.write(_hanging(stamp, body), expand=True)

    def show(self, view: View) -> None:
        """Queue the new log-worthy events of the selected run and the UI's notes
        (no rendering: ``flush`` draws while the pane shows)."""
        run_id = view.run.run_id if view.run else None
        events = view.session.events
        if run_id != self._run_id:
            self.clear()
            self._drawn.clear()
            self._matching = 0
            self._run_id, self._seen, self._notes_seen, self.errors = run_id, 0, 0, 0
            self._last_rid, self._dropped = None, 0
            self._pending.clear()
        # Times count from the selected run's start (else the session's first event).
        t0 = view.run.started_t if view.run and view.run.started_t else None
        t0 = t0 if t0 is not None else (events[0].t if events else 0.0)
        for i in range(self._seen, len(events)):
            e = events[i]
            rid = getattr(e, "run_id", None)
            if rid is not None:
                self._last_rid = rid
                if rid != run_id:
                    continue
            if not isinstance(e, _LOGGED):
                continue
            # A worker's exit carries no run id: it belongs to the run it ended.
            if isinstance(e, ev.WorkerExited):
                if self._last_rid not in (None, run_id):
                    continue
                if e.signal and not e.cancelled:
                    self.errors += 1
            elif isinstance(e, ev.ErrorRaised):
                self.errors += 1
            self._queue(e, t0)
        self._seen = len(events)
        for note in view.notes[self._notes_seen :]:
            self._queue(note, None)
        self._notes_seen = len(view.notes)

    def _queue(self, e: ev.Event, t0: float | None) -> None:
        if len(self._pending) == self._pending.maxlen:
            self._dropped += 1
        self._pending.append((e, t0))

    def on_show(self) -> None:
        self._ensure_sized()

    def _ensure_sized(self) -> None:
        # Textual 8.2 can skip the first Resize of a pane shown right after a
        # scroll elsewhere, and RichLog draws nothing until it has one.
        if not self._size_known and self.size.width:
            self.on_resize(Resize(self.size, self.virtual_size))

    def flush(self, budget_s: float = FLUSH_BUDGET_S) -> None:
        """Draw queued lines for at most ``budget_s``; the rest wait for the next tick."""
        self._ensure_sized()
        deadline = time.perf_counter() + budget_s
        if self._dropped:
            self.write(
                Text(f"… {self._dropped} lines not shown here (kept in the session)", style="dim")
            )
            self._dropped = 0
        keep = ordering.matcher(self.order.query) if self.order.query else None
        while self._pending and time.perf_counter() < deadline:
            e, t0 = self._pending.popleft()
            line = log_line(e, t0)
            if line is None:
                continue
            self._drawn.append(line)
            if keep is None or isinstance(keep, str) or keep(_words(line)):
                self._matching += 1
                self.write(_hanging(*line), expand=True)


def _words(line: tuple[Text, Text]) -> str:
    """What a filter searches in a log line: its time and its words."""
    return f"{line[0].plain} {line[1].plain}"
