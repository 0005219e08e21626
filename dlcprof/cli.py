"""Command line: ``dlcprof [tui] | run | paper | list | report | replay | compare | doctor``.

Never imports torch: the worker does. Bad input is one line on stderr and
exit code 2; a failed run exits 1 (130 when cancelled) after writing
whatever was captured.
"""

from __future__ import annotations

import argparse
import queue
import sys
from pathlib import Path
from typing import NoReturn

from dlcprof import __version__
from dlcprof import events as ev
from dlcprof.console import make_console
from dlcprof.settings import OPTION, OPTIONS, Option, RunSettings, SettingsError, parse_shapes

EXIT_OK, EXIT_FAILED, EXIT_USAGE, EXIT_CANCELLED = 0, 1, 2, 130


class UsageError(Exception):
    """One-line message; exit code 2."""


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> NoReturn:
        raise UsageError(f"{message} (see 'dlcprof {self.prog.split()[-1]} --help')")


def _settings_args(p: argparse.ArgumentParser) -> None:
    """One flag per run option (dlcprof.settings.OPTIONS). Choices are checked
    by RunSettings.validate, so the CLI and the TUI share one message."""
    defaults = RunSettings(target="-")
    for o in OPTIONS:
        if o.kind == "choice":
            p.add_argument(o.flag, default=getattr(defaults, o.name), help=_help(o))
        elif o.kind == "int":
            default = None if o.name == "threads" else getattr(defaults, o.name)
            p.add_argument(o.flag, type=_int(o.name), default=default, help=_help(o))
        elif o.kind == "sizes":
            p.add_argument(o.flag, type=_shapes, default=None, help=_help(o))
        else:  # a switch: --sweep, --no-benchmark
            p.add_argument(o.flag, action="store_true", dest=o.name, help=o.help)


def _help(o: Option) -> str:
    return f"{' | '.join(o.choices)}: {o.help}" if o.choices else o.help


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


