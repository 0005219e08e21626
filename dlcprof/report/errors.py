"""The one exception every report reader and writer raises."""

from __future__ import annotations


class ReportError(Exception):
    """A report could not be read or written; ``str()`` is one line for the user."""

    def __init__(self, message: str) -> None:
        # Messages embed OS and JSON errors verbatim: keep them on one line so
        # the CLI and the TUI status bar can show them as they are.
        super().__init__(" ".join(str(message).split()))
