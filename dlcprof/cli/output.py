"""What the commands print and write: lines on the terminal
(which may be gone), and the report files a run asks for."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlcprof.exit_codes import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from rich.console import Console


def console(**kwargs: Any) -> Console:
    # Imported here: the TUI, the default command, has no use for the console's tables.
    from dlcprof.console import make_console

    return make_console(**kwargs)


def say(out: Console, line: object) -> None:
    """Print, unless the terminal is gone (SSH closed, a pipe to `head`): then
    stay quiet and carry on, so the report still gets written."""
    if line is None:
        return
    from rich.text import Text

    try:
        # Off a terminal (a log, a pipe to grep) a line stays one line, however long.
        out.print(line, soft_wrap=isinstance(line, str | Text) and not out.is_terminal)
    except OSError:
        from dlcprof.signals import silence_terminal

        silence_terminal()


def note(message: str) -> None:
    try:
        print(message, file=sys.stderr)
    except OSError:
        pass


def error(message: str) -> None:
    # Plain write: a Rich console would wrap the one line at the terminal width.
    note(f"dlcprof: error: {message}")


def import_writers(args: argparse.Namespace) -> None:
    """What ``write_outputs`` will need, imported while the program starts
    (``import torch`` takes it seconds) instead of after it ended."""
    if args.json is not None or args.report is not None:
        import dlcprof.report.folder
        import dlcprof.report.schema  # noqa: F401


def write_outputs(session, args: argparse.Namespace) -> bool:
    """Write --json / --report. Where one cannot be written, say so in one line and
    write it to a fresh place under the temp folder instead: the session is not lost."""
    if args.json is None and args.report is None:
        return True  # nothing to write: the report modules stay unimported
    import tempfile

    from dlcprof.engine import elsewhere
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.errors import ReportError
    from dlcprof.report.folder import save_session
    from dlcprof.report.model import build
    from dlcprof.report.schema import build_report, dumps_report

    def json_to(path: Path) -> Path:
        write_atomic(path, dumps_report(build_report(build(session))))
        return path

    def json_elsewhere() -> Path:
        fd, name = tempfile.mkstemp(prefix="dlcprof-session-", suffix=".json")
        os.close(fd)
        return json_to(Path(name))

    def folder_elsewhere() -> Path:
        return save_session(session, elsewhere(session))

    ok = True
    for wanted, what, write, fallback in (
        (args.json, "report JSON", json_to, json_elsewhere),
        (args.report, "report folder", lambda p: save_session(session, p), folder_elsewhere),
    ):
        if wanted is None:
            continue
        try:
            note(f"{what} written to {write(wanted)}")
            continue
        except ReportError as e:
            ok = False
            problem = str(e)
        try:
            error(f"{problem}; the session is saved to {fallback()} instead")
        except (ReportError, OSError) as e:
            error(f"{problem}, and the fallback in the temp folder failed too: {e}")
    return ok


def write_file(path: Path, text: str) -> int:
    """Write a rendered report; one line and exit 1 when it cannot be written."""
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.errors import ReportError

    try:
        write_atomic(path, text)
    except ReportError as e:
        error(str(e))
        return EXIT_FAILED
    return EXIT_OK
