"""The HTML report of an attached program (``dlcprof run -- python train.py``):
its Environment box and its compile timeline, from a real attached run
(tests/fixtures/programs/attached_train.jsonl, tests/programs/train.py under dlcprof)."""

from __future__ import annotations

import re

from dlcprof.report import model as rm
from dlcprof.report.environment import environment
from dlcprof.report.html import render_html
from dlcprof.report.schema import build_report
from dlcprof.session import Session


def _session(fixture_events) -> Session:
    s = Session()
    for e in fixture_events("programs/attached_train"):
        s.apply(e)
    return s


def test_environment_says_what_the_attached_process_is(fixture_events) -> None:
    rows = {r.label: r.text for r in environment(_session(fixture_events)).rows}
    assert rows["torch"] == "2.13.0+cpu"
    assert rows["python"] == "3.11.7"
    assert rows["host"] == "vm"
    assert rows["command"] == "python /home/user/dlcprof/tests/programs/train.py"
    # What the session cannot know says why, never a bare n/a.
    assert rows["device"] == "n/a (an attached program picks its tensors' device)"
    assert all(t != "n/a" for t in rows.values()), rows


def test_timeline_offsets_have_one_sign(fixture_events) -> None:
    html = render_html(rm.build(_session(fixture_events)))
    offsets = re.findall(r"at ([+-]\S*) s", html)
    # The first compile starts within 5 ms before the process's start mark.
    assert offsets[0] == "+0.00"
    assert not [o for o in offsets if re.match(r"[+-][+-]", o)], offsets


def test_an_attached_process_without_compile_cost_says_why(fixture_events) -> None:
    """Recorded before the probe ran in attached processes: no section, a reason."""
    html = render_html(rm.build(_session(fixture_events)))
    assert "Compile cost by your code" in html
    assert "an attached process sends it at its end: this one ended without its exit hook" in html
    # The JSON carries the same reason beside its null.
    (run,) = build_report(rm.build(_session(fixture_events)))["runs"]
    assert run["compile_cost"] is None
    assert run["compile_cost_why"].startswith("an attached process sends it at its end: ")
