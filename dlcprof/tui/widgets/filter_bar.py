"""``/``: the line under the panes where the filter of the focused table (or
the Log) is typed; each key filters at once, Enter keeps it, Esc clears it."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Static

from dlcprof.tui.ordering import REGEX
from dlcprof.tui.widgets.sorted_table import Ordered

NOTHING = "/ filters a table: this pane has none (1-9 or a click focuses one)"


class FilterBar(Horizontal):
    BINDINGS = [Binding("escape", "clear", "Clear filter", show=False)]

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.target: Ordered | None = None
        self._back: Widget | None = None  # the focus to give back when there was no table

    def compose(self) -> ComposeResult:
        yield Static(id="filter-label")
        yield Input(
            placeholder=f"a substring, or {REGEX} then a regex · Enter keeps it · esc clears",
            id="filter-input",
            compact=True,
        )
        yield Static(id="filter-error")

    def open(self, target: Ordered | None, title: str) -> None:
        """Filter ``target`` (its pane called ``title``), from what it keeps now.
        None (the focused pane has no table): the line opens all the same and
        says so, so that the filter typed next is not taken for keys."""
        self.target = target
        self._back = None if target is not None else self.app.focused
        label = f"filter {title}: " if target is not None else f"{NOTHING} · esc: "
        self.query_one("#filter-label", Static).update(label)
        field = self.query_one(Input)
        field.value = target.order.query if target is not None else ""
        self._said()
        self.display = True
        # At once, not as focus() does after the keys already queued: typed
        # right after /, they are the filter's, not keys of the pane before.
        self.screen.set_focus(field)

    def on_input_changed(self, event: Input.Changed) -> None:
        event.stop()
        if self.target is not None and event.value != self.target.order.query:
            self.target.set_order(self.target.order.filtered(event.value))
        self._said()

    def _said(self) -> None:
        error = self.target.error if self.target is not None else None
        self.query_one("#filter-error", Static).update(error or "")

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self._close()

    def action_clear(self) -> None:
        if self.target is not None:
            self.target.set_order(self.target.order.filtered(""))
        self._close()

    def _close(self) -> None:
        self.display = False
        back = self.target if self.target is not None else self._back
        if isinstance(back, Widget) and back.is_attached:
            back.focus()
