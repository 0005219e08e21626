"""report.html and the compare page render in headless Chromium without console errors."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, REPO
from helpers.recorded import load_fixture
from helpers.report import full_session, sweep_sessions

from dlcprof import events as ev
from dlcprof.session import Session

sys.path.insert(0, str(REPO / "scripts"))
from check_html import find_chromium  # noqa: E402


def _write_stream(path: Path, session) -> Path:
    path.write_bytes(b"".join(ev.encode(e) for e in session.events))
    return path


@pytest.mark.skipif(
    find_chromium() is None, reason="chromium not installed (apt-get install -y chromium)"
)
def test_pages_render_in_chromium(tmp_path: Path) -> None:
    out = tmp_path / "out"
    cmd = [
        sys.executable,
        str(REPO / "scripts" / "check_html.py"),
        "--out",
        str(out),
        "--height",
        "1200",
    ]
    # Every recording in one page, and the static/dynamic pair compared.
    static, dynamic = sweep_sessions()
    cmd += ["--session", str(_write_stream(tmp_path / "all.jsonl", full_session()))]
    cmd += [
        "--compare",
        str(_write_stream(tmp_path / "a.jsonl", static)),
        str(_write_stream(tmp_path / "b.jsonl", dynamic)),
    ]
    proc = subprocess.run(cmd, cwd=REPO, capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    for name in ("report", "compare"):
        assert (out / f"{name}.png").stat().st_size > 10_000, name
        assert (out / f"{name}.html").exists()


@pytest.mark.skipif(
    find_chromium() is None, reason="chromium not installed (apt-get install -y chromium)"
)
def test_checker_catches_console_errors_and_network_loads(tmp_path: Path) -> None:
    from check_html import check_page

    from dlcprof.report.html import page

    bad = page(
        "bad", "", ['<img src="https://example.com/x.png">', "<script>undefined_fn()</script>"]
    )
    p = tmp_path / "bad.html"
    p.write_text(bad)
    problems = check_page(find_chromium(), p, tmp_path / "bad.png", 800, 600)
    text = "\n".join(problems)
    assert "Refused" in text or "Content Security Policy" in text, text


@pytest.mark.skipif(
    find_chromium() is None, reason="chromium not installed (apt-get install -y chromium)"
)
def test_kernels_table_stays_inside_its_card_at_1400_px() -> None:
    """The profiled kernels table (13 columns) stuck out of its card by ~115 px
    at 1400 px: it scrolls inside the card now."""
    from check_html import overflowing

    from dlcprof.report.html import render_html
    from dlcprof.report.model import build

    chromium = find_chromium()
    assert chromium is not None
    page = render_html(build(full_session()))
    assert '<table class="kernels">' in page
    assert overflowing(chromium, page, 1400) == []
    # The probe itself sees a table wider than its card.
    wide = page.replace(
        "<main>",
        '<main><section class="card"><table style="width:3000px">'
        "<tr><td>x</td></tr></table></section>",
        1,
    )
    assert any("past its card" in p for p in overflowing(chromium, wide, 1400))


@pytest.mark.skipif(
    find_chromium() is None, reason="chromium not installed (apt-get install -y chromium)"
)
@pytest.mark.parametrize(
    ("fixture", "table"),
    [
        # Timed in CPU seconds: three more compile columns under long headers.
        ("programs/hf_trainer", "of it: compiler subprocesses"),
        # Hot frames whose functions and locations hold no break (135 px past).
        ("programs/attached_train", "Compiler hotspots"),
    ],
)
def test_an_attached_programs_tables_fit_their_cards_at_1400_px(fixture: str, table: str) -> None:
    from check_html import overflowing

    from dlcprof.report.html import render_html
    from dlcprof.report.model import build

    chromium = find_chromium()
    assert chromium is not None
    page = render_html(build(Session.from_events(load_fixture(fixture))))
    assert table in page
    assert overflowing(chromium, page, 1400) == []


@pytest.mark.skipif(
    find_chromium() is None, reason="chromium not installed (apt-get install -y chromium)"
)
def test_an_imported_jobs_runs_table_fits_its_card_at_1400_px() -> None:
    """tlparse's multi-rank input imported: its runs are named by their logs'
    files and say n/a where a log holds no setting; the table stuck out of its
    card by 117 px until those cells could wrap."""
    from check_html import overflowing

    from dlcprof.report.html import render_html
    from dlcprof.report.model import build
    from dlcprof.trace_import.job import import_trace

    chromium = find_chromium()
    assert chromium is not None
    session = import_trace([str(FIXTURES / "tlparse" / "multi_rank_logs")])
    page = render_html(build(session))
    assert "dedicated_log_torch_trace_rank_" in page
    assert overflowing(chromium, page, 1400) == []
