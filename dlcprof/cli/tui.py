"""The TUI's commands: ``dlcprof [tui] [TARGET]`` and ``dlcprof replay
SESSION``; ``run_app`` runs any of them (an attached program's too) under
the stop signals."""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

from dlcprof.cli.loading import default_target, load_report_or_trace, resolve_target
from dlcprof.cli.output import note
from dlcprof.cli.parser import UsageError, settings_from
from dlcprof.exit_codes import EXIT_OK
from dlcprof.settings import ALL_MODES

if TYPE_CHECKING:
    from dlcprof.tui.app import DlcprofApp


def cmd_tui(args: argparse.Namespace) -> int:
    from dlcprof.tui.app import DlcprofApp

    target = args.target
    if args.mode == ALL_MODES:
        raise UsageError(
            f"--mode {ALL_MODES} is for 'dlcprof run': in the TUI, press a to run "
            "every mode side by side"
        )
    if target is not None:
        resolve_target(target)
    settings = settings_from(args, target or default_target())
    return run_app(DlcprofApp(target=settings.target, settings=settings, theme=args.theme))


def cmd_replay(args: argparse.Namespace) -> int:
    from dlcprof.tui.app import DlcprofApp

    session = load_report_or_trace(args.session)
    return run_app(DlcprofApp(session=session, replay=True, start_standby=False, theme=args.theme))


def run_app(app: DlcprofApp) -> int:
    """Run the TUI. A stop signal (SIGTERM, SIGHUP when the terminal closes)
    closes it like q does, and then the session is saved, not lost; on an
    attached program its controller ends the program and says the rest."""
    from dlcprof.journal import journaled
    from dlcprof.signals import HANGUP, stop_on_signals
    from dlcprof.tui.controller import Notice, save_after_stop

    def said(line: str) -> None:
        note(line)  # on the terminal once the TUI has closed
        app.runs.notices.append(Notice("warning", line.removeprefix("dlcprof: ")))

    # SIGHUP even under nohup: a TUI whose terminal hung up has nothing to show.
    # A replay records nothing: its session is on disk already.
    journal = contextlib.nullcontext() if app.replay else journaled(app.session, said)
    with stop_on_signals(even_if_ignored=(HANGUP,)) as stops, journal:
        app.stops = stops
        app.run()  # closing stops the live run and waits for its last events
        stop = stops[0] if stops else None
        if app.program is not None:
            app.program.close(stop)
            app.fold_pending()
            code, line = app.program.finish(stop)
        elif stop is None:
            return EXIT_OK
        else:
            app.fold_pending()
            code = stop.exit_code
            line = None if app.replay else save_after_stop(app.runs.engine, app.session, stop.said)
        if line is not None:
            note(line)
        return code
