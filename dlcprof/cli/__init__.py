"""Command line: ``dlcprof [tui] | run | try | paper | list | report | replay | compare | merge |
import | doctor``, and ``dlcprof [tui | run ... | check ...] -- CMD`` on the user's own program.

Never imports torch: the worker does. Bad input is one line on stderr and
exit code 2; a failed run exits 1, one stopped by Ctrl-C, SIGTERM or SIGHUP
128 + the signal, after writing whatever was captured.

The parsers are in ``parser.py``; each family of commands has its module:
``run.py`` (run, try), ``paper.py``, ``tui.py`` (tui, replay), ``attach.py``
(``-- CMD``), ``check.py`` (``check -- CMD``), ``reports.py`` (report, compare,
merge, import), ``info.py`` (list, doctor); ``headless.py`` follows a run or a
program without the TUI. A command's module is imported only when it runs:
``dlcprof run -- CMD`` starts the program before the rest of dlcprof loads.
"""

from __future__ import annotations

import importlib
import sys

from dlcprof.cli.attach import run_attached
from dlcprof.cli.loading import LoadError
from dlcprof.cli.output import EXIT_USAGE, error
from dlcprof.cli.parser import UsageError, build_parser, check_parser
from dlcprof.settings import SettingsError


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv and argv[:1] != ["serve"]:  # dlcprof [tui | run OPTIONS] -- CMD ARGS
        i = argv.index("--")
        if not argv[i + 1 :]:
            how = {"check": "dlcprof check [budgets]", "run": "dlcprof run [options]"}
            example = how.get(argv[0], "dlcprof") if argv else "dlcprof"
            error(f"no command after '--' ({example} -- python train.py)")
            return EXIT_USAGE
        try:
            return run_attached(argv[:i], argv[i + 1 :])
        except (UsageError, LoadError) as e:
            error(str(e))
            return EXIT_USAGE
    # `dlcprof` and `dlcprof TARGET --mode ...` open the TUI.
    if not argv or (
        argv[0] not in COMMANDS and argv[0] not in ("check", "-h", "--help", "--version")
    ):
        argv = ["tui", *argv]
    try:
        if argv[0] == "check":  # without "-- CMD": its help, or what it needs
            check_parser().parse_args(argv[1:])
            raise UsageError(
                "dlcprof check runs your command: dlcprof check [budgets] -- CMD ARGS..."
            )
        # Known args first: the top parser would name itself for a subcommand's stray argument.
        args, extra = build_parser().parse_known_args(argv)
        if extra:
            raise UsageError(
                f"unrecognized arguments: {' '.join(extra)} (see 'dlcprof {args.command} --help')"
            )
        module, function = COMMANDS[args.command]
        return getattr(importlib.import_module(f"dlcprof.cli.{module}"), function)(args)
    except (UsageError, SettingsError, LoadError) as e:
        error(str(e))
        return EXIT_USAGE


# command -> (its module in dlcprof/cli/, its function)
COMMANDS = {
    "tui": ("tui", "cmd_tui"),
    "run": ("run", "cmd_run"),
    "try": ("run", "cmd_try"),
    "paper": ("paper", "cmd_paper"),
    "list": ("info", "cmd_list"),
    "report": ("reports", "cmd_report"),
    "replay": ("tui", "cmd_replay"),
    "compare": ("reports", "cmd_compare"),
    "merge": ("reports", "cmd_merge"),
    "import": ("reports", "cmd_import"),
    "doctor": ("info", "cmd_doctor"),
    "serve": ("serve", "cmd_serve"),
}
