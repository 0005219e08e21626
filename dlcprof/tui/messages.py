"""Messages between the panes and the app, named for what happened."""

from __future__ import annotations

from textual.message import Message

from dlcprof import events as ev


class KernelChosen(Message):
    """The user picked a kernel to read its source."""

    def __init__(self, kernel: ev.KernelGenerated, figures: str = "") -> None:
        super().__init__()
        self.kernel = kernel
        self.figures = figures  # its time, fusion gain and bandwidth, in a sentence


class WorkloadChosen(Message):
    """A workload target was picked (bundled name or a resolved file/module)."""

    def __init__(self, target: str) -> None:
        super().__init__()
        self.target = target


class SettingChanged(Message):
    """One run setting changed (by a Select, or a cycling key)."""

    def __init__(self, name: str, value: str) -> None:
        super().__init__()
        self.name = name
        self.value = value


class RunChosen(Message):
    """The user selected a run of the session to look at."""

    def __init__(self, run_id: str) -> None:
        super().__init__()
        self.run_id = run_id


class WorkloadRejected(Message):
    """A target the user typed could not be resolved; ``message`` is one line."""

    def __init__(self, message: str) -> None:
        super().__init__()
        self.message = message
