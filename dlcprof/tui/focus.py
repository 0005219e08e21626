"""Focus on the main screen: into a pane, and the pane that holds the focus
filling the screen (maximize) and back."""

from __future__ import annotations

from textual.screen import Screen
from textual.widget import Widget

from dlcprof.tui.panes import BY_NAME


def focus_inside(home: Screen, widget: Widget) -> bool:
    """Focus the first focusable widget in ``widget`` (a pane), or it; False
    when none can take the focus (yet)."""
    inside = (w for w in home.focus_chain if w is widget or widget in w.ancestors)
    target = next(inside, None)
    if target is not None:
        home.set_focus(target)
    return target is not None


def toggle_maximized(home: Screen) -> None:
    """The pane that holds the focus (the tabs as one) fills ``home``; again restores it."""
    if home.maximized is not None:
        home.minimize()
        return
    focused = home.focused
    if focused is None:
        return
    for w in (focused, *focused.ancestors):
        if not isinstance(w, Widget):  # the screen, the app
            continue
        if w.id == "tabs" or (w.id in BY_NAME and BY_NAME[w.id].place != "tab"):
            home.maximized = w
            return
