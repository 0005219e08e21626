"""How a table pane's rows are ordered and which it shows: one sort column
and direction, and a filter, per pane for the session. No Textual: every
table pane (tui/widgets/sorted_table.py) and the Log pane read this.

A cell sorts by the figure it shows ("840 µs" before "1.93 s", "n/a" last),
else by its words, so a pane hands over the cells it draws and nothing else.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from rich.text import Text

REGEX = "re:"  # a filter that starts with this is a regular expression
# What a unit multiplies its figure by, so one column's figures compare.
_UNITS = {
    "µs": 1e-6,
    "us": 1e-6,
    "ms": 1e-3,
    "s": 1.0,
    "min": 60.0,
    "h": 3600.0,
    "%": 1.0,
    "x": 1.0,
    "×": 1.0,
    "kb": 1e3,
    "mb": 1e6,
    "gb": 1e9,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
}
R = TypeVar("R", bound=Sequence[object])
_FIGURE = re.compile(r"^[~≈<>+]?\s*(-?[\d,]*\.?\d+)\s*([a-zA-Zµ×%/]*)")


@dataclass(frozen=True)
class Order:
    """A pane's sort column (None: the pane's own order), direction, and filter."""

    column: int | None = None
    descending: bool = True
    query: str = ""

    def sorted_by(self, column: int) -> Order:
        """Sort by ``column``: a new column sorts largest first, the same one reverses."""
        descending = not self.descending if column == self.column else True
        return Order(column, descending, self.query)

    def filtered(self, query: str) -> Order:
        return Order(self.column, self.descending, query)

    def sorted_by_same(self, other: Order) -> bool:
        return (self.column, self.descending) == (other.column, other.descending)


def plain(cell: object) -> str:
    """The words a cell shows (a bar or other drawing: its label, if any)."""
    if isinstance(cell, Text):
        return cell.plain
    if isinstance(cell, str):
        return cell
    return str(getattr(cell, "label", "")).strip()


def sort_value(cell: object) -> tuple[int, float | str]:
    """(0, figure) for a cell that reads as one, (1, words) otherwise, (2, "")
    for an empty or n/a cell, so blanks end up last either way round."""
    words = plain(cell).strip()
    if not words or words.startswith("n/a") or words in ("?", "—", "-"):
        return 2, ""
    total, found = 0.0, False
    # "2 min 05 s" and "1 h 02 min": every figure with its own unit.
    for m in re.finditer(r"(-?[\d,]*\.?\d+)\s*(µs|us|ms|min|h|s)\b", words):
        total += float(m.group(1).replace(",", "")) * _UNITS[m.group(2)]
        found = True
    if found and re.fullmatch(r"[\d\s.,µusminh-]+", words):
        return 0, total
    m = _FIGURE.match(words)
    if m is not None:
        try:
            value = float(m.group(1).replace(",", ""))
        except ValueError:
            return 1, words.lower()
        unit = m.group(2).lower().split("/")[0]
        below = 0.5 if words.startswith("<") else 1.0  # "<1%" is less than 1%
        if math.isfinite(value):
            return 0, value * _UNITS.get(unit, 1.0) * below
    return 1, words.lower()


def matcher(query: str) -> Callable[[str], bool] | str:
    """What a filter keeps: a substring (any case), or a regex after ``re:``;
    a bad regex is the one line that says what is wrong."""
    if query.startswith(REGEX):
        try:
            pattern = re.compile(query[len(REGEX) :], re.IGNORECASE)
        except re.error as e:
            return f"not a regex: {e} (filter as typed after re:)"
        return lambda line: pattern.search(line) is not None
    needle = query.lower()
    return lambda line: needle in line.lower()


def arrange(
    rows: Sequence[R], order: Order, words: Callable[[R], str] | None = None
) -> tuple[list[R], str | None]:
    """The rows (each its cells) a pane shows, in its order; and the filter's
    error, if any (then every row shows). ``words``: what the filter searches
    in a row, when more than its cells (a log line's time and text)."""
    shown = list(rows)
    error = None
    if order.query:
        keep = matcher(order.query)
        if isinstance(keep, str):
            error = keep
        else:
            said = words or (lambda r: " ".join(plain(c) for c in r))
            shown = [r for r in rows if keep(said(r))]
    if order.column is not None:
        c = order.column
        values = {id(r): sort_value(r[c]) if c < len(r) else (2, "") for r in shown}
        figures = [r for r in shown if values[id(r)][0] < 2]
        blanks = [r for r in shown if values[id(r)][0] == 2]
        figures.sort(key=lambda r: values[id(r)], reverse=order.descending)
        shown = figures + blanks
    return shown, error


def marked(label: str, column: int, order: Order) -> str:
    """A column's header with the sort mark when the pane sorts by it."""
    if order.column != column:
        return label
    return f"{label} {'▼' if order.descending else '▲'}"


def counted(title: str, shown: int, total: int, order: Order) -> str:
    """A pane's title with "12 of 82" while a filter hides rows."""
    if order.query:
        return f"{title} ({shown} of {total})"
    return f"{title} ({total})" if total else title
