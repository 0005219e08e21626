"""The command line's parsers, and the run settings they give: ``dlcprof
COMMAND ...`` (``build_parser``) and ``dlcprof [tui | run ...] -- CMD ...``
(``attach_parser``, ``attach_tui_parser``). The commands' bodies live beside
this, one module per family."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import NoReturn

from dlcprof import __version__, text
from dlcprof.settings import (
    ALL_MODES,
    OPTION,
    OPTIONS,
    Option,
    RunSettings,
    SettingsError,
    parse_shapes,
)


class UsageError(Exception):
    """One-line message; exit code 2."""


class Parser(argparse.ArgumentParser):
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
            p.add_argument(o.flag, type=_whole, default=default, help=_help(o))
        elif o.kind == "sizes":
            p.add_argument(o.flag, type=_shapes, default=None, help=_help(o))
        else:  # a switch: --sweep, --no-benchmark
            p.add_argument(o.flag, action="store_true", dest=o.name, help=o.help)


def _help(o: Option) -> str:
    return f"{' | '.join((*o.choices, *o.also))}: {o.help}" if o.choices else o.help


def _whole(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        # argparse names the option before it: "argument --iters: 'abc' is not ..."
        raise argparse.ArgumentTypeError(f"{text!r} is not a whole number") from None


def _shapes(text: str) -> list[int]:
    try:
        return parse_shapes(text)
    except SettingsError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def settings_from(args: argparse.Namespace, target: str) -> RunSettings:
    s = RunSettings(target=target)
    for o in OPTIONS:
        value = getattr(args, o.name)
        if o.kind == "off-switch":
            value = not value
        if value is not None:
            setattr(s, o.name, value)
    s.calls = getattr(args, "calls", None)  # kept with the run: every view of it judges alike
    return s.validate()


def run_queue(args: argparse.Namespace) -> list[RunSettings]:
    """The runs one command asks for: one, or one per mode for ``--mode all``."""
    if args.mode != ALL_MODES:
        return [settings_from(args, args.target)]
    base = settings_from(argparse.Namespace(**{**vars(args), "mode": "default"}), args.target)
    if base.backend != "inductor":
        raise UsageError(f"--mode {ALL_MODES}: {text.modes_need_inductor(base.backend)}")
    return base.each_mode()


def build_parser() -> Parser:
    p = Parser(
        prog="dlcprof",
        description="A terminal profiler for torch.compile.",
        epilog="Your own program: dlcprof [run [options]] -- CMD ARGS... (docs/attach.md); "
        "a compile budget in CI: dlcprof check [budgets] -- CMD ARGS... (docs/ci.md)",
    )
    p.add_argument("--version", action="version", version=f"dlcprof {__version__}")
    sub = p.add_subparsers(dest="command", parser_class=Parser)

    tui = sub.add_parser("tui", help="open the TUI (the default command)")
    tui.add_argument(
        "target", nargs="?", default=None, help="bundled name, file.py[:func], module:func"
    )
    _settings_args(tui)
    _theme(tui)

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
    run.add_argument("--calls", type=_whole, default=None, help=calls_help)
    run.add_argument(
        "--timeout",
        type=float,
        default=600.0,
        help="seconds without progress before the worker counts as hung",
    )

    tr = sub.add_parser("try", help="run one advice item of a saved session and measure it")
    tr.add_argument("session", type=Path, help="a report JSON (dlcprof run ... --json)")
    tr.add_argument("n", type=_whole, help="the advice item's number, as the run listed it")
    tr.add_argument(
        "--calls",
        type=_whole,
        default=None,
        help="calls the compile must pay back within (advice; default: the run's --calls, or 1000)",
    )
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

    rp = sub.add_parser(
        "replay", help="open a saved session (or a TORCH_TRACE folder, imported) in the TUI"
    )
    rp.add_argument("session", type=Path)
    _theme(rp)

    srv = sub.add_parser(
        "serve",
        help="the TUI in a browser page (textual-serve; pip install 'dlcprof[serve]')",
        epilog="ARGS are dlcprof's own: dlcprof serve replay SESSION, dlcprof serve -- CMD ...",
    )
    srv.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    srv.add_argument("--port", type=_whole, default=8000, help="port (default 8000)")
    srv.add_argument("args", nargs=argparse.REMAINDER, help="dlcprof's arguments for the TUI")

    cmp = sub.add_parser("compare", help="compare two saved sessions")
    cmp.add_argument("a", type=Path, metavar="SESSION_A", help="a saved session (the baseline)")
    cmp.add_argument("b", type=Path, metavar="SESSION_B", help="a saved session to compare with A")
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
        help="join the report folders, or the import summaries, of one job's nodes into one "
        "session of every rank",
        epilog="Each node: dlcprof run --report DIR -- torchrun --nnodes N --node-rank K ... "
        "(docs/ranks.md), or dlcprof import LOGS --node-summary DIR (docs/import.md)",
    )
    mrg.add_argument(
        "sessions",
        type=Path,
        nargs="+",
        metavar="FOLDER",
        help="a node's report folder (or its session.json), or its import summary "
        "(node-K.dlcnode.json, or the folder holding every node's)",
    )
    mrg.add_argument(
        "-o", "--output", type=Path, required=True, help="write the merged report folder here"
    )
    mrg.add_argument(
        "--run",
        type=_whole,
        default=None,
        metavar="N",
        help="nodes' import summaries only: which run of the job, when the logs hold several: "
        "1 the oldest, -1 the newest (default)",
    )

    imp = sub.add_parser(
        "import",
        help="read torch's TORCH_TRACE logs of any job into a report folder, ranks grouped",
        epilog="PATH: a TORCH_TRACE log, a folder of them (one job), or several folders (a "
        "job's nodes) (docs/import.md)",
    )
    imp.add_argument("paths", type=Path, nargs="+", metavar="PATH")
    out = imp.add_mutually_exclusive_group(required=True)
    out.add_argument("-o", "--output", type=Path, help="write the report folder here")
    out.add_argument(
        "--node-summary",
        type=Path,
        metavar="DIR",
        help="these are one node's logs of a job: write the node's summary into DIR, as "
        "node-K.dlcnode.json (K: $SLURM_NODEID, $GROUP_RANK or $NODE_RANK, else the host "
        "name), for dlcprof merge DIR -o OUT",
    )
    imp.add_argument(
        "--workers",
        type=_whole,
        default=None,
        help="processes that read the logs (default: one per core)",
    )
    imp.add_argument(
        "--run",
        type=_whole,
        default=-1,
        metavar="N",
        help="which run of the job, when the logs hold several (a re-run into the same "
        "folder): 1 the oldest, -1 the newest (default)",
    )

    sub.add_parser("doctor", help="what this machine can do, and what is missing")
    return p


def attach_parser() -> Parser:
    p = Parser(
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
        help="then run CMD again with torch.compile forced eager: compare the whole job's "
        "wall and the steady per-step wall past the compiles",
    )
    _no_hotspots(p)
    return p


def check_parser() -> Parser:
    """``dlcprof check [budgets] -- CMD``: the budgets default to pyproject.toml's
    ``[tool.dlcprof.check]`` (``cli/check.py``), so each flag's default is None."""
    p = Parser(
        prog="dlcprof check",
        description="Run CMD as 'dlcprof run -- CMD' does, then fail (exit 1) when its "
        "compiles exceed the budgets or regressed against a baseline (docs/ci.md).",
        usage="dlcprof check [budgets] [--baseline SESSION] [--repeat N] [--junit F] [--json F] "
        "[--report DIR] [--quiet] -- CMD ...",
    )
    for flag, kind, what in (
        ("--max-graph-breaks", int, "graph breaks (each once, however many frames hit it)"),
        ("--max-recompiles", int, "recompiles"),
        ("--max-compiles", int, "frame compiles"),
        ("--max-cache-misses", int, "compiles that missed torch's caches (each explained)"),
        ("--max-compile-s", float, "seconds of compile (CPU seconds where measured)"),
    ):
        p.add_argument(
            flag, type=_number(flag, kind), default=None, help=f"the most {what} per process"
        )
    p.add_argument(
        "--allow-graph-break",
        action="append",
        type=_gb_id,
        default=None,
        metavar="GBnnnn",
        help="a kind of graph break accepted, by its id in torch's catalogue (repeatable): "
        "breaks of it are not counted against --max-graph-breaks (docs/graph-breaks.md)",
    )
    p.add_argument(
        "--baseline",
        type=Path,
        default=None,
        help="a saved session (run --json, check --json, a report folder): fail on what it had not",
    )
    p.add_argument(
        "--compile-tolerance",
        type=_number("--compile-tolerance", float),
        default=None,
        help="how far compile time may exceed the baseline's, in percent (default 25)",
    )
    p.add_argument(
        "--repeat",
        type=_number("--repeat", int, least=1),
        default=1,
        help="run CMD N times and judge the run with the least compile time (CPU time only "
        "grows on a busy machine); --json and --report save that run",
    )
    p.add_argument(
        "--junit", type=Path, default=None, help="write JUnit XML here (GitLab, Jenkins)"
    )
    p.add_argument("--json", type=Path, default=None, help="write the report JSON here")
    p.add_argument("--report", type=Path, default=None, help="write a report folder here")
    p.add_argument(
        "--quiet", action="store_true", help="no live lines and no tables, only the verdict"
    )
    # A gate's measure must not share the cores with a sampler: no py-spy, no eager rerun.
    p.set_defaults(hotspots=False, eager_baseline=False)
    return p


