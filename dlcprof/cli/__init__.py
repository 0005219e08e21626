"""Command line: ``dlcprof [tui] | run | try | paper | list | report | replay | compare |
merge | import | serve | doctor``, and ``dlcprof [tui | run ... | check ...] -- CMD`` on
the user's own program.

Never imports torch: the worker does. Bad input is one line on stderr and
exit code 2; a failed run exits 1, one stopped by Ctrl-C, SIGTERM or SIGHUP
128 + the signal, after writing whatever was captured (``exit_codes.py``).

``COMMANDS`` and ``PROGRAM_COMMANDS`` (the heads of ``-- CMD``) give each
command its module and function. The parsers are in ``parser.py``; each family
of commands has its module: ``run.py`` (run, try), ``paper.py``, ``tui.py``
(tui, replay), ``attach.py`` (``[tui | run] -- CMD``, and the program followed
headless), ``check.py`` (``check -- CMD``), ``reports.py`` (report, compare,
merge, import), ``info.py`` (list, doctor), ``serve.py``; ``headless.py``
prints a run or a program without the TUI. A command's module is imported only
when it runs: ``dlcprof run -- CMD`` starts the program before the rest of
dlcprof loads.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable
from typing import NamedTuple

from dlcprof.cli.loading import LoadError
from dlcprof.cli.output import error
from dlcprof.cli.parser import (
    Parser,
    UsageError,
    attach_parser,
    attach_tui_parser,
    build_parser,
    check_parser,
)
from dlcprof.exit_codes import EXIT_USAGE
from dlcprof.settings import SettingsError


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    try:
        if "--" in argv and argv[:1] != ["serve"]:  # dlcprof [HEAD OPTIONS] -- CMD ARGS
            i = argv.index("--")
            head = argv[:i] or ["tui"]
            if not argv[i + 1 :]:
                usage = (
                    PROGRAM_COMMANDS[head[0]].usage if head[0] in PROGRAM_COMMANDS else "dlcprof"
                )
                raise UsageError(f"no command after '--' ({usage} -- python train.py)")
            if head[0] not in PROGRAM_COMMANDS:
                heads = ", ".join(f"'dlcprof {h} -- CMD'" for h in PROGRAM_COMMANDS)
                raise UsageError(f"'{head[0]} ... -- CMD' is not a command: use {heads}")
            parser, module, function, _ = PROGRAM_COMMANDS[head[0]]
            args = parser().parse_args(head[1:])
            cmd = getattr(importlib.import_module(f"dlcprof.cli.{module}"), function)
            return cmd(args, argv[i + 1 :])
        # `dlcprof` and `dlcprof TARGET --mode ...` open the TUI.
        if not argv or (
            argv[0] not in COMMANDS
            and argv[0] not in PROGRAM_COMMANDS
            and argv[0] not in ("-h", "--help", "--version")
        ):
            argv = ["tui", *argv]
        if argv[0] in PROGRAM_COMMANDS.keys() - COMMANDS:  # `check` without "-- CMD": its help
            alone = PROGRAM_COMMANDS[argv[0]].parser()
            alone.parse_args(argv[1:])
            raise UsageError(f"dlcprof {argv[0]} runs your command: {alone.usage}")
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


class Head(NamedTuple):
    """A head of ``dlcprof HEAD [options] -- CMD ARGS``."""

    parser: Callable[[], Parser]  # its options'
    module: str  # in dlcprof/cli/
    function: str  # of the options and CMD ARGS
    usage: str  # what goes before "-- CMD", in one line's example


# `dlcprof HEAD [options] -- CMD ARGS` (no head: the TUI) -> its Head.
PROGRAM_COMMANDS = {
    "tui": Head(attach_tui_parser, "attach", "cmd_attach_tui", "dlcprof"),
    "run": Head(attach_parser, "attach", "cmd_attach_run", "dlcprof run [options]"),
    "check": Head(check_parser, "check", "cmd_check", "dlcprof check [budgets]"),
}
