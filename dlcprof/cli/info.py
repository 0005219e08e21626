"""``dlcprof list`` (the bundled workloads) and ``dlcprof doctor`` (what this
machine can do)."""

from __future__ import annotations

import argparse

from dlcprof.cli.output import console
from dlcprof.exit_codes import EXIT_OK


def cmd_list(args: argparse.Namespace) -> int:
    from dlcprof.workloads import list_bundled

    out = console()
    infos = list_bundled()
    width = max(len(w.name) for w in infos)
    for w in infos:
        out.print(f"[bold]{w.name:<{width}}[/]  {w.description}", soft_wrap=True)
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from dlcprof.doctor import checks, render

    console().print(render(checks()))
    return EXIT_OK
