"""Every Markdown table the reports write is a GFM table (issue 20, item 2).

report.md is made to be pasted into GitHub issues: a table whose delimiter row
has another width than its header renders as a paragraph of pipes. Each
report, at every level of detail, of every recorded fixture is parsed with a
table-enabled CommonMark parser (markdown-it-py, as GitHub's GFM) and each
block of pipe lines must come out as one table with all its cells.
"""

from __future__ import annotations

import re

import pytest
from helpers.report import full_session, recorded_sessions
from markdown_it import MarkdownIt

from dlcprof.report import markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Session

GFM = MarkdownIt("commonmark").enable("table")
DETAILS = (markdown.FULL, markdown.NO_SOURCES, markdown.COMPACT, markdown.BRIEF)
_PIPE = re.compile(r"(?<!\\)\|")


def _blocks(md: str) -> list[list[str]]:
    """The runs of consecutive lines that start with a pipe, outside code fences."""
    blocks: list[list[str]] = []
    fence = None
    prev = False
    for line in md.splitlines():
        m = re.match(r"^(`{3,})", line)
        if m and (fence is None or m.group(1).startswith(fence)):
            fence = None if fence else m.group(1)
            prev = False
            continue
        is_row = fence is None and line.startswith("|")
        if is_row and prev:
            blocks[-1].append(line)
        elif is_row:
            blocks.append([line])
        prev = is_row
    return blocks


def _cells(line: str) -> int:
    # Pipes inside a code span are escaped (\|) like any other cell's.
    return len(_PIPE.split(line.strip())) - 2


def check_tables(md: str) -> int:
    blocks = _blocks(md)
    tokens = GFM.parse(md)
    tables = [t for t in tokens if t.type == "table_open"]
    assert len(tables) == len(blocks), "a block of pipe lines did not render as a table"
    for block in blocks:
        widths = {_cells(line) for line in block}
        assert len(widths) == 1, "rows of different widths:\n" + "\n".join(block[:3])
    # Every row renders every cell of the header, none dropped.
    i = 0
    for block, t in zip(blocks, tables, strict=True):
        i = tokens.index(t, i)
        end = next(j for j in range(i, len(tokens)) if tokens[j].type == "table_close")
        cells = sum(1 for x in tokens[i:end] if x.type in ("th_open", "td_open"))
        assert cells == len(block[:1] + block[2:]) * _cells(block[0]), block[0]
    return len(blocks)


# Every recording, and all of them in one session; the hand-made stream
# among them carries the monitors' tables (device, hot frames).
SESSIONS = {**recorded_sessions(), "all": full_session}


@pytest.mark.parametrize("name", sorted(SESSIONS))
def test_every_table_is_a_gfm_table(name: str) -> None:
    report = build_model(SESSIONS[name]())
    assert check_tables(markdown.render_markdown(report)) > 0
    for detail in DETAILS:
        check_tables(markdown._render(report, detail))


def test_the_kernels_table_renders() -> None:
    """The kernels table of a profiled run (13 header cells, 20 delimiter cells
    before the fix)."""
    session = next(
        s() for s in SESSIONS.values() if any(r.kernel_profile for r in s().runs.values())
    )
    md = markdown.render_markdown(build_model(session))
    section = md.split("### Fused kernels", 1)[1].split("###", 1)[0]
    assert check_tables(section) == 1
    html = GFM.render(section)
    assert "<table>" in html and "<th>fused ops</th>" in html


def test_empty_session_has_valid_tables() -> None:
    check_tables(markdown.render_markdown(build_model(Session())))


def test_an_attached_process_says_what_it_has_and_why_its_wall_is_shorter():
    """Issue 41, 8: report.md had "target ``", an empty "Settings", a run wall
    beside the program's longer one with no word why, and "cpu count n/a"
    where the process had reported its cores."""
    from helpers.program import compile_finished, process_attached

    from dlcprof import events as ev

    s = Session.from_events(
        [
            ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=7, t=1000.0),
            process_attached(7, cpu_count=2, t=1001.0),
            compile_finished("0/0", 1002.0, 3.0),
            ev.RunFinished(run_id="pid7", status="ok", wall_s=50.0, t=1060.0),
            ev.ProgramExited(
                returncode=0, signal=None, wall_s=60.0, message="the program exited", t=1061.0
            ),
        ]
    )
    md = markdown.render_markdown(build_model(s))
    assert "target ``" not in md and "**Settings**" not in md
    assert "wall 50.00 s (from torch's import in the process on)" in md
    (cpu,) = [ln for ln in md.splitlines() if "cpu count" in ln]
    assert "2" in cpu and "n/a" not in cpu
