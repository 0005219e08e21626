"""What q asks while an attached program runs: stop it, or detach and let it run on."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.text import Text
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Vertical
from textual.screen import ModalScreen
from textual.widgets import Static

if TYPE_CHECKING:
    from dlcprof.tui.attached import ProgramController

STOP, DETACH = "stop", "detach"


class StopOrDetachScreen(ModalScreen[str | None]):
    """s: stop the program (Ctrl-C, then SIGTERM, then SIGKILL) · d: detach ·
    Escape: back to the program."""

    DEFAULT_CSS = """
    StopOrDetachScreen { align: center middle; }
    #quit-body { width: 72; height: auto; border: thick $warning; padding: 1 2;
                 background: $surface; }
    """
    BINDINGS = [
        Binding("s", "choose('stop')", "Stop it"),
        Binding("d", "choose('detach')", "Detach"),
        Binding("escape", "choose(None)", "Back"),
    ]

    def __init__(self, command: str) -> None:
        super().__init__()
        self.command = command

    def compose(self) -> ComposeResult:
        with Vertical(id="quit-body"):
            yield Static(Text(f"{self.command} is still running.", style="bold"))
            yield Static(
                "s  stop it: Ctrl-C reaches it, as in a terminal (then SIGTERM, SIGKILL)\n"
                "d  detach: it runs on; dlcprof saves what it saw and quits\n"
                "Escape  back"
            )

    def action_choose(self, choice: str | None) -> None:
        self.dismiss(choice)


def ask_stop_or_detach(app: App, program: ProgramController) -> None:
    """q while the program runs: stop it (``app`` closes once it ended), or
    detach and close now."""

    def chosen(choice: str | None) -> None:
        if choice == STOP:
            app.notify("stopping the program: Ctrl-C first, as in a terminal", timeout=5)
            program.stop()
        elif choice == DETACH:
            program.detach()
            app.exit()

    app.push_screen(StopOrDetachScreen(program.words), chosen)
