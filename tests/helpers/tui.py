"""Driving the Textual app in a test: the terminal size, waiting for a
condition under the Pilot, an app on a scripted engine, and what a widget shows."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import Any

from rich.console import Console
from textual.geometry import Region
from textual.pilot import Pilot
from textual.widget import Widget
from textual.widgets import Static

from dlcprof.engine import Engine
from dlcprof.tui.app import DlcprofApp
from helpers.engine import ScriptedLiveRun, live_runs

SIZE = (160, 48)


# How long a wait may take before the test calls it a hang: not a bound on speed
# (a 2-core machine at load 8 runs the app many times slower), so generous.
HANG_S = 120.0


async def wait_for(pilot: Pilot, cond: Callable[[], object], timeout: float = HANG_S) -> None:
    """Let the app run until ``cond()`` holds; fail after ``timeout`` seconds."""
    deadline = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > deadline:
            raise AssertionError("condition not met in time")
        await pilot.pause(0.05)


def make_app(engine: type[ScriptedLiveRun] | Engine | None = None, **kwargs: Any) -> DlcprofApp:
    """An app on a scripted engine: ``engine`` is a ScriptedLiveRun class or an Engine."""
    kwargs.setdefault("start_standby", False)
    kwargs.setdefault("deterministic", True)
    if isinstance(engine, type):
        engine = Engine(live_run=live_runs(engine))
    return DlcprofApp(engine=engine, **kwargs)


def text(widget: Widget) -> str:
    """What a widget shows, as plain lines (all of it, scrolled out of view or not)."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text for strip in widget.render_lines(region))


def shown(widget: Static, width: int = 150) -> str:
    """What a Static holds, printed as plain text ``width`` columns wide."""
    printed = io.StringIO()
    console = Console(width=width, file=printed, color_system=None)
    console.print(widget.content)
    return printed.getvalue()
