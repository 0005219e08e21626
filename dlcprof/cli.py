"""Command line: ``dlcprof [tui] | run | try | paper | list | report | replay | compare | merge |
doctor``.

Never imports torch: the worker does. Bad input is one line on stderr and
exit code 2; a failed run exits 1, one stopped by Ctrl-C, SIGTERM or SIGHUP
128 + the signal, after writing whatever was captured.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from dlcprof import __version__, text
from dlcprof import events as ev
from dlcprof.settings import (
    ALL_MODES,
    OPTION,
    OPTIONS,
    Option,
    RunSettings,
    SettingsError,
    parse_shapes,
)

if TYPE_CHECKING:
    from rich.console import Console

    from dlcprof.tui.app import DlcprofApp

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2  # a stop signal: 128 + its number (signals.py)


def _console(**kwargs) -> Console:  # type: ignore[no-untyped-def]
    # Imported here: the TUI, the default command, has no use for the console's tables.
    from dlcprof.console import make_console

    return make_console(**kwargs)


class UsageError(Exception):
    """One-line message; exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see '{self.prog} --help')")


def _settings_args(p: argparse.ArgumentParser) -> None:
    """One flag per run option (dlcprof.settings.OPTIONS). Choices are checked
    by RunSettings.validate, so the CLI and the TUI share one message."""
    defaults = RunSettings(target="-")
    for o in OPTIONS:
        if o.kind in ("choice", "text"):
            p.add_argument(o.flag, default=getattr(defaults, o.name), help=_help(o))
        elif o.kind == "int":
            default = None if o.name == "threads" else getattr(defaults, o.name)
            p.add_argument(o.flag, type=_int(o.name), default=default, help=_help(o))
        elif o.kind == "sizes":
            p.add_argument(o.flag, type=_shapes, default=None, help=_help(o))
        else:  # a switch: --sweep, --no-benchmark
            p.add_argument(o.flag, action="store_true", dest=o.name, help=o.help)


def _help(o: Option) -> str:
    return f"{' | '.join((*o.choices, *o.also))}: {o.help}" if o.choices else o.help


def _int(name: str):
    def convert(text: str) -> int:
        try:
            return int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(
                f"invalid --{name} {text!r}: give a whole number"
            ) from None

    return convert


def _shapes(text: str) -> list[int]:
    try:
        return parse_shapes(text)
    except SettingsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def _settings_from(args: argparse.Namespace, target: str) -> RunSettings:
    s = RunSettings(target=target)
    for o in OPTIONS:
        value = getattr(args, o.name)
        if o.kind == "off-switch":
            value = not value
        if value is not None:
            setattr(s, o.name, value)
    return s.validate()


def _run_queue(args: argparse.Namespace) -> list[RunSettings]:
    """The runs one command asks for: one, or one per mode for ``--mode all``."""
    if args.mode != ALL_MODES:
        return [_settings_from(args, args.target)]
    base = _settings_from(argparse.Namespace(**{**vars(args), "mode": "default"}), args.target)
    if base.backend != "inductor":
        raise UsageError(f"--mode {ALL_MODES}: {text.modes_need_inductor(base.backend)}")
    return base.each_mode()


