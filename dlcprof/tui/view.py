"""What a pane renders from, and the small drawing helpers the panes share.

A pane never reads the clock itself: ``View.now`` is None in deterministic
mode (tests, snapshots) and in replays, so no wall-clock figure can leak in.
"""

from __future__ import annotations

from dataclasses import field
from typing import Protocol

from rich.console import Console, ConsoleOptions, RenderResult
from rich.measure import Measurement
from rich.text import Text

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.figures.job.program import no_run_yet
from dlcprof.session import Run, Session

_SPARKS = "▁▂▃▄▅▆▇█"
_EIGHTHS = " ▏▎▍▌▋▊▉█"


@data
class View:
    session: Session
    run: Run | None
    now: float | None  # wall clock for elapsed figures; None = show none
    replay: bool = False
    live: Run | None = None  # the run a worker is running now
    notes: list[ev.LogEmitted] = field(default_factory=list)  # the UI's own (bad path, save)
    on_cpu: bool | None = None  # None: not known until a worker reports

    def no_run(self, hint: str) -> str:
        """A pane's line before its first run (``hint``: the key that starts one)."""
        return no_run_yet(self.session, hint)


class Shows(Protocol):
    """A pane that repaints: it draws itself from the view."""

    def show(self, view: View) -> None: ...


def on_cpu(session: Session, run: Run | None) -> bool | None:
    """Whether ``run`` (else the worker that reported) is on the CPU; None: not known yet."""
    if run is not None and run.settings is not None:
        return run.settings.device == "cpu"
    if session.worker is not None:
        return not session.worker.cuda_available
    return None


def sparkline(values: list[float | None], width: int, top: float | None = None) -> Text:
    """The last ``width`` values as block characters; a gap where a value is missing."""
    vals = values[-width:] if width > 0 else []
    known = [v for v in vals if v is not None]
    hi = top if top is not None else (max(known) if known else 0.0)
    out = Text()
    for v in vals:
        if v is None:
            out.append("·", "dim")
        elif hi <= 0:
            out.append(_SPARKS[0])
        else:
            idx = round(min(max(v / hi, 0.0), 1.0) * (len(_SPARKS) - 1))
            out.append(_SPARKS[idx])
    return out


def hbar(fraction: float, width: int) -> str:
    """A left-aligned bar ``fraction`` of ``width`` cells long, in eighths."""
    fraction = min(max(fraction, 0.0), 1.0)
    eighths = round(fraction * width * 8)
    full, part = divmod(eighths, 8)
    bar = "█" * full + (_EIGHTHS[part] if part else "")
    return bar.ljust(width)


def span_bar(start: float, length: float, width: int) -> str:
    """A bar from fraction ``start`` spanning fraction ``length`` (a Gantt row)."""
    start = min(max(start, 0.0), 1.0)
    lead = int(start * width)
    cells = max(1, round(length * width)) if length > 0 else 1
    cells = min(cells, width - lead) if width > lead else 0
    return (" " * lead + "█" * cells).ljust(width)


class FitBar:
    """A bar that fills whatever width it is given (a table cell), then a label."""

    def __init__(self, fraction: float, style: str = "", label: str = "") -> None:
        self.fraction, self.style, self.label = fraction, style, label

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(len(self.label) + 2, options.max_width)

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(1, options.max_width - len(self.label))
        out = Text(no_wrap=True, overflow="crop")
        out.append(hbar(self.fraction, width), style=self.style)
        out.append(self.label)
        yield out
