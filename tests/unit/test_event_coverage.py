"""Every event type is folded by the Session (or listed as ignored) and either
repaints a pane of the TUI or is listed as repaint-free."""

from __future__ import annotations

import pytest

from dlcprof import events as ev
from dlcprof.session import IGNORED, Session
from dlcprof.tui.panes import AFFECTS, REPAINT_FREE, REPAINTED

EVENT_TYPES = sorted(ev.Event.registry.values(), key=lambda c: c.__name__)
# What AFFECTS may name besides the panes: the status bar.
_OTHER_TARGETS = {"status"}


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
def test_every_event_is_folded_or_listed_as_ignored(cls):
    folded = callable(getattr(Session, f"_on_{cls.__name__}", None))
    assert folded != (cls in IGNORED), f"{cls.__name__}: fold it in Session or list it in IGNORED"


@pytest.mark.parametrize("cls", EVENT_TYPES, ids=lambda c: c.__name__)
def test_every_event_repaints_a_pane_or_is_listed_repaint_free(cls):
    panes = AFFECTS.get(cls, frozenset())
    assert bool(panes) != (cls in REPAINT_FREE), (
        f"{cls.__name__}: name the panes it changes in AFFECTS or list it in REPAINT_FREE"
    )
    assert panes <= REPAINTED | _OTHER_TARGETS


def test_no_stale_entries():
    known = set(EVENT_TYPES)
    assert set(AFFECTS) <= known and REPAINT_FREE <= known and IGNORED <= known
