"""The table every table pane draws in: sorted by any column (o, O, a click
on its header, the column marked ▼/▲), filtered by ``/``, its order kept per
table for the session (``App.orders``, read through tui/ordering.py).

A pane hands it every row, each its cells, and reads back how many show; the
table keeps the cursor on the same row when rows arrive or reorder.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence
from typing import TYPE_CHECKING, Any, Protocol, cast

from rich.text import Text
from textual.binding import Binding
from textual.message import Message
from textual.widget import Widget
from textual.widgets import DataTable

from dlcprof import text
from dlcprof.tui import ordering


class Row(tuple[object, ...]):
    """A row's cells, its key (what the cursor follows) and, where it has one,
    the user's file and line (``e`` opens it). A cell handed over as
    ``ordering.Figured`` shows its words and sorts by its figure (``figures``)."""

    key: str
    place: tuple[str, int] | None
    figures: tuple[ordering.Figure, ...]

    def __new__(
        cls, cells: Iterable[object], key: str, place: tuple[str, int] | None = None
    ) -> Row:
        given = list(cells)
        row = super().__new__(
            cls, (c.shown if isinstance(c, ordering.Figured) else c for c in given)
        )
        row.key, row.place = key, place
        row.figures = tuple(
            c.figure if isinstance(c, ordering.Figured) else ordering.words_figure(c) for c in given
        )
        return row


class Cut(str):
    """A cell's words and how they are cut to a narrower column, where their
    middle is not the part to lose (a list: "sub, add, … (+9)")."""

    cut: Callable[[int], str]

    def __new__(cls, words: str, cut: Callable[[int], str]) -> Cut:
        made = super().__new__(cls, words)
        made.cut = cut
        return made


class OrderChanged(Message):
    """A table's sort or filter changed: its pane repaints (its title counts)."""

    def __init__(self, widget: Ordered) -> None:
        super().__init__()
        self.widget = widget


class _Orders(Protocol):
    """The app (tui/app.py, which imports this module): each table's Order by its id."""

    orders: dict[str, ordering.Order]


if TYPE_CHECKING:  # mixed into widgets only
    _Mixed = Widget
else:
    _Mixed = object


class Ordered(_Mixed):
    """A widget whose rows the user orders and filters: its ``Order`` is kept
    in the app by the widget's id, so a screen opened again keeps it too."""

    error: str | None = None  # the filter's, when it is a bad regex
    spec: list[tuple[str, int | None]] = []  # its columns (label, width); none: it filters only

    # Each class that mixes this in binds escape to clear_filter (Textual reads
    # BINDINGS from widget classes only).
    ESCAPE = Binding("escape", "clear_filter", "Clear filter", show=False)

    @property
    def order(self) -> ordering.Order:
        return cast(_Orders, self.app).orders.get(self.id or "", ordering.Order())

    def set_order(self, order: ordering.Order) -> None:
        """Keep ``order`` for this widget (the session long), show it, and
        let its pane repaint (its title counts)."""
        cast(_Orders, self.app).orders[self.id or ""] = order
        self.rearrange()
        self.post_message(OrderChanged(self))

    def rearrange(self) -> None:
        """Show the rows already given in the new order."""
        raise NotImplementedError

    def sort_next(self, step: int = 1) -> None:
        """Sort by the next column (``step`` -1: the one before)."""
        o = self.order
        at = -1 if o.column is None else o.column
        self.set_order(ordering.Order((at + step) % len(self.spec), True, o.query))

    def reverse(self) -> None:
        o = self.order
        self.set_order(o.sorted_by(0 if o.column is None else o.column))

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "clear_filter":
            return bool(self.order.query)  # no filter: escape goes on to the app
        return super().check_action(action, parameters)

    def action_clear_filter(self) -> None:
        self.set_order(self.order.filtered(""))


