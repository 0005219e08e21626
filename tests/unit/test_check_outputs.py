"""The verdict in one shape: every writer of a check's verdict (the terminal's
lines, GitHub's annotations and step summary, JUnit XML, the pytest plugin's
failure) shows the same summary, violations, run lines and measure, in the one
order docs/ci.md says, for one recorded real job
(tests/fixtures/programs/ddp_odd_batch.jsonl: two ranks, each over budget, so
every violation names its rank)."""

from __future__ import annotations

import argparse
import io
import xml.etree.ElementTree as ET

from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof.cli.check import judged
from dlcprof.figures.check import verdict as fv
from dlcprof.figures.check.budgets import Budgets
from dlcprof.session import Session
from dlcprof.worker.pytest_plugin import failure_text

BUDGETS = Budgets(graph_breaks=0, recompiles=0, compiles=1)


def in_order(text: str, parts: list[str]) -> None:
    """Each of ``parts`` in ``text``, one after the other."""
    at = 0
    for part in parts:
        found = text.find(part, at)
        assert found >= 0, f"{part!r} not after offset {at} of:\n{text}"
        at = found + len(part)


def test_every_writer_places_the_same_words_in_one_order(tmp_path, monkeypatch, capsys):
    session = Session.from_events(load_fixture("programs/ddp_odd_batch"))
    said = fv.said(fv.judge_session(session, BUDGETS, attached=True))
    assert not said.passed and len({v.run for v in said.violations}) == 2  # both ranks named
    assert all(f" [{v.run}]" in v.line() and "|" not in v.what for v in said.violations)
    whats = [v.what for v in said.violations]
    parts = [said.summary, *whats, *said.runs, said.measure]

    # dlcprof check: the terminal's lines, the annotations, the step summary, JUnit.
    summary, junit = tmp_path / "summary.md", tmp_path / "junit.xml"
    monkeypatch.setenv("GITHUB_ACTIONS", "true")
    monkeypatch.setenv("GITHUB_STEP_SUMMARY", str(summary))
    out = io.StringIO()
    judged(session, Console(file=out, width=80), argparse.Namespace(junit=junit), BUDGETS, None, 1)
    in_order(out.getvalue(), parts)
    assert out.getvalue().startswith(said.summary)
    in_order(capsys.readouterr().out, whats)  # one ::error per violation
    in_order(summary.read_text(), parts)
    system_out = ET.parse(junit).getroot().find("testsuite/system-out")
    assert system_out is not None and system_out.text == "\n".join(said.lines())
    in_order(system_out.text, parts)

    # The pytest plugin's failure: the same words, its own gate and unit in the summary.
    test = fv.said(fv.judge_session(session, BUDGETS), "dlcprof compile budget", "test")
    assert test.summary.startswith("dlcprof compile budget: FAILED, 11 violations (")
    assert [v.line() for v in test.violations] == [v.line() for v in said.violations]
    assert test.runs == said.runs
    in_order(failure_text(test), [test.summary, *whats, *said.runs, said.measure])
