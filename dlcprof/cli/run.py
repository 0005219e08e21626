"""``dlcprof run TARGET`` (a workload headless, then its tables) and ``dlcprof
try SESSION N`` (one advice item run and measured)."""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from dlcprof.cli.headless import follow_run, stopping
from dlcprof.cli.loading import LoadError, load_report, resolve_target
from dlcprof.cli.output import console, error, note, say, write_outputs
from dlcprof.cli.parser import UsageError, run_queue
from dlcprof.exit_codes import EXIT_FAILED, EXIT_OK, EXIT_USAGE, exit_code
from dlcprof.settings import RunSettings

if TYPE_CHECKING:
    from rich.console import Console

    from dlcprof.events import AdviceTried
    from dlcprof.figures.advice.model import Advice
    from dlcprof.session import Run, Session


def cmd_run(args: argparse.Namespace) -> int:
    from dlcprof.advice_tables import advice_view, compile_cost_view
    from dlcprof.console import run_summary
    from dlcprof.figures.modes import mode_tables
    from dlcprof.journal import journaled
    from dlcprof.session import Session
    from dlcprof.signals import stop_on_signals
    from dlcprof.tables import modes_table

    runs = run_queue(args)
    resolve_target(runs[0].target, runs[0])
    out = console()
    session = Session()
    status = EXIT_OK
    with stop_on_signals(stopping(out)) as stops, journaled(session, note):
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
                    say(out, advice_view(session, run))
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
    cache setting (an attached program: its command again, the item's graph-break
    setting made by dlcprof's probes); the measured effect goes beside the
    prediction, in the JSON."""
    from dlcprof.figures.advice import trial as fa
    from dlcprof.figures.advice.rules import advise
    from dlcprof.journal import journaled

    session = load_report(args.session)
    run = fa.advised_run(session)
    if run is None:
        raise LoadError(f"{args.session}: no run to take advice from")
    advice = advise(session, run, args.calls)
    if not 1 <= args.n <= len(advice.items):
        have = f"advice 1 to {len(advice.items)}" if advice.items else advice.nothing or "no advice"
        raise UsageError(f"no advice {args.n} in {args.session}: {have}")
    item = advice.items[args.n - 1]
    if not item.options:
        raise UsageError(f"advice {args.n} ({item.title}) cannot be tried for you: {item.try_why}")
    out = console()
    with journaled(session, note):
        if "cache" in item.options:
            status, tried = _try_cache(args, session, run, item, out)
        elif run.process is not None:
            status, tried = _try_program(args, session, run, item)
        else:
            status, tried = _try_workload(args, session, run, item, out)
        if tried is not None:
            session.apply(tried)
            say(out, f"{item.title}: {fa.tried_text(tried)}")
        args.json, args.report = args.json or args.session, None
        if not write_outputs(session, args):
            status = status or EXIT_FAILED
    return status


def _try_workload(
    args: argparse.Namespace, session: Session, run: Run, item: Advice, out: Console
) -> tuple[int, AdviceTried | None]:
    """The workload's trial: (exit status, its AdviceTried or None)."""
    from dlcprof.figures.advice import trial as fa
    from dlcprof.signals import stop_on_signals

    settings = RunSettings.from_dict(fa.trial_settings(run, item)).validate()
    with stop_on_signals(stopping(out)) as stops:
        run_id, bad = follow_run(settings, session, out, args, stops, monitors=bool(run.monitors))
    trial = session.runs.get(run_id or "")
    if bad is not None:
        error(bad.message)
        return EXIT_USAGE, None
    if stops:
        return stops[0].exit_code, None
    if trial is None or trial.status != "ok":
        return EXIT_FAILED, None
    return EXIT_OK, fa.tried(run, trial, item)


def _follow_again(
    args: argparse.Namespace, session: Session, run: Run, what: str, **how: Any
) -> tuple[int, Session | None, Run | None]:
    """The attached program's recorded command run again where it ran, attached
    (``how``: follow_program's hatch or env); (exit status, its session, its
    process that compiled the most) or the exit status and why, said."""
    from dlcprof.cli.attach import follow_program
    from dlcprof.figures.advice import trial as fa

    program = session.program
    assert program is not None  # advise offers a re-run only then (fa.rerunnable)
    spy = run.monitors.get("py-spy")
    follow = argparse.Namespace(
        quiet=args.quiet,
        json=None,
        report=None,
        eager_baseline=False,
        hotspots=spy is not None and spy.available,
    )
    trials: list[Session] = []

    def keep(s: Session, out: Console) -> int:
        trials.append(s)
        return exit_code(s)

    status = follow_program(
        follow,
        program.argv,
        keep,
        summary=False,
        cwd=program.cwd,
        **how,
    )
    again = trials[0] if trials else None
    trial = fa.advised_run(again) if again is not None else None
    if status != EXIT_OK or trial is None or again is None or again.program_exit is None:
        error(
            f"{what} did not finish: "
            + (f"the program exited with {status}" if status else "the program compiled nothing")
        )
        return status or EXIT_FAILED, None, None
    return EXIT_OK, again, trial


def _try_program(
    args: argparse.Namespace, session: Session, run: Run, item: Advice
) -> tuple[int, AdviceTried | None]:
    """The attached program's trial: its recorded command run again where it ran,
    attached, with the item's change (a hatch, or dims made dynamic); its own
    session is compared, not kept (the session keeps the measured effect). (exit
    status, its AdviceTried or None)."""
    from dlcprof.attach_contract import DYNAMIC_ENV, DYNAMIC_UNSET, HATCH_UNSET
    from dlcprof.figures.advice import trial as fa

    hatch = item.options.get("hatch")
    how = {"hatch": hatch} if hatch else {"env": {DYNAMIC_ENV: item.options["dynamic_sources"]}}
    status, again, trial = _follow_again(args, session, run, f"the trial of {item.title}", **how)
    if again is None or trial is None:
        return status, None
    unset = [
        g.message
        for g in trial.logs
        if g.level == "warning" and (HATCH_UNSET in g.message or DYNAMIC_UNSET in g.message)
    ]
    if unset:
        error(unset[0])
        return EXIT_FAILED, None
    ended, exited = session.program_exit, again.program_exit
    assert exited is not None  # _follow_again's session is of a program that exited
    walls = (ended.wall_s if ended else None, exited.wall_s)
    return EXIT_OK, fa.tried(run, trial, item, walls)


def _try_cache(
    args: argparse.Namespace, session: Session, run: Run, item: Advice, out: Console
) -> tuple[int, AdviceTried | None]:
    """A cache item's trial: the attached program's command run twice on a new
    cache folder (TORCHINDUCTOR_CACHE_DIR), the cold fill then the warm start;
    for Mega-Cache the fill saves its artifacts and the warm start loads them on
    another new folder. The warm start is measured against the fill."""
    from dlcprof import scratch
    from dlcprof.attach_contract import CACHE_ARTIFACTS_ENV
    from dlcprof.figures.advice import trial as fa

    folder = scratch.new_folder("try-cache")
    fill = {"TORCHINDUCTOR_CACHE_DIR": str(folder / "inductor-cache")}
    start = dict(fill)
    if item.options["cache"] == fa.MEGA_CACHE:
        fill[CACHE_ARTIFACTS_ENV] = start[CACHE_ARTIFACTS_ENV] = str(folder / "artifacts.bin")
        start["TORCHINDUCTOR_CACHE_DIR"] = str(folder / "fresh-inductor-cache")
    runs = []
    for what, env in (("the cold fill", fill), ("the warm start", start)):
        say(out, f"{item.title}: {what}, TORCHINDUCTOR_CACHE_DIR={env['TORCHINDUCTOR_CACHE_DIR']}")
        status, again, trial = _follow_again(args, session, run, f"{what} of {item.title}", env=env)
        if again is None or trial is None:
            return status, None
        runs.append((again, trial))
    (cold, cold_run), (warm, warm_run) = runs
    assert cold.program_exit is not None and warm.program_exit is not None  # as _follow_again's
    walls = (cold.program_exit.wall_s, warm.program_exit.wall_s)
    return EXIT_OK, fa.tried(run, warm_run, item, walls, cold=(cold, cold_run), warm=warm)
