"""``dlcprof serve [--host H] [--port P] [ARGS…]``: the TUI of ``dlcprof
ARGS…`` in a browser page, through textual-serve (the ``serve`` extra): each
page that connects runs its own dlcprof. Bound to 127.0.0.1 unless told
otherwise: a GPU box is reached through a tunnel (ssh -L 8000:127.0.0.1:8000)."""

from __future__ import annotations

import argparse
import shlex
import sys

from dlcprof.cli.output import note
from dlcprof.cli.parser import UsageError
from dlcprof.exit_codes import EXIT_OK

NEEDS = "dlcprof serve needs textual-serve: pip install 'dlcprof[serve]'"


def cmd_serve(args: argparse.Namespace) -> int:
    try:
        from textual_serve.server import Server
    except ImportError:
        raise UsageError(NEEDS) from None
    if args.args[:1] == ["serve"]:
        raise UsageError("dlcprof serve serve: give the TUI's arguments, not serve again")
    command = shlex.join([sys.executable, "-m", "dlcprof.cli", *args.args])
    note(f"dlcprof serve: http://{args.host}:{args.port} runs: dlcprof {shlex.join(args.args)}")
    # Ctrl-C (SIGINT) or SIGTERM stops the server; it closes each page's dlcprof.
    Server(command, host=args.host, port=args.port, title="dlcprof").serve()
    return EXIT_OK
