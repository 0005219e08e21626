"""``dlcprof run TARGET`` (a workload headless, then its tables) and ``dlcprof
try SESSION N`` (one advice item run and measured)."""

from __future__ import annotations

import argparse

from dlcprof.cli.headless import follow_run, stopping
from dlcprof.cli.loading import LoadError, load_report, resolve_target
from dlcprof.cli.output import console, error, say, write_outputs
from dlcprof.cli.parser import UsageError, run_queue
from dlcprof.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE, exit_code
from dlcprof.settings import RunSettings


def cmd_run(args: argparse.Namespace) -> int:
    from dlcprof.advice_tables import advice_view, compile_cost_view
    from dlcprof.console import run_summary
    from dlcprof.figures.advice.model import DEFAULT_CALLS
    from dlcprof.figures.modes import mode_tables
    from dlcprof.session import Session
    from dlcprof.signals import stop_on_signals
    from dlcprof.tables import modes_table

    runs = run_queue(args)
    resolve_target(runs[0].target, runs[0])
    out = console()
    session = Session()
    status = EXIT_OK
    with stop_on_signals(stopping(out)) as stops:
        # `--mode all`: one worker per mode, one after another, into one session.
        for settings in runs:
            run_id, bad = follow_run(settings, session, out, args, stops)
            run = session.runs.get(run_id or "")
            if bad is not None:
                error(bad.message)
                status = EXIT_USAGE
                break
            if run is not None:
                say(out, run_summary(run, session))
                say(out, compile_cost_view(run))
                if run.status == "ok":
                    say(out, advice_view(session, run, args.calls or DEFAULT_CALLS))
            if stops:
                status = stops[0].exit_code
                break
            status = status or exit_code(session, run_id)
        if len(runs) > 1:
            for table in mode_tables(session):
                say(out, modes_table(table))
        if not write_outputs(session, args):
            status = status or EXIT_FAILED
    return status


def cmd_try(args: argparse.Namespace) -> int:
    """The advised run again in a fresh worker with one item's change and the same
    cache setting; the measured effect goes beside the prediction, in the JSON."""
    from dlcprof.figures.advice import trial as fa
    from dlcprof.figures.advice.model import DEFAULT_CALLS
    from dlcprof.figures.advice.rules import advise
    from dlcprof.signals import stop_on_signals

    session = load_report(args.session)
    run = fa.advised_run(session)
    if run is None:
        raise LoadError(f"{args.session}: no run to take advice from")
    if run.process is not None:
        raise UsageError(
            f"{args.session}: an attached program's advice cannot be tried for you: "
            f"{fa.PROGRAM_TRY_WHY}"
        )
    advice = advise(session, run, args.calls or DEFAULT_CALLS)
    if not 1 <= args.n <= len(advice.items):
        have = f"advice 1 to {len(advice.items)}" if advice.items else advice.nothing or "no advice"
        raise UsageError(f"no advice {args.n} in {args.session}: {have}")
    item = advice.items[args.n - 1]
    if not item.options:
        raise UsageError(f"advice {args.n} ({item.title}) cannot be tried for you: {item.try_why}")
    settings = RunSettings.from_dict(fa.trial_settings(run, item)).validate()
    out = console()
    status = EXIT_OK
    with stop_on_signals(stopping(out)) as stops:
        run_id, bad = follow_run(settings, session, out, args, stops, monitors=bool(run.monitors))
        trial = session.runs.get(run_id or "")
        if bad is not None:
            error(bad.message)
            status = EXIT_USAGE
        elif stops:
            status = stops[0].exit_code
        elif trial is None or trial.status != "ok":
            status = EXIT_FAILED
        else:
            tried = fa.tried(run, trial, item)
            session.apply(tried)
            say(out, f"{item.title}: {fa.tried_text(tried)}")
        args.json, args.report = args.json or args.session, None
        if not write_outputs(session, args):
            status = status or EXIT_FAILED
    return status