class SortedTable(Ordered, DataTable[object]):
    BINDINGS = [Ordered.ESCAPE]

    def __init__(
        self, columns: Sequence[tuple[str, int | None]], flex: int | None = None, **kwargs: Any
    ) -> None:
        """``columns``: (label, width) each; a width of None fits the cells.
        ``flex``: the column that takes the pane's width the others leave, so
        its long cells are cut (``_fit``) rather than run off the pane's edge."""
        super().__init__(cursor_type="row", zebra_stripes=True, **kwargs)
        self.spec = list(columns)
        self.flex = flex
        self.rows_given: list[Row] = []
        self.shown: list[Row] = []
        self._applied: ordering.Order | None = None
        self._widths: list[int | None] = []  # each column's, as drawn

    def rearrange(self) -> None:
        self.fill(self.rows_given)

    def set_columns(self, columns: Sequence[tuple[str, int | None]]) -> None:
        """Other columns: the next ``fill`` draws them."""
        if list(columns) != self.spec:
            self.spec, self._applied = list(columns), None

    def on_data_table_header_selected(self, event: DataTable.HeaderSelected) -> None:
        event.stop()
        self.set_order(self.order.sorted_by(event.column_index))

    def counted(self, title: str) -> str:
        """``title`` with how many rows show: "Kernels (12 of 82)"."""
        return ordering.counted(title, len(self.shown), len(self.rows_given), self.order)

    @property
    def place(self) -> tuple[str, int] | None:
        """The file and line of the row under the cursor, if it has one."""
        if not self.shown or not 0 <= self.cursor_row < len(self.shown):
            return None
        return self.shown[self.cursor_row].place

    def fill(self, rows: Sequence[Row]) -> None:
        """Show ``rows`` in the table's order, the cursor on the row it was on.
        What Textual must measure again is kept to what is new: rows that only
        arrive are added, a new order moves the rows, a narrower filter drops
        some; anything else redraws the table."""
        self.rows_given = list(rows)
        order, applied = self.order, self._applied
        shown, self.error = ordering.arrange(self.rows_given, order, figures=_figures)
        before = {r.key: r for r in self.shown}
        same_rows = all(before.get(r.key) == r for r in shown)
        same_sort = applied is not None and applied.sorted_by_same(order)
        at = self.shown[self.cursor_row].key if 0 <= self.cursor_row < len(self.shown) else None
        if same_sort and shown[: len(self.shown)] == self.shown:
            for row in shown[len(self.shown) :]:  # rows that arrived
                self.add_row(*_cells(row, self._widths), key=row.key)
        elif applied is not None and same_rows and len(shown) == len(before):
            self._reorder(shown, order)  # the same rows, another order
        elif same_sort and same_rows and _within(shown, self.shown):
            for key in before.keys() - {r.key for r in shown}:  # a narrower filter
                self.remove_row(key)
        else:
            self.clear(columns=True)
            self._widths = self._fitted()
            for i, (label, _) in enumerate(self.spec):
                self.add_column(ordering.marked(label, i, order), width=self._widths[i], key=str(i))
            for row in shown:
                self.add_row(*_cells(row, self._widths), key=row.key)
        self._applied, self.shown = order, shown
        keys = [r.key for r in shown]
        if at in keys and keys.index(at) != self.cursor_row:
            self.move_cursor(row=keys.index(at), animate=False)

    def _fitted(self) -> list[int | None]:
        """Each column's width as drawn: room for the sort mark (a fixed width
        never crops it); the flex column's, what the pane leaves it where that
        holds its header."""
        widths = [max(w, len(label) + 2) if w is not None else None for label, w in self.spec]
        # The vertical scrollbar's room kept whether or not rows fill the pane yet.
        room = self.content_region.width - self.styles.scrollbar_size_vertical
        flex = self.flex
        if flex is None or room <= 0 or None in widths:
            return widths
        pad = 2 * self.cell_padding
        others = sum(cast(int, w) + pad for i, w in enumerate(widths) if i != flex)
        left = room - others - pad
        if left >= len(self.spec[flex][0]) + 2:  # else the table scrolls: cut nothing more
            widths[flex] = left
        return widths

    def on_resize(self) -> None:
        if self.flex is not None and self._fitted() != self._widths:
            self._applied = None  # drawn again at the new widths
            self.fill(self.rows_given)

    def _reorder(self, shown: list[Row], order: ordering.Order) -> None:
        """The rows in ``shown``'s order, the sort mark on its column."""
        for i, column in enumerate(self.ordered_columns):
            column.label = Text(ordering.marked(self.spec[i][0], i, order))
        at = {r.key: i for i, r in enumerate(shown)}
        # A row's first cell is its own object (_cells): it names the row.
        named = {id(self.get_row(key)[0]): key for key in at}
        self.sort(key=lambda cells: at[named[id(cells[0])]])


def _figures(row: Row) -> tuple[ordering.Figure, ...]:
    return row.figures


def _within(shown: list[Row], before: list[Row]) -> bool:
    """Whether ``shown`` is ``before`` with some rows left out, in the same order."""
    keep = {r.key for r in shown}
    return [r.key for r in before if r.key in keep] == [r.key for r in shown]


def _cells(row: Row, widths: Sequence[int | None]) -> list[object]:
    """Plain strings as Text: a "[" in a guard or a path is not markup; a cell
    wider than its column loses its middle ("cpp_fused_add_…_0"), not its end,
    or is cut as it says (``Cut``). The first cell a new object, whatever it
    was: the row's own (``_reorder``)."""
    cells = [_fit(c, widths[i] if i < len(widths) else None) for i, c in enumerate(row)]
    if cells and isinstance(cells[0], Text) and cells[0] is row[0]:
        cells[0] = cells[0].copy()
    return cells


def _fit(cell: object, width: int | None) -> object:
    if isinstance(cell, str):
        words = Text(cell)
        if isinstance(cell, Cut) and width is not None and words.cell_len > width:
            return Text(cell.cut(width))
        cell = words
    if width is None or not isinstance(cell, Text) or cell.cell_len <= width:
        return cell
    cut = text.middle(cell.plain, width)
    head = cut.index("…")
    tail = len(cut) - head - 1
    return cell[:head] + Text("…") + cell[len(cell.plain) - tail :]
