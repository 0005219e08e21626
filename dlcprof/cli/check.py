"""``dlcprof check [budgets] [--baseline SESSION] -- CMD``: the user's command
run attached, as ``dlcprof run -- CMD`` runs it, then judged
(``figures/check/``): exit 0 within budget, 1 over it or regressed, the
program's own status when it failed, 2 for bad usage. Budgets come from the
flags, else from ``[tool.dlcprof.check]`` in the nearest pyproject.toml."""

from __future__ import annotations

import argparse
import os
from pathlib import Path
from typing import TYPE_CHECKING, Any

from dlcprof.cli.attach import follow_program
from dlcprof.cli.loading import load_report
from dlcprof.cli.output import error, note, say, write_file, write_outputs
from dlcprof.cli.parser import UsageError
from dlcprof.exit_codes import EXIT_FAILED, EXIT_OK, exit_code

if TYPE_CHECKING:
    from rich.console import Console
    from rich.text import Text

    from dlcprof.figures.check.budgets import Budgets
    from dlcprof.figures.check.verdict import Said, Verdict
    from dlcprof.session import Session

# [tool.dlcprof.check] key -> the flag's dest it sets, and its type.
CONFIG = {
    "max-graph-breaks": ("max_graph_breaks", int),
    "max-recompiles": ("max_recompiles", int),
    "max-compiles": ("max_compiles", int),
    "max-cache-misses": ("max_cache_misses", int),
    "max-compile-s": ("max_compile_s", float),
    "compile-tolerance": ("compile_tolerance", float),
    "baseline": ("baseline", Path),
}


def pyproject(start: Path) -> Path | None:
    """The nearest pyproject.toml at or above ``start``."""
    for folder in (start, *start.parents):
        if (folder / "pyproject.toml").is_file():
            return folder / "pyproject.toml"
    return None


def configured(args: argparse.Namespace, path: Path | None) -> argparse.Namespace:
    """``args`` with what the flags left unset taken from ``[tool.dlcprof.check]``
    (a relative baseline is the file's folder's)."""
    if path is None:
        return args
    try:
        import tomllib
    except ImportError:  # Python 3.10: budgets from the flags only
        return args
    try:
        table: dict[str, Any] = tomllib.loads(path.read_text())
    except (OSError, tomllib.TOMLDecodeError) as e:
        raise UsageError(f"{path}: cannot be read: {e}") from None
    section = table.get("tool", {}).get("dlcprof", {}).get("check", {})
    for key, value in section.items():
        if key not in CONFIG:
            raise UsageError(
                f"{path}: [tool.dlcprof.check] has no {key!r} (one of {', '.join(CONFIG)})"
            )
        dest, kind = CONFIG[key]
        if getattr(args, dest) is not None:
            continue  # the flag wins
        if not _fits(value, kind):
            raise UsageError(f"{path}: [tool.dlcprof.check] {key} = {value!r}: give {_kind(kind)}")
        setattr(args, dest, path.parent / value if kind is Path else kind(value))
    return args


def _fits(value: object, kind: type) -> bool:
    if kind is Path:
        return isinstance(value, str)
    number = int if kind is int else int | float
    return isinstance(value, number) and not isinstance(value, bool) and value >= 0


def _kind(kind: type) -> str:
    return {int: "a whole number, 0 or more", float: "a number, 0 or more"}.get(kind, "a path")


def budgets_of(args: argparse.Namespace) -> Budgets:
    from dlcprof.figures.check.budgets import Budgets

    tolerance = args.compile_tolerance
    return Budgets(
        graph_breaks=args.max_graph_breaks,
        recompiles=args.max_recompiles,
        compiles=args.max_compiles,
        cache_misses=args.max_cache_misses,
        compile_s=args.max_compile_s,
        allowed_breaks=tuple(args.allow_graph_break or ()),
        **({"tolerance": tolerance / 100} if tolerance is not None else {}),
    )


def cmd_check(args: argparse.Namespace, command: list[str]) -> int:
    args = configured(args, pyproject(Path.cwd()))
    budgets = budgets_of(args)
    baseline = load_report(args.baseline) if args.baseline is not None else None
    if not budgets.checks() and baseline is None and args.json is None and args.report is None:
        raise UsageError(
            "nothing to check: give a budget (--max-graph-breaks N, ...) or --baseline SESSION, "
            "or set them in pyproject.toml's [tool.dlcprof.check]; or record a baseline with "
            "--json F or --report DIR"
        )
    followed: list[tuple[Session, Console]] = []

    def keep(session: Session, out: Console) -> int:
        followed.append((session, out))
        return exit_code(session)

    for i in range(args.repeat):
        status = follow_program(
            args,
            command,
            keep,
            summary=not args.quiet and i == args.repeat - 1,
        )
        if status != EXIT_OK or not followed:
            break  # the program failed or was stopped: no more runs of it
    if not followed:
        return status  # the command could not run
    # CPU time only grows when the machine is busy: the least is the closest to the work.
    session, out = min(followed, key=lambda f: _compile_s(f[0])) if not status else followed[-1]
    write_outputs(session, args)
    return judged(session, out, args, budgets, baseline, len(followed))


def _compile_s(session: Session) -> float:
    from dlcprof.figures.check.findings import compile_time

    return sum(compile_time(r).seconds for r in session.runs.values())


def judged(
    session: Session,
    out: Console,
    args: argparse.Namespace,
    budgets: Budgets,
    baseline: Session | None,
    repeats: int,
) -> int:
    """The verdict printed (and annotated, summarized, written as JUnit); the exit status."""
    from dlcprof.figures.check import verdict as fv
    from dlcprof.figures.check.places import repository_root

    root = repository_root()
    verdict = fv.judge_session(
        session, budgets, baseline, repeats=repeats, attached=True, root=root
    )
    for line in printed(fv.said(verdict)):
        say(out, line)
    status = EXIT_OK if verdict.passed else EXIT_FAILED
    if os.environ.get("GITHUB_ACTIONS") == "true":
        github(verdict, root)
    if args.junit is not None:
        from dlcprof.report.junit import junit_xml

        if write_file(args.junit, junit_xml(verdict)) != EXIT_OK:
            status = status or EXIT_FAILED
        else:
            note(f"JUnit XML written to {args.junit}")
    program = exit_code(session)
    if program != 0:
        error(f"the program failed (exit status {program}): dlcprof check exits with its status")
        return program
    return status


def printed(said: Said) -> list[Text]:
    """The verdict's lines on the terminal, in its one order."""
    from rich.text import Text

    return [
        Text(said.summary, style="bold green" if said.passed else "bold red"),
        *(Text(f"✗ {v.line()}", style="red") for v in said.violations),
        *(Text(f"  {line}") for line in said.runs),
        Text(f"  {said.measure}", style="dim"),
    ]


def github(verdict: Verdict, root: Path) -> None:
    """The annotations on stdout, where the runner reads workflow commands; the
    summary appended to $GITHUB_STEP_SUMMARY."""
    from dlcprof.report import github as gh

    for line in gh.annotations(verdict, root):
        print(line, flush=True)
    path = os.environ.get("GITHUB_STEP_SUMMARY")
    if path:
        try:
            with open(path, "a", encoding="utf-8") as f:
                f.write(gh.step_summary(verdict, root))
        except OSError as e:
            error(f"cannot append to $GITHUB_STEP_SUMMARY ({path}): {e.strerror or e}")
