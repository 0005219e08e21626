"""A compile's graph-cache state as every view words it, with the why where the
state alone would mislead: a sweep turns the graph caches off (so "disabled"
under ``--cache warm``), and the first compile in a new TMPDIR or torch install
also builds Inductor's precompiled header, seconds no cache saves (so a slow
"cache hit")."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof.session import Compile, Run

# Short: they sit in table cells. dlcprof turns the graph caches off in a sweep
# so each shape compiles for real (worker/probes/caches.py); the header is
# built once per TMPDIR or torch install.
SWEEP_OFF = "off for the sweep"
HEADER_BUILT = "+ precompiled header (built once)"


def header_compile(run: Run) -> Compile | None:
    """The compile that built the precompiled header: the run's first."""
    if run.header_built is None:
        return None
    return next(iter(run.compiles.values()), None)


def state_word(run: Run, state: str | None) -> str | None:
    """A cache state torch reported (a compile's, a phase's), "disabled" said as
    the sweep's doing where it was."""
    if state == "disabled" and run.settings is not None and run.settings.sweep:
        return SWEEP_OFF
    return state


def compile_cache(run: Run, c: Compile) -> str | None:
    """The compile's cache state as views show it: "hit", "miss", "off for the
    sweep", "hit + precompiled header (built once)"; None when torch did not say."""
    state = state_word(run, c.cache)
    if header_compile(run) is c:
        state = f"{state or 'cache state unknown'} {HEADER_BUILT}"
    return state


def header_line(e: ev.HeaderPrecompiled) -> str:
    """The live line once the first call returned (its compile line came before)."""
    return (
        f"the first compile also built Inductor's precompiled header ({e.path}), once per "
        "TMPDIR or torch install: its seconds are in that compile's time, cache hit or not; "
        "graph caches do not save them"
    )
