"""The report's smallest pieces: a figure with its words, a labelled row, a
recompile reason as every view words it, an event time as people read it."""

from __future__ import annotations

import datetime as _dt

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import recompiles as fr


def iso(t: float | None) -> str | None:
    """An event time as local ISO 8601, to the second."""
    if t is None:
        return None
    return (
        _dt.datetime.fromtimestamp(t, _dt.timezone.utc).astimezone().isoformat(timespec="seconds")
    )


@data(frozen=True)
class Figure:
    """One figure as every format states it: the number (None when not known)
    and its words ("1.93 s", or "n/a (not finished)" with ``na`` set)."""

    value: float | None
    text: str
    na: bool = False

    def __str__(self) -> str:
        return self.text


def unknown(why: str) -> Figure:
    return Figure(None, text.na(why), True)


def seconds(x: float | None, why: str) -> Figure:
    """Seconds as every view words them; "n/a (why)" when not known."""
    return Figure(x, text.secs(x)) if x is not None else unknown(why)


@data(frozen=True)
class Row:
    label: str
    text: str
    na: bool = False


@data(frozen=True)
class Kpi:
    value: str
    label: str
    tone: str = ""  # "good" | "bad" | ""
    na: bool = False


@data
class ReasonText:
    """A guard-failure reason: the newest failed guard (as every view words
    it), and the whole of it for a hover or the JSON."""

    newest: str
    full: str
    guard: str  # the newest guard alone, to cut without losing ``at``
    at: str

    def __str__(self) -> str:
        return self.newest


def reason_text(reason: str | None) -> ReasonText | None:
    newest = fr.newest_reason(reason)
    return ReasonText(str(newest), reason or "", newest.guard, newest.at) if newest else None
