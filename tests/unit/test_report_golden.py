"""The JSON report of every recorded fixture, byte for byte.

``tests/fixtures/golden/<name>.json`` holds the JSON report each recorded
session renders to (tests/fixtures/*.jsonl, tests/fixtures/paper/*.jsonl, the
paper session they make together, and the hand-made stream). Changing the
code behind the reports must leave them byte-identical; a deliberate change
of the JSON is made by rerunning with ``DLCPROF_UPDATE_GOLDEN=1`` and
reviewing the diff. The Markdown report is kept beside it (``<name>.md``) so
that its deliberate changes show in review too.

Only what depends on where and when the test runs is pinned: the time zone,
the platform string and the ``created`` stamp.
"""

from __future__ import annotations

import os
import platform
import re
import time
from pathlib import Path

import pytest
from helpers.paths import FIXTURES
from helpers.report import recorded_sessions

from dlcprof.report import build_model, build_report, dumps_report, render_markdown
from dlcprof.session import Session

GOLDEN = FIXTURES / "golden"
UPDATE = os.environ.get("DLCPROF_UPDATE_GOLDEN") == "1"
_CREATED = re.compile(r'^ "created": "[^"]*",$', re.M)


SESSIONS = recorded_sessions()


@pytest.fixture
def pinned(monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("TZ", "UTC")
    time.tzset()
    monkeypatch.setattr(platform, "platform", lambda *a, **k: "golden-platform")
    yield
    monkeypatch.undo()
    time.tzset()


def render(session: Session) -> dict[str, str]:
    model = build_model(session)
    report = _CREATED.sub(' "created": "golden",', dumps_report(build_report(model)))
    return {"json": report, "md": render_markdown(model)}


def _check(path: Path, got: str) -> None:
    if UPDATE:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(got)
        return
    assert path.exists(), f"{path} missing: run with DLCPROF_UPDATE_GOLDEN=1 and review it"
    want = path.read_text()
    assert got == want, f"{path.name} differs from its golden file"


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_reports_match_golden(name: str, pinned: None) -> None:
    out = render(SESSIONS[name]())
    for kind, got in out.items():
        _check(GOLDEN / f"{name}.{kind}", got)
