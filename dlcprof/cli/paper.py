"""``dlcprof paper``: the paper's plan of runs, headless, then its findings."""

from __future__ import annotations

import argparse

from dlcprof.cli.headless import follow_run, stopping
from dlcprof.cli.loading import LoadError
from dlcprof.cli.output import console, error, note, say, write_outputs
from dlcprof.exit_codes import EXIT_FAILED, EXIT_OK, exit_code


def cmd_paper(args: argparse.Namespace) -> int:
    """The paper's findings beside this machine's: the plan's runs one after
    another (no monitors: the figures are compile seconds and latencies), then
    the tables; every run is an ordinary run of the session."""
    from dlcprof.console import paper_line
    from dlcprof.figures.paper import findings
    from dlcprof.journal import journaled
    from dlcprof.paper import PlanError, make_plan
    from dlcprof.session import Session
    from dlcprof.signals import stop_on_signals
    from dlcprof.tables import paper_tables

    try:
        plan = make_plan(
            quick=args.quick,
            device=args.device,
            size=args.size,
            workloads=args.workloads,
            sweep=args.sweep_workload,
        )
    except PlanError as e:
        raise LoadError(str(e)) from None
    out = console()
    session = Session()
    session.apply(plan.event)
    say(out, paper_line(plan.event, session))
    status = EXIT_OK
    with stop_on_signals(stopping(out)) as stops, journaled(session, note):
        for settings in plan.runs:
            run_id, bad = follow_run(settings, session, out, args, stops, paper_line, False)
            if bad is not None:
                error(bad.message)
            if stops:
                status = stops[0].exit_code
                break
            # A failed run does not stop the others: its row says n/a and why.
            status = status or exit_code(session, run_id)
        f = findings(session)
        assert f is not None
        say(out, paper_tables(f))
        if not write_outputs(session, args):
            status = status or EXIT_FAILED
    return status
