"""The keys that change what the panes show rather than what runs: o and O
sort the focused table, / filters it (or the Log), e opens its row's
file:line in the user's editor, v and t unfold phases and threads. The app
(tui/app.py) owns one and hands it these keys; it needs of the app only
Textual's face (the focus, the screens, notify) and a way to repaint one
pane. A table keeps its own order (tui/widgets/sorted_table.py)."""

from __future__ import annotations

from collections.abc import Callable

from textual.app import App, SuspendNotSupported
from textual.widget import Widget

from dlcprof.tui import editor
from dlcprof.tui.panes import BY_NAME
from dlcprof.tui.widgets.filter_bar import FilterBar
from dlcprof.tui.widgets.hotspots import HotspotsPane
from dlcprof.tui.widgets.phases import PhasesPane
from dlcprof.tui.widgets.sorted_table import Ordered, SortedTable


class ViewKeys:
    def __init__(self, app: App[None], repaint_pane: Callable[[str], None]) -> None:
        """``repaint_pane``: repaint the pane of that name (the app's, which
        waits while the panes are held still)."""
        self.app = app
        self.repaint_pane = repaint_pane

    def ordered(self, say: bool = True) -> Ordered | None:
        """The table (or the Log) that holds the focus, or the one in the pane
        that does (Hotspots, Recompiles); None, said why (``say``), if none does."""
        focused = self.app.focused
        if isinstance(focused, Ordered):
            return focused
        inside = [w for w in focused.query("*") if isinstance(w, Ordered)] if focused else []
        shown = [w for w in inside if isinstance(w, Widget) and w.display]
        if shown:
            return shown[0]
        if say:
            self.app.notify(
                "focus a table first (1-9, a click): o sorts it, / filters it", timeout=3
            )
        return None

    def sort(self, step: int) -> None:
        """Sort the focused table by the next column (a header click: by that one)."""
        table = self._sortable()
        if table is not None:
            table.sort_next(step)
            self._said_order(table)

    def reverse(self) -> None:
        table = self._sortable()
        if table is not None:
            table.reverse()
            self._said_order(table)

    def _sortable(self) -> Ordered | None:
        table = self.ordered()
        if table is not None and not table.spec:
            self.app.notify("the Log keeps the order things happened: / filters it", timeout=3)
            return None
        return table

    def _said_order(self, table: Ordered) -> None:
        o = table.order
        if o.column is not None:
            mark = "▼" if o.descending else "▲"
            self.app.notify(f"sorted by {table.spec[o.column][0]} {mark}", timeout=2)

    async def filter(self) -> None:
        """``/``: the filter line for the focused table or the Log."""
        target = self.ordered(say=False)
        screen = self.app.screen
        bars = screen.query(FilterBar)
        bar = bars.first() if bars else FilterBar()
        if not bars:
            await screen.mount(bar)  # each screen its own, on first use
        pane = pane_of(target)
        bar.open(target, BY_NAME[pane].title if pane else "table")

    def edit(self) -> None:
        """Open the file and line of the focused table's row in the user's editor."""
        table = self.ordered()
        if table is None:
            return
        app = self.app
        where = table.place if isinstance(table, SortedTable) else None
        if where is None:
            app.notify(editor.NO_PLACE, severity="warning", timeout=3)
            return
        path = editor.absolute(where[0])
        if path is None:
            app.notify(editor.not_here(where[0]), severity="warning", timeout=6)
            return
        argv = editor.command(path, where[1])
        if argv is None:
            app.notify(editor.NO_EDITOR, severity="warning", timeout=6)
            return
        try:
            with app.suspend():
                opened = editor.run(argv)
        except SuspendNotSupported:  # no terminal to hand over (tests, a browser)
            opened = editor.run(argv)
        if opened is not None:
            app.notify(opened, severity="warning", timeout=6)
        app.refresh()

    def toggle_phases(self) -> None:
        pane = self.app.screen_stack[0].query_one(PhasesPane)
        pane.action_toggle_all()
        self.app.notify("phases: all" if pane.show_all else "phases: short ones folded", timeout=2)

    def toggle_threads(self) -> None:
        pane = self.app.screen_stack[0].query_one(HotspotsPane)
        pane.all_threads = not pane.all_threads
        self.repaint_pane("hotspots")
        what = "every thread" if pane.all_threads else "the compiling thread"
        self.app.notify(f"hot frames: {what}", timeout=2)


def pane_of(widget: object) -> str | None:
    """The name of the pane a widget sits in (tui/panes.py)."""
    if not isinstance(widget, Widget):
        return None
    for w in (widget, *widget.ancestors):
        if w.id in BY_NAME:
            return w.id
    return None
