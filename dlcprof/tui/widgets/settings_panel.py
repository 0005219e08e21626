"""Run settings: one compact Select per option, cycled by keys too (a switch
such as freezing is a Select of off/on)."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Grid, Vertical
from textual.widgets import Label, Select, Static

from dlcprof import settings as st
from dlcprof.tui.messages import SettingChanged
from dlcprof.tui.view import View

CHOICES: dict[str, tuple[str, ...]] = {
    o.name: o.choices for o in st.OPTIONS if o.tui and o.kind == "choice"
}
TOGGLES: tuple[str, ...] = tuple(o.name for o in st.OPTIONS if o.tui and o.kind == "switch")
_SWITCH = ("off", "on")
CPU_NOTE = (
    "On the CPU: max-autotune tunes matmuls only with freezing; CUDA graphs are "
    "skipped (the Modes tab says why). a runs every mode side by side."
)


class SettingsPanel(Vertical):
    def __init__(self, initial: st.RunSettings, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._initial = initial

    def compose(self) -> ComposeResult:
        with Grid(id="settings-grid"):
            for name, options in self._selects().items():
                initial = getattr(self._initial, name)
                yield Label(name, classes="setting-label")
                yield Select(
                    [(o, o) for o in options],
                    value=_SWITCH[initial] if name in TOGGLES else initial,
                    allow_blank=False,
                    compact=True,
                    id=f"set-{name}",
                )
        yield Static(CPU_NOTE, id="cpu-note")

    @staticmethod
    def _selects() -> dict[str, tuple[str, ...]]:
        return {**CHOICES, **dict.fromkeys(TOGGLES, _SWITCH)}

    def on_mount(self) -> None:
        self.border_title = "Settings"
        self.query_one("#cpu-note").display = False

    def value(self, name: str) -> str:
        return str(self.query_one(f"#set-{name}", Select).value)

    def values(self) -> dict[str, str | bool]:
        out: dict[str, str | bool] = {name: self.value(name) for name in CHOICES}
        for name in TOGGLES:
            out[name] = self.value(name) == "on"
        return out

    def cycle(self, name: str) -> str:
        options = self._selects()[name]
        nxt = options[(options.index(self.value(name)) + 1) % len(options)]
        self.query_one(f"#set-{name}", Select).value = nxt
        return nxt

    def on_select_changed(self, event: Select.Changed) -> None:
        event.stop()
        if event.select.id and event.select.id.startswith("set-"):
            self.post_message(
                SettingChanged(event.select.id.removeprefix("set-"), str(event.value))
            )

    def show(self, view: View) -> None:
        """The CPU note once a worker says there is no GPU (no CUDA probe here: no torch)."""
        self.query_one("#cpu-note").display = bool(view.on_cpu)