def build_parser() -> _Parser:
    p = _Parser(prog="dlcprof", description="A terminal profiler for torch.compile.")
    p.add_argument("--version", action="version", version=f"dlcprof {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    tui = sub.add_parser("tui", help="open the TUI (the default command)")
    tui.add_argument(
        "target", nargs="?", default=None, help="bundled name, file.py[:func], module:func"
    )
    _settings_args(tui)

    run = sub.add_parser(
        "run",
        help="compile a workload headless and print what happened",
        epilog="Your own program instead: dlcprof run [--json F] [--report DIR] "
        "[--eager-baseline] -- CMD ARGS... (the TUI: dlcprof -- CMD ARGS...; docs/attach.md)",
    )
    run.add_argument("target", help="bundled name (dlcprof list), file.py[:func], module:func")
    _settings_args(run)
    run.add_argument("--json", type=Path, default=None, help="write the report JSON here")
    run.add_argument("--report", type=Path, default=None, help="write a report folder here")
    run.add_argument("--quiet", action="store_true", help="no live lines, only the tables")
    calls_help = "calls the compile must pay back within (advice; default 1000)"
    run.add_argument("--calls", type=_int("calls"), default=None, help=calls_help)
    run.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds without progress before the worker counts as hung",
    )

    tr = sub.add_parser("try", help="run one advice item of a saved session and measure it")
    tr.add_argument("session", type=Path, help="a report JSON (dlcprof run ... --json)")
    tr.add_argument("n", type=_int("n"), help="the advice item's number, as the run listed it")
    tr.add_argument("--calls", type=_int("calls"), default=None, help=calls_help)
    tr.add_argument(
        "--json",
        type=Path,
        default=None,
        help="write the session and the trial here (default: SESSION)",
    )
    tr.add_argument("--quiet", action="store_true", help="no live lines, only the result")
    tr.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds without progress before the worker counts as hung",
    )

    paper = sub.add_parser("paper", help="reproduce the findings of arXiv 2611.04273 here")
    for name in ("device", "size"):
        o = OPTION[name]
        paper.add_argument(o.flag, default=getattr(RunSettings(target="-"), name), help=_help(o))
    paper.add_argument(
        "--quick",
        action="store_true",
        help="three workloads, one fresh-cache compile, four sweep sizes (minutes, not ten)",
    )
    paper.add_argument(
        "--workloads",
        type=lambda v: [n for n in v.split(",") if n.strip()],
        default=None,
        help="comma-separated workloads to benchmark (default: all bundled; --quick: three)",
    )
    paper.add_argument(
        "--sweep-workload", default="variable-length", help="the workload swept static vs dynamic"
    )
    paper.add_argument("--json", type=Path, default=None, help="write the report JSON here")
    paper.add_argument("--report", type=Path, default=None, help="write a report folder here")
    paper.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds without progress before a worker counts as hung",
    )

    sub.add_parser("list", help="list the bundled workloads")

    rep = sub.add_parser("report", help="re-render a saved session")
    rep.add_argument("session", type=Path)
    fmt = rep.add_mutually_exclusive_group()
    fmt.add_argument("--html", action="store_true", help="print the HTML report")
    fmt.add_argument("--md", action="store_true", help="print the Markdown report (default)")
    rep.add_argument("-o", "--output", type=Path, default=None, help="write to this file instead")

    rp = sub.add_parser("replay", help="open a saved session in the TUI")
    rp.add_argument("session", type=Path)

    cmp = sub.add_parser("compare", help="compare two saved sessions")
    cmp.add_argument("a", type=Path)
    cmp.add_argument("b", type=Path)
    cmp.add_argument("--html", type=Path, default=None, help="also write the comparison as HTML")
    cmp.add_argument(
        "--run",
        nargs="+",
        metavar="RUN",
        default=None,
        help="the run to compare in a session of several: a number (1 is the first, -1 the "
        "latest) or a run id; one for both sessions, or one for A then one for B "
        "(default: the latest of each)",
    )

    mrg = sub.add_parser(
        "merge",
        help="join the report folders of one job's nodes into one session of every rank",
        epilog="Each node: dlcprof run --report DIR -- torchrun --nnodes N --node-rank K ... "
        "(docs/ranks.md)",
    )
    mrg.add_argument(
        "sessions",
        type=Path,
        nargs="+",
        metavar="FOLDER",
        help="a node's report folder (or its session.json)",
    )
    mrg.add_argument(
        "-o", "--output", type=Path, required=True, help="write the merged report folder here"
    )

    sub.add_parser("doctor", help="what this machine can do, and what is missing")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if "--" in argv:  # dlcprof [tui | run OPTIONS] -- CMD ARGS: the user's own program
        i = argv.index("--")
        try:
            return _attach(argv[:i], argv[i + 1 :])
        except UsageError as e:
            _error(str(e))
            return EXIT_USAGE
    # `dlcprof` and `dlcprof TARGET --mode ...` open the TUI.
    if not argv or (argv[0] not in _COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    try:
        # Known args first: the top parser would name itself for a subcommand's stray argument.
        args, extra = build_parser().parse_known_args(argv)
        if extra:
            raise UsageError(
                f"unrecognized arguments: {' '.join(extra)} (see 'dlcprof {args.command} --help')"
            )
        return _COMMANDS[args.command](args)
    except (UsageError, SettingsError, _LoadError) as e:
        _error(str(e))
        return EXIT_USAGE


def _attach_parser() -> _Parser:
    p = _Parser(
        prog="dlcprof run",
        description="Run CMD and show what it compiles.",
        usage="dlcprof [run [--json F] [--report DIR] [--quiet] [--eager-baseline] "
        "[--no-hotspots]] -- CMD ...",
    )
    p.add_argument("--json", type=Path, default=None, help="write the report JSON here")
    p.add_argument("--report", type=Path, default=None, help="write a report folder here")
    p.add_argument("--quiet", action="store_true", help="no live lines, only the tables")
    p.add_argument(
        "--eager-baseline",
        action="store_true",
        help="then run CMD again with torch.compile forced eager, and compare wall times",
    )
    _no_hotspots(p)
    return p


def _no_hotspots(p: argparse.ArgumentParser) -> None:
    """A run's ``--no-hotspots``, for an attached program (attach/monitors.py)."""
    p.add_argument(
        OPTION["hotspots"].flag,
        dest="hotspots",
        action="store_false",
        help="no py-spy on the program's compiling processes: no hot frames, and none "
        "of its CPU taken from the program",
    )


def _attach(head: list[str], command: list[str]) -> int:
    """``dlcprof [tui [--no-hotspots]] -- CMD`` (the TUI) or ``dlcprof run
    [options] -- CMD`` (headless)."""
    if head[:1] in ([], ["tui"]):
        p = _Parser(prog="dlcprof tui", usage="dlcprof [tui [--no-hotspots]] -- CMD ...")
        _no_hotspots(p)
        return cmd_attach_tui(command, p.parse_args(head[1:]).hotspots)
    if head[0] != "run":
        raise UsageError(
            f"'{head[0]} ... -- CMD' is not a command: use 'dlcprof run -- CMD' or 'dlcprof -- CMD'"
        )
    return cmd_attach_run(_attach_parser().parse_args(head[1:]), command)


def cmd_attach_run(args: argparse.Namespace, command: list[str]) -> int:
    """Run the user's command as it would run, its compiles followed live (on
    stderr); exit with its own status."""
    import queue

    from dlcprof.attach.program import (
        AttachedProgram,
        CommandError,
        exit_status,
        forwarding_signals,
    )
    from dlcprof.session import Session
    from dlcprof.signals import Stopped

    session = Session()
    inbox: queue.Queue[ev.Event] = queue.Queue()
    program: list[AttachedProgram] = []
    out: Console | None = None
    with forwarding_signals(program, lambda signum: Stopped(signum).said) as stops:
        for eager in (False, True) if args.eager_baseline else (False,):
            if eager:
                if stops or program[0].proc.returncode != 0:
                    break  # stopped, or failed: no baseline to compare with
                _say(out, "eager baseline: the same command, torch.compile forced eager…")
            try:
                program[:] = [
                    AttachedProgram(
                        command,
                        inbox.put,
                        output="inherit",
                        eager=eager,
                        raw_trace=args.report is not None,
                        hotspots=args.hotspots,
                    )
                ]
            except CommandError as e:
                _note(f"dlcprof: {e}")
                return e.exit_code
            if out is None:  # Rich and the tables once the program runs: not to delay it
                from dlcprof.console import DivergenceWatch, attach_line, program_summary

                out = _console(stderr=True)  # stdout is the program's
                ranks = DivergenceWatch()
            while True:
                try:
                    event = inbox.get(timeout=0.2)
                except queue.Empty:
                    event = None
                if event is not None:
                    session.apply(event)
                for line in [] if args.quiet else ranks.lines(session, ev.now(), event):
                    _say(out, line)  # a divergence among ranks, the moment it appears
                if event is None:
                    continue
                if not args.quiet or isinstance(event, ev.ProgramExited):
                    _say(out, attach_line(event, session))
                if isinstance(event, ev.ProgramExited):
                    break
        _say(out, program_summary(session))
        _write_outputs(session, args)
    end = session.program_exit
    return exit_status(end.returncode or 0) if end is not None else EXIT_FAILED


def cmd_attach_tui(command: list[str], hotspots: bool = True) -> int:
    """The TUI on the user's program. A stop signal to dlcprof reaches the
    program too; after a detach the session is saved (the program runs on)."""
    from dlcprof.attach.program import CommandError, check_command
    from dlcprof.tui.app import DlcprofApp

    try:
        check_command(command)
    except CommandError as e:
        _note(f"dlcprof: {e}")
        return e.exit_code
    return _run_app(DlcprofApp(command=command, hotspots=hotspots))


def _error(message: str) -> None:
    # Plain write: a Rich console would wrap the one line at the terminal width.
    _note(f"dlcprof: error: {message}")


class _LoadError(Exception):
    """A workload or report that cannot be loaded: one line, exit 2."""


def _resolve(target: str, settings: RunSettings | None = None) -> str:
    """Find the workload without running it; with ``settings``, also check what a
    sweep needs where the source shows it (before torch is imported)."""
    from dlcprof.workloads import WorkloadError, check_sweep, resolve

    try:
        spec = resolve(target)
        if settings is not None and settings.sweeping:
            check_sweep(spec, settings.shapes)
    except WorkloadError as e:
        raise _LoadError(str(e)) from None
    return spec.name


def cmd_run(args: argparse.Namespace) -> int:
    from dlcprof.advice_tables import advice_view, compile_cost_view
    from dlcprof.console import run_summary
    from dlcprof.figures.advice import DEFAULT_CALLS
    from dlcprof.figures.modes import mode_tables
    from dlcprof.session import Session
    from dlcprof.signals import stop_on_signals
    from dlcprof.tables import modes_table

    runs = _run_queue(args)
    _resolve(runs[0].target, runs[0])
    out = _console()
    session = Session()
    exit_code = EXIT_OK
    with stop_on_signals(_stopping(out)) as stops:
        # `--mode all`: one worker per mode, one after another, into one session.
        for settings in runs:
            run_id, bad = _follow(settings, session, out, args, stops)
            run = session.runs.get(run_id or "")
            if bad is not None:
                _error(bad.message)
                exit_code = EXIT_USAGE
                break
            if run is not None:
                _say(out, run_summary(run, session))
                _say(out, compile_cost_view(run))
                if run.status == "ok":
                    _say(out, advice_view(session, run, args.calls or DEFAULT_CALLS))
            if stops:
                exit_code = stops[0].exit_code
                break
            exit_code = exit_code or _exit_code(session, run_id)
        if len(runs) > 1:
            for table in mode_tables(session):
                _say(out, modes_table(table))
        if not _write_outputs(session, args):
            exit_code = exit_code or EXIT_FAILED
    return exit_code


def _follow(
    settings: RunSettings,
    session,
    out: Console,
    args: argparse.Namespace,
    stops: list,
    line=None,
    monitors: bool = True,  # type: ignore[no-untyped-def]
) -> tuple[str | None, ev.ErrorRaised | None]:
    """Run ``settings`` in a worker, fold and print its events until it exits (each
    worded by ``line``, the live lines by default); a signal in ``stops`` stops
    it. (run id, the bad-input error if any)."""
    from dlcprof.console import live_line
    from dlcprof.engine import run_headless

    line = line or live_line
    quiet = getattr(args, "quiet", False)
    bad: ev.ErrorRaised | None = None  # the workload broke the contract: one line, exit 2

    def on_event(event: ev.Event) -> None:
        nonlocal bad
        session.apply(event)
        if isinstance(event, ev.ErrorRaised) and event.bad_input and bad is None:
            bad = event
        elif bad is None or not isinstance(event, ev.WorkerExited):
            if not quiet or isinstance(event, _LOUD):
                _say(out, line(event, session))

    run_id = run_headless(settings, on_event, stops, idle_timeout_s=args.timeout, monitors=monitors)
    return run_id, bad


def _stopping(out: Console):  # type: ignore[no-untyped-def]
    """What a stop signal prints, the moment it arrives."""

    def say(stop) -> None:  # type: ignore[no-untyped-def]
        _say(out, f"[yellow]{stop.said}: stopping the worker and its compiler children…[/]")

    return say


# Events printed under --quiet too.
_LOUD = (ev.ErrorRaised, ev.WorkerExited, ev.RecompileLimitHit, ev.EagerCallsCounted)


def _say(out: Console, line: object) -> None:
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


def _exit_code(session, run_id: str | None) -> int:
    run = session.runs.get(run_id or "")
    exited = session.worker_exits[-1] if session.worker_exits else None
    if run is None or run.status != "ok" or (exited is not None and exited.returncode != 0):
        return EXIT_FAILED
    return EXIT_OK


def _write_outputs(session, args: argparse.Namespace) -> bool:
    """Write --json / --report. Where one cannot be written, say so in one line and
    write it to a fresh place under the temp folder instead: the session is not lost."""
    if args.json is None and args.report is None:
        return True  # nothing to write: the report modules stay unimported
    import tempfile

    from dlcprof.engine import elsewhere
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.folder import save_session
    from dlcprof.report.model import build
    from dlcprof.report.schema import ReportError, build_report, dumps_report

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
            _note(f"{what} written to {write(wanted)}")
            continue
        except ReportError as e:
            ok = False
            problem = str(e)
        try:
            _error(f"{problem}; the session is saved to {fallback()} instead")
        except (ReportError, OSError) as e:
            _error(f"{problem}, and the fallback in the temp folder failed too: {e}")
    return ok


def _note(message: str) -> None:
    try:
        print(message, file=sys.stderr)
    except OSError:
        pass


def cmd_try(args: argparse.Namespace) -> int:
    """The advised run again in a fresh worker with one item's change and the same
    cache setting; the measured effect goes beside the prediction, in the JSON."""
    from dlcprof.figures import advice as fa
    from dlcprof.signals import stop_on_signals

    session = _load(args.session)
    run = fa.advised_run(session)
    if run is None:
        raise _LoadError(f"{args.session}: no run to take advice from")
    if run.process is not None:
        raise UsageError(
            f"{args.session}: an attached program's advice cannot be tried for you: "
            f"{fa.PROGRAM_TRY_WHY}"
        )
    advice = fa.advise(session, run, args.calls or fa.DEFAULT_CALLS)
    if not 1 <= args.n <= len(advice.items):
        have = f"advice 1 to {len(advice.items)}" if advice.items else advice.nothing or "no advice"
        raise UsageError(f"no advice {args.n} in {args.session}: {have}")
    item = advice.items[args.n - 1]
    if not item.options:
        raise UsageError(f"advice {args.n} ({item.title}) cannot be tried for you: {item.try_why}")
    settings = RunSettings.from_dict(fa.trial_settings(run, item)).validate()
    out = _console()
    exit_code = EXIT_OK
    with stop_on_signals(_stopping(out)) as stops:
        run_id, bad = _follow(settings, session, out, args, stops, monitors=bool(run.monitors))
        trial = session.runs.get(run_id or "")
        if bad is not None:
            _error(bad.message)
            exit_code = EXIT_USAGE
        elif stops:
            exit_code = stops[0].exit_code
        elif trial is None or trial.status != "ok":
            exit_code = EXIT_FAILED
        else:
            tried = fa.tried(run, trial, item)
            session.apply(tried)
            _say(out, f"{item.title}: {fa.tried_text(tried)}")
        args.json, args.report = args.json or args.session, None
        if not _write_outputs(session, args):
            exit_code = exit_code or EXIT_FAILED
    return exit_code


def cmd_paper(args: argparse.Namespace) -> int:
    """The paper's findings beside this machine's: the plan's runs one after
    another (no monitors: the figures are compile seconds and latencies), then
    the tables; every run is an ordinary run of the session."""
    from dlcprof.console import paper_line
    from dlcprof.figures.paper import findings
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
        raise _LoadError(str(e)) from None
    out = _console()
    session = Session()
    session.apply(plan.event)
    _say(out, paper_line(plan.event, session))
    exit_code = EXIT_OK
    with stop_on_signals(_stopping(out)) as stops:
        for settings in plan.runs:
            run_id, bad = _follow(settings, session, out, args, stops, paper_line, False)
            if bad is not None:
                _error(bad.message)
            if stops:
                exit_code = stops[0].exit_code
                break
            # A failed run does not stop the others: its row says n/a and why.
            exit_code = exit_code or _exit_code(session, run_id)
        f = findings(session)
        assert f is not None
        _say(out, paper_tables(f))
        if not _write_outputs(session, args):
            exit_code = exit_code or EXIT_FAILED
    return exit_code


def cmd_list(args: argparse.Namespace) -> int:
    from dlcprof.workloads import list_bundled

    out = _console()
    infos = list_bundled()
    width = max(len(w.name) for w in infos)
    for w in infos:
        out.print(f"[bold]{w.name:<{width}}[/]  {w.description}", soft_wrap=True)
    return EXIT_OK


def cmd_tui(args: argparse.Namespace) -> int:
    from dlcprof.tui.app import DlcprofApp

    target = args.target
    if args.mode == ALL_MODES:
        raise UsageError(
            f"--mode {ALL_MODES} is for 'dlcprof run': in the TUI, press a to run "
            "every mode side by side"
        )
    if target is not None:
        _resolve(target)
    settings = _settings_from(args, target or _default_target())
    return _run_app(DlcprofApp(target=settings.target, settings=settings))


def _run_app(app: DlcprofApp) -> int:
    """Run the TUI. A stop signal (SIGTERM, SIGHUP when the terminal closes)
    closes it like q does, and then the session is saved, not lost; on an
    attached program its controller ends the program and says the rest."""
    from dlcprof.signals import HANGUP, stop_on_signals
    from dlcprof.tui.controller import save_after_stop

    # SIGHUP even under nohup: a TUI whose terminal hung up has nothing to show.
    with stop_on_signals(even_if_ignored=(HANGUP,)) as stops:
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
            _note(line)
        return code


def _default_target() -> str:
    from dlcprof.workloads import DEFAULT_WORKLOAD

    return DEFAULT_WORKLOAD


def _load(path: Path):
    from dlcprof.report.schema import ReportError, load_session

    try:
        return load_session(path)
    except ReportError as e:
        raise _LoadError(str(e)) from None


def cmd_report(args: argparse.Namespace) -> int:
    from dlcprof.report.html import render_html
    from dlcprof.report.markdown import render_markdown
    from dlcprof.report.model import build

    model = build(_load(args.session))
    text = render_html(model) if args.html else render_markdown(model)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    return _write_file(args.output, text)


def _write_file(path: Path, text: str) -> int:
    """Write a rendered report; one line and exit 1 when it cannot be written."""
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.errors import ReportError

    try:
        write_atomic(path, text)
    except ReportError as e:
        _error(str(e))
        return EXIT_FAILED
    return EXIT_OK


def cmd_replay(args: argparse.Namespace) -> int:
    from dlcprof.tui.app import DlcprofApp

    session = _load(args.session)
    return _run_app(DlcprofApp(session=session, replay=True, start_standby=False))


def cmd_compare(args: argparse.Namespace) -> int:
    from dlcprof.figures.compare import CompareError, compare
    from dlcprof.report.html import render_compare_html
    from dlcprof.tables import compare_table

    runs = args.run or [None]
    if len(runs) > 2:
        raise _LoadError("--run takes one run for both sessions, or one for A and one for B")
    run_a, run_b = runs[0], runs[-1]
    try:
        cmp = compare(_load(args.a), _load(args.b), run_a, run_b)
    except CompareError as e:
        raise _LoadError(str(e)) from None
    _console().print(compare_table(cmp))
    if args.html is not None:
        return _write_file(args.html, render_compare_html(cmp))
    return EXIT_OK


def cmd_merge(args: argparse.Namespace) -> int:
    from dlcprof.figures.nodes import node_lines
    from dlcprof.report.errors import ReportError
    from dlcprof.report.folder import save_session
    from dlcprof.report.merge import merge_sessions

    try:
        session = merge_sessions(args.sessions)
    except ReportError as e:
        raise _LoadError(str(e)) from None
    try:
        folder = save_session(session, args.output)
    except ReportError as e:
        _error(str(e))
        return EXIT_FAILED
    for line in node_lines(session):
        print(line)
    print(f"merged {text.plural(len(session.nodes), 'node')} into {folder}")
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from dlcprof.doctor import checks, render

    _console().print(render(checks()))
    return EXIT_OK


_COMMANDS = {
    "tui": cmd_tui,
    "run": cmd_run,
    "try": cmd_try,
    "paper": cmd_paper,
    "list": cmd_list,
    "report": cmd_report,
    "replay": cmd_replay,
    "compare": cmd_compare,
    "merge": cmd_merge,
    "doctor": cmd_doctor,
}

if __name__ == "__main__":
    sys.exit(main())
