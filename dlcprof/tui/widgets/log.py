"""Log pane: graph breaks with file:line, warnings, errors, probes that are n/a."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.widgets import RichLog

from dlcprof import events as ev
from dlcprof.tui.view import NA, View

_MAX_PER_REFRESH = 400  # a flooding workload must not stall a repaint
_LEVEL_STYLE = {"info": "", "warning": "yellow", "error": "bold red"}


def log_line(e: ev.Event, t0: float | None) -> tuple[Text, Text] | None:
    """One log line for an event, or None when the event is not a log matter.

    ``t0`` None: no time stamp (UI notes carry wall-clock times)."""
    stamp = Text(f"{max(e.t - t0, 0.0):8.2f}s" if t0 is not None else "       ui", style="dim")
    match e:
        case ev.GraphBroken():
            body = Text.assemble(
                ("graph break ", "bold magenta"), (f"{e.location} ", "underline"), e.reason
            )
            if e.hints:
                body.append(f"  hint: {e.hints[0]}", style="dim")
        case ev.LogEmitted():
            body = Text.assemble(
                (f"{e.level} ", _LEVEL_STYLE.get(e.level, "")), (f"[{e.source}] ", "dim"), e.message
            )
        case ev.ErrorRaised():
            body = Text.assemble((f"ERROR ({e.stage}) ", "bold white on red"), (" " + e.message))
            tail = [ln for ln in e.traceback.strip().splitlines() if ln.strip()][-6:]
            for ln in tail:
                body.append("\n" + " " * 10 + ln, style="dim red")
        case ev.ProbeUnavailable():
            body = Text.assemble((f"{e.probe}: {NA} ", "yellow"), f"because {e.reason}")
        case ev.WorkerExited():
            bad = (e.signal is not None or (e.returncode or 0) != 0) and not e.cancelled
            body = Text(
                f"worker exited: {e.message}",
                style="bold red" if bad else ("yellow" if e.cancelled else "dim"),
            )
        case ev.RunStarted():
            body = Text(
                f"── run {e.run_id}: {e.workload} · {e.mode} · dynamic={e.dynamic} · "
                f"{e.backend} · {e.device} ({e.device_name}) · {e.dtype} · size={e.size} · "
                f"cache={e.cache} · torch {e.torch_version}",
                style="bold",
            )
        case ev.RunFinished():
            body = Text(
                f"── run {e.run_id} finished: {e.status} in {e.wall_s:.2f} s",
                style="bold green" if e.status == "ok" else "bold red",
            )
        case ev.RecompileTriggered():
            body = Text.assemble(("recompile ", "bold yellow"), e.reason)
        case ev.RecompileLimitHit():
            body = Text.assemble(("RECOMPILE LIMIT HIT ", "bold white on red"), " " + e.message)
        case ev.MonitorStatus():
            body = Text(f"monitor {e.monitor}: {e.message}", style="dim")
        case ev.ProfileSaved():
            body = Text(f"{e.format} profile saved: {e.path}", style="dim")
        case _:
            return None
    return stamp, body


def _hanging(stamp: Text, body: Text) -> Table:
    """Stamp in its own column, so wrapped lines stay indented under the message."""
    grid = Table.grid(padding=(0, 1), expand=True)
    grid.add_column(width=9, no_wrap=True)
    grid.add_column(ratio=1)
    grid.add_row(stamp, body)
    return grid


class LogPane(RichLog):
    """Appends what is new since the last refresh; rebuilds when the run changes."""

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(max_lines=5000, wrap=True, markup=False, highlight=False, **kwargs)
        self._run_id: str | None = None
        self._seen = 0
        self._notes_seen = 0
        self._last_rid: str | None = None
        self.errors = 0

    def show(self, view: View, notes: list[ev.LogEmitted]) -> None:
        run_id = view.run.run_id if view.run else None
        events = view.session.events
        if run_id != self._run_id:
            self.clear()
            self._run_id, self._seen, self._notes_seen, self.errors = run_id, 0, 0, 0
            self._last_rid = None
        # Times count from the selected run's start (else the session's first event).
        t0 = view.run.started_t if view.run and view.run.started_t else None
        t0 = t0 if t0 is not None else (events[0].t if events else 0.0)
        new = events[self._seen :]
        self._seen = len(events)
        lines: list[tuple[Text, Text]] = []
        for e in new:
            rid = getattr(e, "run_id", None)
            if rid is not None:
                self._last_rid = rid
                if rid != run_id:
                    continue
            # A worker's exit carries no run id: it belongs to the run it ended.
            if isinstance(e, ev.WorkerExited) and self._last_rid not in (None, run_id):
                continue
            line = log_line(e, t0)
            if line is not None:
                lines.append(line)
                if isinstance(e, ev.ErrorRaised) or (
                    isinstance(e, ev.WorkerExited) and e.signal and not e.cancelled
                ):
                    self.errors += 1
        for note in notes[self._notes_seen :]:
            line = log_line(note, None)
            if line is not None:
                lines.append(line)
        self._notes_seen = len(notes)
        if len(lines) > _MAX_PER_REFRESH:
            skipped = len(lines) - _MAX_PER_REFRESH
            self.write(Text(f"… {skipped} lines not shown (kept in the session)", style="dim"))
            lines = lines[-_MAX_PER_REFRESH:]
        for stamp, body in lines:
            self.write(_hanging(stamp, body), expand=True)
