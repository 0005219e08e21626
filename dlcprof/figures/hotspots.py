"""The compiler's hot frames (py-spy on the worker), per run."""

from __future__ import annotations

from dataclasses import dataclass

from dlcprof.figures.device import finite
from dlcprof.session import Run

KEYS = ("function", "file", "line", "thread", "own", "total", "phase")


@dataclass
class HotRow:
    function: str
    file: str
    line: int | str
    thread: str
    own: float | None  # share of the samples spent in the function itself
    total: float | None  # ... with its callees
    phase: str | None  # the compile phase the samples fell in (None: not compiling)


def share(value: object, samples: int) -> float | None:
    """A sample count as a fraction of ``samples``."""
    if not finite(value) or samples <= 0:
        return None
    return float(value) / samples  # type: ignore[arg-type]


def hot_rows(run: Run, limit: int = 20) -> list[HotRow]:
    """The heaviest frames first (rows come grouped by phase)."""
    hot = run.hot_frames
    if hot is None:
        return []
    raw = sorted(hot.rows, key=lambda r: (-(r.get("own") or 0), -(r.get("total") or 0)))
    return [
        HotRow(
            function=str(r.get("function", "?")),
            file=str(r.get("file", "?")),
            line=r.get("line", "?"),
            thread=str(r.get("thread", "")),
            own=share(r.get("own"), hot.samples),
            total=share(r.get("total"), hot.samples),
            phase=r.get("phase") or None,
        )
        for r in raw[:limit]
    ]