def build_parser() -> _Parser:
    p = _Parser(prog="dlcprof", description="A terminal profiler for torch.compile.")
    p.add_argument("--version", action="version", version=f"dlcprof {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=_Parser)

    tui = sub.add_parser("tui", help="open the TUI (the default command)")
    tui.add_argument(
        "target", nargs="?", default=None, help="bundled name, file.py[:func], module:func"
    )
    _settings_args(tui)

    run = sub.add_parser("run", help="compile a workload headless and print what happened")
    run.add_argument("target", help="bundled name (dlcprof list), file.py[:func], module:func")
    _settings_args(run)
    run.add_argument("--json", type=Path, default=None, help="write the report JSON here")
    run.add_argument("--report", type=Path, default=None, help="write a report folder here")
    run.add_argument("--quiet", action="store_true", help="no live lines, only the tables")
    run.add_argument(
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
        "--quick", action="store_true",
        help="three workloads, one fresh-cache compile, four sweep sizes (minutes, not ten)",
    )  # fmt: skip
    paper.add_argument(
        "--workloads", type=lambda v: [n for n in v.split(",") if n.strip()], default=None,
        help="comma-separated workloads to benchmark (default: all bundled; --quick: three)",
    )  # fmt: skip
    paper.add_argument("--sweep-workload", default="variable-length",
                       help="the workload swept static vs dynamic")  # fmt: skip
    paper.add_argument("--json", type=Path, default=None, help="write the report JSON here")
    paper.add_argument("--report", type=Path, default=None, help="write a report folder here")
    paper.add_argument("--timeout", type=float, default=600.0,
                       help="seconds without progress before a worker counts as hung")  # fmt: skip

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

    sub.add_parser("doctor", help="what this machine can do, and what is missing")
    return p


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    # `dlcprof` and `dlcprof TARGET --mode ...` open the TUI.
    if not argv or (argv[0] not in _COMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["tui", *argv]
    try:
        args = build_parser().parse_args(argv)
        return _COMMANDS[args.command](args)
    except (UsageError, SettingsError, _LoadError) as e:
        _error(str(e))
        return EXIT_USAGE


def _error(message: str) -> None:
    # Plain write: a Rich console would wrap the one line at the terminal width.
    print(f"dlcprof: error: {message}", file=sys.stderr)


class _LoadError(Exception):
    """A workload or report that cannot be loaded: one line, exit 2."""


def _resolve(target: str) -> str:
    from dlcprof.workloads import WorkloadError, resolve

    try:
        return resolve(target).name
    except WorkloadError as e:
        raise _LoadError(str(e)) from None


def cmd_run(args: argparse.Namespace) -> int:
    from dlcprof.console import live_line, run_summary
    from dlcprof.engine import LiveRun
    from dlcprof.session import Session

    settings = _settings_from(args, args.target)
    _resolve(settings.target)
    out = make_console()
    session = Session()
    inbox: queue.Queue[ev.Event] = queue.Queue()
    live = LiveRun(settings, inbox.put, idle_timeout_s=args.timeout)
    live.start()
    cancelled = done = False
    while not done:
        try:
            event = inbox.get(timeout=0.1)
            done = isinstance(event, ev.WorkerExited)
            session.apply(event)
            loud = isinstance(event, (ev.ErrorRaised, ev.WorkerExited, ev.RecompileLimitHit))
            line = live_line(event, session) if loud or not args.quiet else None
            if line is not None:
                out.print(line)
        except queue.Empty:
            continue
        except KeyboardInterrupt:
            if not cancelled:
                cancelled = True
                out.print("[yellow]Ctrl-C: stopping the worker and its compiler children…[/]")
                live.cancel("cancelled with Ctrl-C")
    run = session.runs.get(live.run_id or "")
    if run is not None:
        out.print(run_summary(run, session))
    exit_code = EXIT_CANCELLED if cancelled else _exit_code(session, live.run_id)
    if not _write_outputs(session, args):
        exit_code = exit_code or EXIT_FAILED
    return exit_code


def _exit_code(session, run_id: str | None) -> int:
    run = session.runs.get(run_id or "")
    exited = session.worker_exits[-1] if session.worker_exits else None
    if run is None or run.status != "ok" or (exited is not None and exited.returncode != 0):
        return EXIT_FAILED
    return EXIT_OK


def _write_outputs(session, args: argparse.Namespace) -> bool:
    """Write --json / --report; on failure say so in one line and keep going."""
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.folder import save_session
    from dlcprof.report.schema import ReportError, build_report, dumps_report

    ok = True
    if args.json is not None:
        try:
            write_atomic(args.json, dumps_report(build_report(session)))
            print(f"report JSON written to {args.json}", file=sys.stderr)
        except ReportError as e:
            _error(str(e))
            ok = False
    if args.report is not None:
        try:
            path = save_session(session, args.report)
            print(f"report folder written to {path}", file=sys.stderr)
        except ReportError as e:
            _error(str(e))
            ok = False
    return ok


def cmd_paper(args: argparse.Namespace) -> int:
    from dlcprof.console import paper_line, paper_tables
    from dlcprof.figures.paper import findings
    from dlcprof.paper import PlanError, make_plan, run_plan
    from dlcprof.session import Session

    try:
        plan = make_plan(quick=args.quick, device=args.device, size=args.size,
                         workloads=args.workloads, sweep=args.sweep_workload)  # fmt: skip
    except PlanError as e:
        raise _LoadError(str(e)) from None
    out = make_console()
    session = Session()

    def progress(event: ev.Event) -> None:
        line = paper_line(event, session)
        if line is not None:
            out.print(line)

    cancelled = run_plan(plan, session, progress, args.timeout)
    f = findings(session)
    assert f is not None
    out.print(paper_tables(f))
    ok = len(session.runs) == len(plan.runs) and all(
        r.status == "ok" for r in session.runs.values()
    ) and all(x.returncode == 0 for x in session.worker_exits)  # fmt: skip
    exit_code = EXIT_CANCELLED if cancelled else EXIT_OK if ok else EXIT_FAILED
    if not _write_outputs(session, args):
        exit_code = exit_code or EXIT_FAILED
    return exit_code


def cmd_list(args: argparse.Namespace) -> int:
    from dlcprof.workloads import list_bundled

    out = make_console()
    infos = list_bundled()
    width = max(len(w.name) for w in infos)
    for w in infos:
        out.print(f"[bold]{w.name:<{width}}[/]  {w.description}", soft_wrap=True)
    return EXIT_OK


def cmd_tui(args: argparse.Namespace) -> int:
    from dlcprof.tui.app import DlcprofApp

    target = args.target
    if target is not None:
        _resolve(target)
    settings = _settings_from(args, target or _default_target())
    DlcprofApp(target=settings.target, settings=settings).run()
    return EXIT_OK


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
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.html import render_html
    from dlcprof.report.markdown import render_markdown

    session = _load(args.session)
    text = render_html(session) if args.html else render_markdown(session)
    if args.output is None:
        sys.stdout.write(text)
    else:
        write_atomic(args.output, text)
    return EXIT_OK


def cmd_replay(args: argparse.Namespace) -> int:
    from dlcprof.tui.app import DlcprofApp

    session = _load(args.session)
    DlcprofApp(session=session, replay=True, start_standby=False).run()
    return EXIT_OK


def cmd_compare(args: argparse.Namespace) -> int:
    from dlcprof.report.atomic import write_atomic
    from dlcprof.report.compare import compare, render_compare_html, render_compare_table
    from dlcprof.report.schema import ReportError

    try:
        cmp = compare(_load(args.a), _load(args.b))
    except ReportError as e:
        raise _LoadError(str(e)) from None
    make_console().print(render_compare_table(cmp))
    if args.html is not None:
        write_atomic(args.html, render_compare_html(cmp))
    return EXIT_OK


def cmd_doctor(args: argparse.Namespace) -> int:
    from dlcprof.doctor import checks, render

    make_console().print(render(checks()))
    return EXIT_OK


_COMMANDS = {
    "tui": cmd_tui,
    "run": cmd_run,
    "paper": cmd_paper,
    "list": cmd_list,
    "report": cmd_report,
    "replay": cmd_replay,
    "compare": cmd_compare,
    "doctor": cmd_doctor,
}

if __name__ == "__main__":
    sys.exit(main())
