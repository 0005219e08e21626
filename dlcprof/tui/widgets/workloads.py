"""Workload picker: the bundled workloads, and an input to open your own file."""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.actions import SkipAction
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.widgets import Input, OptionList, Static
from textual.widgets.option_list import Option

from dlcprof import workloads
from dlcprof.tui.messages import WorkloadChosen, WorkloadRejected


class WorkloadPicker(Vertical):
    """Highlighting a bundled workload picks it; a path is checked on Enter,
    and Escape drops a path that was refused (the target stays what it was)."""

    BINDINGS = [Binding("escape", "drop_path", show=False)]

    def __init__(self, target: str | None, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.infos = workloads.list_bundled()  # reads files with ast: no torch, fast
        names = {w.name for w in self.infos}
        self.target = target or workloads.DEFAULT_WORKLOAD
        self._initial_path = None if self.target in names else self.target
        self.error: str | None = None  # the one-line WorkloadError shown, if any

    def compose(self) -> ComposeResult:
        options = [
            Option(Text.assemble((w.name, "bold"), "\n", (w.description, "dim")), id=w.name)
            for w in self.infos
        ]
        yield OptionList(*options, id="workload-list")
        yield Input(
            value=self._initial_path or "",
            placeholder="your file: path.py[:fn] or mod:fn",
            id="workload-path",
            compact=True,
        )
        yield Static(id="workload-error")

    def on_mount(self) -> None:
        self.border_title = "Workload"
        self.query_one("#workload-error").display = False
        names = [w.name for w in self.infos]
        lst = self.query_one("#workload-list", OptionList)
        if self.target in names:
            lst.highlighted = names.index(self.target)
        else:
            lst.highlighted = None  # OptionList highlights its first option by itself
            if self._initial_path:
                self.check_path(self._initial_path)
        self._show_target()

    @property
    def bundled_target(self) -> bool:
        return self.target in {w.name for w in self.infos}

    def _show_target(self) -> None:
        self.border_subtitle = self.target

    def on_option_list_option_highlighted(self, event: OptionList.OptionHighlighted) -> None:
        event.stop()
        # Only the user's own moves pick: OptionList also highlights by itself
        # while it mounts, which must not replace a file target given at start.
        lst = event.option_list
        if lst.id != "workload-list" or event.option.id is None or not lst.has_focus:
            return
        if event.option_index != lst.highlighted:
            return  # stale: posted before the highlight moved on (or was cleared)
        self.choose(event.option.id)

    def on_option_list_option_selected(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        if event.option.id is not None:
            self.choose(event.option.id)

    def on_input_submitted(self, event: Input.Submitted) -> None:
        event.stop()
        if self.check_path(event.value):
            self.app.set_focus(None)  # so r compiles it straight away

    def check_path(self, text: str) -> bool:
        """Resolve a user target; a bad one shows its one-line WorkloadError."""
        text = text.strip()
        if not text:
            self.set_error("type a path to a .py file (path.py or path.py:function) first")
            return False
        try:
            workloads.resolve(text)
        except workloads.WorkloadError as e:
            self.set_error(str(e))
            self.post_message(WorkloadRejected(str(e)))
            return False
        self.set_error(None)
        self.choose(text)
        return True

    def action_drop_path(self) -> None:
        if self.error is None:
            raise SkipAction()  # nothing to drop: Escape cancels a run, as anywhere
        self.set_error(None)
        self.query_one("#workload-path", Input).value = "" if self.bundled_target else self.target
        self.post_message(WorkloadChosen(self.target))  # the status bar's error goes too

    def choose(self, target: str) -> None:
        if target != self.target:
            self.target = target
            self.post_message(WorkloadChosen(target))
        self._show_target()

    def set_error(self, message: str | None) -> None:
        self.error = message
        err = self.query_one("#workload-error", Static)
        err.update(Text(message or "", style="bold red"))
        err.display = bool(message)
