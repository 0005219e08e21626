"""``dlcprof run`` and its kin without the TUI: a workload's run or the user's
program, followed by the one loop (``engine.follow``) under one rule: each
event's line as it comes, or under ``--quiet`` only the loud ones (what ends
a run or the program, an error, an alarm)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from dlcprof import events as ev
from dlcprof.cli.output import say
from dlcprof.settings import RunSettings

if TYPE_CHECKING:
    from rich.console import Console, RenderableType

    from dlcprof.console import DivergenceWatch
    from dlcprof.session import Session

Line = Callable[[ev.Event, "Session"], "RenderableType | None"]

# Printed under --quiet too.
LOUD = (
    ev.ErrorRaised,
    ev.WorkerExited,
    ev.ProgramExited,
    ev.RecompileLimitHit,
    ev.EagerCallsCounted,
)


class Printer:
    """Folds each event into the session and prints its line (``line``: the
    live lines, the paper's or an attached program's), every one or, ``quiet``,
    only the loud ones; ``watch``: a divergence among ranks, the moment it
    appears. A workload that broke the contract is one line by its caller
    (``bad``), and its worker's exit says nothing more."""

    def __init__(
        self,
        session: Session,
        out: Console,
        quiet: bool,
        line: Line,
        watch: DivergenceWatch | None = None,
    ) -> None:
        self.session, self.out, self.quiet, self.line, self.watch = session, out, quiet, line, watch
        self.bad: ev.ErrorRaised | None = None  # the workload broke the contract: exit 2

    def __call__(self, event: ev.Event | None) -> None:
        if event is not None:
            self.session.apply(event)
        if self.watch is not None and not self.quiet:
            for line in self.watch.lines(self.session, ev.now(), event):
                say(self.out, line)
        if event is None:
            return
        if isinstance(event, ev.ErrorRaised) and event.bad_input and self.bad is None:
            self.bad = event
        elif self.bad is None or not isinstance(event, ev.WorkerExited):
            if not self.quiet or isinstance(event, LOUD):
                say(self.out, self.line(event, self.session))


def follow_run(
    settings: RunSettings,
    session: Session,
    out: Console,
    args: argparse.Namespace,
    stops: list,
    line: Line | None = None,
    monitors: bool = True,
) -> tuple[str | None, ev.ErrorRaised | None]:
    """Run ``settings`` in a worker, fold and print its events until it exits (each
    worded by ``line``, the live lines by default); a signal in ``stops`` stops
    it. (run id, the bad-input error if any)."""
    from dlcprof.console import live_line
    from dlcprof.engine import run_headless

    printer = Printer(session, out, getattr(args, "quiet", False), line or live_line)
    run_id = run_headless(settings, printer, stops, idle_timeout_s=args.timeout, monitors=monitors)
    return run_id, printer.bad


def stopping(out: Console):
    """What a stop signal prints, the moment it arrives."""

    def said(stop) -> None:
        say(out, f"[yellow]{stop.said}: stopping the worker and its compiler children…[/]")

    return said