def _gb_id(text: str) -> str:
    from dlcprof.trace_records.gb_catalogue import is_id

    if not is_id(text.upper()):
        raise argparse.ArgumentTypeError(
            f"invalid --allow-graph-break {text!r}: give a graph-break id, e.g. GB0124"
        )
    return text.upper()


def _number(flag: str, kind: type, least: int = 0):
    def convert(text: str):
        try:
            value = kind(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"invalid {flag} {text!r}: give a number") from None
        if value < least:
            raise argparse.ArgumentTypeError(f"invalid {flag} {text!r}: give {least} or more")
        return value

    return convert


def attach_tui_parser() -> Parser:
    p = Parser(prog="dlcprof tui", usage="dlcprof [tui [--no-hotspots] [--theme T]] -- CMD ...")
    _no_hotspots(p)
    _theme(p)
    return p


def _no_hotspots(p: argparse.ArgumentParser) -> None:
    """A run's ``--no-hotspots``, for an attached program (monitors/program.py)."""
    p.add_argument(
        OPTION["hotspots"].flag,
        dest="hotspots",
        action="store_false",
        help="no py-spy on the program's compiling processes: no hot frames, and none "
        "of its CPU taken from the program",
    )


def _theme(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--theme",
        type=_theme_name,
        default=None,
        help="one of Textual's themes, e.g. textual-light (ctrl+p: Theme switches it)",
    )


def _theme_name(name: str) -> str:
    from textual.theme import BUILTIN_THEMES  # Textual only for the TUI's commands

    if name not in BUILTIN_THEMES:
        themes = ", ".join(sorted(BUILTIN_THEMES))
        raise argparse.ArgumentTypeError(f"--theme {name}: not a theme; one of {themes}")
    return name
