"""The user's own program: ``dlcprof [tui [--no-hotspots]] -- CMD`` (the TUI)
and ``dlcprof run [options] -- CMD`` (headless, with the loop and the quiet
rule of a workload's run); ``follow_program`` follows it headless for
``dlcprof check`` too. Nothing here imports ``events`` before the program
starts (each import then is added to its wall time)."""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import TYPE_CHECKING

from dlcprof.cli.output import console, import_writers, note, say, write_outputs
from dlcprof.exit_codes import exit_code

if TYPE_CHECKING:
    from rich.console import Console

    from dlcprof.attach.launch import Launch
    from dlcprof.session import Session

POLL_S = 0.2  # without an event: how often the ranks' divergences are looked at


def cmd_attach_run(args: argparse.Namespace, command: list[str]) -> int:
    """``dlcprof run [options] -- CMD``: the program followed headless, then its
    report files written; the program's own exit status."""
    return follow_program(args, command, lambda session, out: saved(session, args), summary=True)


def saved(session: Session, args: argparse.Namespace) -> int:
    """--json / --report written; the program's own exit status."""
    write_outputs(session, args)
    return exit_code(session)


def follow_program(
    args: argparse.Namespace,
    command: list[str],
    then: Callable[[Session, Console], int],
    summary: bool,
    cwd: str | None = None,
    hatch: str | None = None,
    env: dict[str, str] | None = None,
) -> int:
    """Run the user's command as it would run (in ``cwd``; for ``dlcprof try``
    with a graph break's setting ``hatch`` or more ``env``), its compiles followed live (on
    stderr), then its summary (``summary``) and ``then``'s exit status (for
    ``dlcprof run``: the report files written, the program's own status)."""
    # Only what launching needs is imported before the program starts: every
    # import before the launch is added to the program's wall time.
    from dlcprof.attach.launch import CommandError, Launch, forwarding_signals
    from dlcprof.signals import Stopped

    def launch(eager: bool) -> Launch:
        raw_trace = args.report is not None
        return Launch(
            command,
            eager=eager,
            steps=args.eager_baseline,
            raw_trace=raw_trace,
            cwd=cwd,
            hatch=hatch,
            env=env,
        )

    launched: list[Launch] = []
    with forwarding_signals(launched, lambda signum: Stopped(signum).said) as stops:
        try:
            launched.append(launch(eager=False))
        except CommandError as e:
            note(f"dlcprof: {e}")
            return e.exit_code
        # The program runs: now what follows it.
        import queue

        from dlcprof import events as ev
        from dlcprof.attach.program import AttachedProgram
        from dlcprof.cli.headless import Printer
        from dlcprof.console import DivergenceWatch, attach_line, program_summary
        from dlcprof.engine import follow
        from dlcprof.journal import journaled
        from dlcprof.session import Session

        session = Session()
        inbox: queue.Queue[ev.Event] = queue.Queue()
        printer = Printer(session, console(stderr=True), args.quiet, attach_line, DivergenceWatch())
        import_writers(args)
        with journaled(session, note):
            for eager in (False, True) if args.eager_baseline else (False,):
                if eager:
                    if stops or launched[-1].proc.returncode != 0:
                        break  # stopped, or failed: no baseline to compare with
                    say(
                        printer.out, "eager baseline: the same command, torch.compile forced eager…"
                    )
                    launched.append(launch(eager=True))  # the same command: it was found before
                AttachedProgram(launched[-1], inbox.put, hotspots=args.hotspots)
                follow(inbox, printer, ev.ProgramExited, poll_s=POLL_S)
            if summary:
                say(printer.out, program_summary(session))
            return then(session, printer.out)


def cmd_attach_tui(args: argparse.Namespace, command: list[str]) -> int:
    """``dlcprof [tui [options]] -- CMD``: the TUI on the user's program; its
    controller (tui/attached.py) passes a stop signal on, saves after a detach,
    and gives the exit code."""
    from dlcprof.attach.launch import CommandError, check_command
    from dlcprof.cli.tui import run_app
    from dlcprof.tui.app import DlcprofApp

    try:
        check_command(command)
    except CommandError as e:
        note(f"dlcprof: {e}")
        return e.exit_code
    return run_app(DlcprofApp(command=command, hotspots=args.hotspots, theme=args.theme))
