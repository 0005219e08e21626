"""The commands on saved sessions: ``dlcprof report``, ``compare`` and ``merge``."""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from dlcprof import text
from dlcprof.cli.loading import LoadError, load_report
from dlcprof.cli.output import console, error, write_file
from dlcprof.exit_codes import EXIT_FAILED, EXIT_OK

if TYPE_CHECKING:
    from dlcprof.session import Session


def cmd_report(args: argparse.Namespace) -> int:
    from dlcprof.report.html import render_html
    from dlcprof.report.markdown import render_markdown
    from dlcprof.report.model import build

    model = build(load_report(args.session))
    text = render_html(model) if args.html else render_markdown(model)
    if args.output is None:
        sys.stdout.write(text)
        return EXIT_OK
    return write_file(args.output, text)


def cmd_compare(args: argparse.Namespace) -> int:
    from dlcprof.figures.compare import CompareError, compare
    from dlcprof.report.html import render_compare_html
    from dlcprof.tables import compare_table

    runs = args.run or [None]
    if len(runs) > 2:
        raise LoadError("--run takes one run for both sessions, or one for A and one for B")
    run_a, run_b = runs[0], runs[-1]
    try:
        cmp = compare(load_report(args.a), load_report(args.b), run_a, run_b)
    except CompareError as e:
        raise LoadError(str(e)) from None
    console().print(compare_table(cmp))
    if args.html is not None:
        return write_file(args.html, render_compare_html(cmp))
    return EXIT_OK


def cmd_merge(args: argparse.Namespace) -> int:
    from dlcprof.figures.job.nodes import node_lines
    from dlcprof.report.errors import ReportError
    from dlcprof.report.merge import merge_sessions
    from dlcprof.trace_import.nodes import is_node_summary, merge_node_summaries

    summaries = [is_node_summary(p) for p in args.sessions]
    if any(summaries) and not all(summaries):
        raise LoadError(
            "give every node's import summary or every node's report folder, not both: "
            f"{args.sessions[summaries.index(True)]} is a summary, "
            f"{args.sessions[summaries.index(False)]} is not"
        )
    if args.run is not None and not all(summaries):
        raise LoadError("--run chooses a run of imported logs: give the nodes' import summaries")
    try:
        if all(summaries):
            session = merge_node_summaries(args.sessions, -1 if args.run is None else args.run)
        else:
            session = merge_sessions(args.sessions)
    except ReportError as e:
        raise LoadError(str(e)) from None
    folder = _saved(session, args.output)
    if folder is None:
        return EXIT_FAILED
    if all(summaries):
        return _imported(session, folder)
    for line in node_lines(session):
        print(line)
    print(f"merged {text.plural(len(session.nodes), 'node')} into {folder}")
    return EXIT_OK


def cmd_import(args: argparse.Namespace) -> int:
    from dlcprof.report.errors import ReportError
    from dlcprof.trace_import.job import import_trace

    paths = [str(p) for p in args.paths]
    try:
        if args.node_summary is not None:
            from dlcprof.trace_import.nodes import write_node_summary

            if args.run != -1:
                raise LoadError(
                    "a node keeps every run of its logs: choose one at the merge "
                    "(dlcprof merge --run N)"
                )
            summary = write_node_summary(
                paths, args.node_summary, args.workers or os.cpu_count() or 1
            )
            print(
                f"this node's summary: {summary} "
                f"(dlcprof merge {args.node_summary} -o DIR joins the nodes')"
            )
            return EXIT_OK
        session = import_trace(paths, args.workers, args.run)
    except ReportError as e:
        raise LoadError(str(e)) from None
    folder = _saved(session, args.output)
    if folder is None:
        return EXIT_FAILED
    return _imported(session, folder)


def _imported(session: Session, folder: Path) -> int:
    """What an imported session says of itself, its groups, and where it is."""
    from dlcprof.figures.job.imported import import_lines
    from dlcprof.tables import group_table

    for line in import_lines(session):
        print(line)
    if not session.rank_summaries:  # a job's ranks are its groups' table below
        from dlcprof.report.run import kpi_line

        for run in session.runs.values():
            print(f"{run.name}: {kpi_line(run)}")
    table = group_table(session)
    if table is not None:
        console().print(table)
    print(f"imported into {folder}")
    return EXIT_OK


def _saved(session: Session, output: Path) -> Path | None:
    """The report folder written (None: said why, one line)."""
    from dlcprof.report.errors import ReportError
    from dlcprof.report.folder import save_session

    try:
        return save_session(session, output)
    except ReportError as e:
        error(str(e))
        return None
