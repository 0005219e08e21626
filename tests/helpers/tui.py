"""Driving the Textual app in a test: the terminal size, waiting for a
condition under the Pilot, an app on a scripted engine, and what a widget shows."""

from __future__ import annotations

import io
import time
from collections.abc import Callable
from typing import Any
from weakref import WeakKeyDictionary

from rich.console import Console
from textual import events
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


async def painted(pilot: Pilot) -> None:
    """Let the app fold what is queued and repaint what changed: a whole UI
    tick after now and nothing left for the next (panes repaint on the tick,
    not on a message), however long a loaded machine takes to get there."""
    app = pilot.app
    assert isinstance(app, DlcprofApp)
    await pilot.pause()  # the messages already sent handled (a key, a pushed screen)
    start = app._ticks
    await wait_for(pilot, lambda: app._ticks > start and not app.pending_events and not app._dirty)
    await pilot.pause()


async def paste(pilot: Pilot, *keys: str) -> None:
    """Every key queued before the app reads the first, as a terminal hands over
    a paste (``pilot.press`` lets the app go idle between keys), then handled."""
    app = pilot.app
    assert app._driver is not None
    for key in keys:
        char = key if len(key) == 1 else KEY_CHARS.get(key)
        event = events.Key(key, char)
        event.set_sender(app)
        app._driver.send_message(event)
    await pilot.pause()


KEY_CHARS = {"slash": "/", "space": " "}


def make_app(engine: type[ScriptedLiveRun] | Engine | None = None, **kwargs: Any) -> DlcprofApp:
    """An app on a scripted engine: ``engine`` is a ScriptedLiveRun class or an
    Engine; what it notifies is recorded (``said``)."""
    kwargs.setdefault("start_standby", False)
    kwargs.setdefault("deterministic", True)
    if isinstance(engine, type):
        engine = Engine(live_run=live_runs(engine))
    return record_notes(DlcprofApp(engine=engine, **kwargs))


_SAID: WeakKeyDictionary[DlcprofApp, list[str]] = WeakKeyDictionary()


def record_notes(app: DlcprofApp) -> DlcprofApp:
    """Keep every notification ``app`` shows from now on for ``said``."""
    kept = _SAID.setdefault(app, [])
    notify = app.notify

    def recorded(message: str, *args: Any, **kw: Any) -> None:
        kept.append(message)
        notify(message, *args, **kw)

    setattr(app, "notify", recorded)  # noqa: B010 - an instance's own, for this app only
    return app


def held_notes(app: DlcprofApp) -> DlcprofApp:
    """Toasts stay up until the test ends: a snapshot shows the ones the keys
    raised, not those a loaded machine left time to expire (their timeout is
    in wall seconds)."""
    notify = app.notify

    def held(message: str, *args: Any, **kw: Any) -> None:
        notify(message, *args, **{**kw, "timeout": HANG_S})

    setattr(app, "notify", held)  # noqa: B010 - an instance's own, for this app only
    return app


def said(app: DlcprofApp) -> list[str]:
    """Every notification a recorded app showed, expired or not: a notification
    leaves the screen after its timeout in wall seconds, which a loaded machine
    can spend before a test looks."""
    return _SAID[app]


def text(widget: Widget) -> str:
    """What a widget shows, as plain lines (all of it, scrolled out of view or not)."""
    region = Region(0, 0, widget.size.width, widget.size.height)
    return "\n".join(strip.text for strip in widget.render_lines(region))


async def drawn(pilot: Pilot, widget: Widget) -> str:
    """What a widget shows once laid out: one just mounted or just displayed
    has no size until the screen's next layout, and draws nothing before it."""
    await wait_for(pilot, lambda: widget.size.area > 0)
    return text(widget)


def shown(widget: Static, width: int = 150) -> str:
    """What a Static holds, printed as plain text ``width`` columns wide."""
    printed = io.StringIO()
    console = Console(width=width, file=printed, color_system=None)
    console.print(widget.content)
    return printed.getvalue()
