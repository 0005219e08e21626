"""Where a compile's CPU seconds ran (issue 29 item 11), said alike by the
console's phases table and the reports' compiles table: shown only for a
session that measured it, "n/a" for a compile it did not reach."""

from __future__ import annotations

import re

from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof import events as ev
from dlcprof.console import phases_table
from dlcprof.figures import phases as fp
from dlcprof.report import build_model, render_html, render_markdown
from dlcprof.session import Session

RUN = "aa95bdcd"  # gelu_mlp_modes' max-autotune run: compiles 0/0 and 0/0 (bwd)


def _session(measured: bool) -> Session:
    events = load_fixture("gelu_mlp_modes")
    if measured:
        events.append(
            ev.CompileCpuMeasured(run_id=RUN, compile_id="0/0", cpu_s=12.31, compilers_s=8.21)
        )
    return Session.from_events(events)


def test_console_rows_and_report_columns_agree() -> None:
    s = _session(measured=True)
    console = Console(width=240, record=True, color_system=None)
    console.print(phases_table(s.runs[RUN]))
    out = console.export_text()
    rows = {
        ln.split("│")[1].strip(): [x.strip() for x in ln.split("│")[2:-1]]
        for ln in out.splitlines()
        if "│" in ln
    }
    assert rows["CPU (process + compiler subprocesses)"][0] == "12.31 s"
    assert rows["of it: compiler subprocesses"][0] == "8.21 s"
    assert rows["compile workers' CPU (apart)"][0] == "n/a"
    assert fp.NO_WORKERS in " ".join(out.split())  # and why

    md = render_markdown(build_model(s)).split("## Run 3:")[1].split("## Run 4:")[0]
    head = next(ln for ln in md.splitlines() if ln.startswith("| compile | wall"))
    assert head.endswith(
        "| CPU (process + compiler subprocesses) | of it: compiler subprocesses "
        "| compile workers' CPU (apart) |"
    )
    row = next(ln for ln in md.splitlines() if ln.startswith("| 0/0 |"))
    assert row.endswith("| 12.31 s | 8.21 s | n/a |")
    assert f"compile workers' CPU (apart) n/a: {fp.NO_WORKERS}." in md

    html = render_html(build_model(s)).replace("\xa0", " ")  # no-break units
    assert '<th class="n wrap">of it: compiler subprocesses</th>' in html
    cells = re.findall(r'<td class="n">([^<]*)</td>', html)
    assert ["12.31 s", "8.21 s", "n/a"] == cells[cells.index("12.31 s") :][:3]
    assert fp.NO_WORKERS in html


def test_no_cpu_columns_where_nothing_was_measured() -> None:
    s = _session(measured=False)
    for text in (render_markdown(build_model(s)), render_html(build_model(s)).replace("\xa0", " ")):
        assert "compiler subprocesses" not in text
