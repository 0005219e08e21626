"""How a table pane's rows are ordered and which it shows: one sort column
and direction, and a filter, per pane for the session. No Textual: every
table pane (tui/widgets/sorted_table.py) and the Log pane read this.

A cell sorts by the figure its pane hands over beside its words (``Figured``:
the 0.84 ms that "840 µs" shows), else by its words; a cell with no figure
("n/a") sorts last either way round.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from typing import NamedTuple, TypeVar

from rich.text import Text

from dlcprof.data import data

REGEX = "re:"  # a filter that starts with this is a regular expression
R = TypeVar("R", bound=Sequence[object])
Figure = float | str | None  # what a cell sorts by: a number, words, or None (n/a)


class Figured(NamedTuple):
    """A cell as a pane hands it over: what it shows, and the figure it sorts by."""

    shown: object
    figure: Figure


@data(frozen=True)
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


def words_figure(cell: object) -> Figure:
    """What a cell handed over without a figure sorts by: its words (none: last)."""
    return plain(cell).strip() or None


def sort_value(figure: Figure) -> tuple[int, float | str]:
    """(0, number), (1, words) or, for no figure, (2, ""): numbers before words,
    and blanks end up last either way round."""
    if figure is None or figure != figure:  # NaN: no figure either
        return 2, ""
    if isinstance(figure, str):
        return 1, figure.lower()
    return 0, float(figure)


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
    rows: Sequence[R],
    order: Order,
    words: Callable[[R], str] | None = None,
    figures: Callable[[R], Sequence[Figure]] | None = None,
) -> tuple[list[R], str | None]:
    """The rows (each its cells) a pane shows, in its order; and the filter's
    error, if any (then every row shows). ``words``: what the filter searches
    in a row, when more than its cells (a log line's time and text);
    ``figures``: what a row sorts by, a figure per column (default: its words)."""
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
        given = figures or (lambda r: [words_figure(cell) for cell in r])
        values = {}
        for r in shown:
            row = given(r)
            values[id(r)] = sort_value(row[c] if c < len(row) else None)
        valued = [r for r in shown if values[id(r)][0] < 2]
        blanks = [r for r in shown if values[id(r)][0] == 2]
        valued.sort(key=lambda r: values[id(r)], reverse=order.descending)
        shown = valued + blanks
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
