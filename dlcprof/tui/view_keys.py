"""The keys that change what the panes show rather than what runs: o and O
sort the focused table, / filters it (or the Log), e opens its row's
file:line in the user's editor, p holds the panes still, v and t unfold
phases and threads. A base of the app
(tui/app.py), one class split in two files: it uses the app's repaint
(``_repaint``, ``_dirty``); a table keeps its own order
(tui/widgets/sorted_table.py)."""

from __future__ import annotations

from textual.app import App, SuspendNotSupported
from textual.widget import Widget

from dlcprof.text import plural
from dlcprof.tui import editor
from dlcprof.tui.ordering import Order
from dlcprof.tui.panes import BY_NAME
from dlcprof.tui.widgets.filter_bar import FilterBar
from dlcprof.tui.widgets.hotspots import HotspotsPane
from dlcprof.tui.widgets.phases import PhasesPane
from dlcprof.tui.widgets.sorted_table import OrderChanged, Ordered, SortedTable


class ViewKeys(App[None]):
    def __init__(self) -> None:
        super().__init__()
        self.orders: dict[str, Order] = {}  # each table's sort and filter, by its id
        self.paused: int | None = None  # p: events folded since (the app's tick counts)

    @property
    def paused_words(self) -> str | None:
        """The status bar's mark while paused."""
        if self.paused is None:
            return None
        return f"paused: {plural(self.paused, 'event')} waiting (p)"

    def action_pause(self) -> None:
        """Hold the panes still while events still fold in; again: catch up at once."""
        if self.paused is None:
            self.paused = 0
            self._paint_status(self._view())
            self.notify("paused: events still fold in; p catches up", timeout=2)
            return
        waited, self.paused = self.paused, None
        self._repaint()
        self._flush_log()
        self.notify(f"caught up: {plural(waited, 'event')}", timeout=2)

    def repaint_pane(self, name: str) -> None:
        """Repaint pane ``name`` now (a table sorted or filtered); while paused, on p."""
        self._dirty.add(name)
        if self.paused is None:
            self._repaint()
            self._flush_log()

    def on_order_changed(self, message: OrderChanged) -> None:
        """A table sorted or filtered: its pane repaints (its title counts what shows)."""
        pane = pane_of(message.widget)
        if pane is not None:
            self.repaint_pane(pane)

    def _ordered(self, say: bool = True) -> Ordered | None:
        """The table (or the Log) that holds the focus, or the one in the pane
        that does (Hotspots, Recompiles); None, said why (``say``), if none does."""
        focused = self.focused
        if isinstance(focused, Ordered):
            return focused
        inside = [w for w in focused.query("*") if isinstance(w, Ordered)] if focused else []
        shown = [w for w in inside if isinstance(w, Widget) and w.display]
        if shown:
            return shown[0]
        if say:
            self.notify("focus a table first (1-9, a click): o sorts it, / filters it", timeout=3)
        return None

    def action_sort(self, step: int) -> None:
        """Sort the focused table by the next column (a header click: by that one)."""
        table = self._sortable()
        if table is not None:
            table.sort_next(step)
            self._said_order(table)

    def action_reverse(self) -> None:
        table = self._sortable()
        if table is not None:
            table.reverse()
            self._said_order(table)

    def _sortable(self) -> Ordered | None:
        table = self._ordered()
        if table is not None and not table.spec:
            self.notify("the Log keeps the order things happened: / filters it", timeout=3)
            return None
        return table

    def _said_order(self, table: Ordered) -> None:
        o = table.order
        if o.column is not None:
            mark = "▼" if o.descending else "▲"
            self.notify(f"sorted by {table.spec[o.column][0]} {mark}", timeout=2)

    async def action_filter(self) -> None:
        """``/``: the filter line for the focused table or the Log."""
        target = self._ordered(say=False)
        bars = self.screen.query(FilterBar)
        bar = bars.first() if bars else FilterBar()
        if not bars:
            await self.screen.mount(bar)  # each screen its own, on first use
        pane = pane_of(target)
        bar.open(target, BY_NAME[pane].title if pane else "table")

    def action_edit(self) -> None:
        """Open the file and line of the focused table's row in the user's editor."""
        table = self._ordered()
        if table is None:
            return
        where = table.place if isinstance(table, SortedTable) else None
        if where is None:
            self.notify(editor.NO_PLACE, severity="warning", timeout=3)
            return
        path = editor.absolute(where[0])
        if path is None:
            self.notify(editor.not_here(where[0]), severity="warning", timeout=6)
            return
        argv = editor.command(path, where[1])
        if argv is None:
            self.notify(editor.NO_EDITOR, severity="warning", timeout=6)
            return
        try:
            with self.suspend():
                opened = editor.run(argv)
        except SuspendNotSupported:  # no terminal to hand over (tests, a browser)
            opened = editor.run(argv)
        if opened is not None:
            self.notify(opened, severity="warning", timeout=6)
        self.refresh()

    def action_toggle_phases(self) -> None:
        pane = self._home.query_one(PhasesPane)
        pane.action_toggle_all()
        self.notify("phases: all" if pane.show_all else "phases: short ones folded", timeout=2)

    def action_toggle_threads(self) -> None:
        pane = self._home.query_one(HotspotsPane)
        pane.all_threads = not pane.all_threads
        self._dirty.add("hotspots")
        what = "every thread" if pane.all_threads else "the compiling thread"
        self.notify(f"hot frames: {what}", timeout=2)


def pane_of(widget: object) -> str | None:
    """The name of the pane a widget sits in (tui/panes.py)."""
    if not isinstance(widget, Widget):
        return None
    for w in (widget, *widget.ancestors):
        if w.id in BY_NAME:
            return w.id
    return None
