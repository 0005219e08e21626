"""Markdown and HTML content: what a reader must find, and nothing guessed."""

from __future__ import annotations

import html as _html
import re

import pytest
from helpers.recorded import load_fixture
from helpers.report import (
    benchmark_session,
    full_session,
    graph_break_session,
    synthetic_events,
    with_monitors,
)

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import recompiles as fr
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.session import Session
from dlcprof.trace_records import gb_catalogue


def test_markdown_sections() -> None:
    s = full_session()
    md = render_markdown(build_model(s))
    for heading in (
        "## Environment",
        "## Summary",
        "### Compile time",
        "### Fused kernels",
        "### Recompiles",
        "### Graph breaks",
        "### Benchmark",
        "## Device",
        "## Compiler hotspots",
    ):
        assert heading in md, heading
    run = next(r for r in s.runs.values() if r.benchmark)
    assert f"mode={run.settings.mode}" in md
    assert "break-even" in md and "speedup" in md
    for k in run.kernels:
        assert k.name in md


def test_markdown_graph_breaks_with_location() -> None:
    s = graph_break_session()
    md = render_markdown(build_model(s))
    g = next(g for r in s.runs.values() for g in r.graph_breaks)
    assert g.location in md and g.reason.split("\n")[0][:30] in md


def test_markdown_says_never_and_na() -> None:
    # Recorded: the graph-break run's compiled call is slower; no monitor ran.
    md = render_markdown(build_model(full_session()))
    assert "never (compiled is slower)" in md
    assert "n/a (no measurable difference)" in md
    assert "n/a (no device samples" in md
    assert "n/a (no py-spy samples" in md
    # Edge case: a sweep-only run has no benchmark, and says why.
    sweep_only = Session.from_events(
        synthetic_events(benchmark=False, graph_breaks=False, monitors=False)
    )
    assert "n/a (a shape-sweep run is not benchmarked)" in render_markdown(build_model(sweep_only))
    # An empty session still renders.
    assert "n/a (no device samples" in render_markdown(build_model(Session()))


def test_markdown_tables_are_well_formed() -> None:
    md = render_markdown(build_model(full_session()))
    in_code = False
    for line in md.splitlines():
        if line.startswith("```"):
            in_code = not in_code
        if in_code or not line.startswith("|"):
            continue
        # Escaped pipes aside, every row of a table ends with a pipe.
        assert line.rstrip().endswith("|"), line


def test_html_is_self_contained_and_escaped() -> None:
    s = full_session()
    html = render_html(build_model(s))
    assert html.startswith("<!DOCTYPE html>")
    assert "<script" not in html
    # No external loads: the URLs are the SVG namespace and links (never loaded) to
    # torch's page of each graph break's id.
    urls = set(re.findall(r"https?://[^\s\"'<>]+", html))
    pages = {u for u in urls if u.startswith(gb_catalogue.SITE)}
    assert pages and urls - pages <= {"http://www.w3.org/2000/svg"}, urls
    assert not re.search(r"<(link|img|iframe)\b", html)
    # Kernel sources are shown escaped inside <details>.
    k = next(k for r in s.runs.values() for k in r.kernels if "<" in k.source)
    assert "<details>" in html
    first_lt = next(line for line in k.source.splitlines() if "<" in line).strip()
    assert (
        first_lt.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        in html
    )


def test_html_sections() -> None:
    s = full_session()
    html = render_html(build_model(s))
    for section in (
        "Compile phase timeline",
        "Fused kernels",
        "Recompiles",
        "Graph breaks",
        "Benchmark",
        "Device utilization",
        "Compiler hotspots",
    ):
        assert section in html, section
    assert html.count("<svg") >= 3


def test_html_static_vs_dynamic_chart() -> None:
    html = render_html(build_model(full_session()))
    assert "Shape transitions: static vs dynamic" in html
    assert "cumulative transition cost" in html and "<polyline" in html


def test_html_no_samples_state() -> None:
    html = render_html(build_model(benchmark_session()))
    assert "n/a (no device samples: the monitor did not run or had no probe)" in html
    assert render_html(build_model(Session())).startswith("<!DOCTYPE html>")


def test_html_device_charts() -> None:
    html = render_html(build_model(with_monitors(full_session())))
    assert "utilization (%)" in html and "memory (MB)" in html
    assert "worker_cpu_pct" in html and "the probe gave no value" in html  # gpu_util_pct: None
    assert "During the compiles vs after them" in html
    assert "Compiler hotspots" in html and "_compile_file" in html


def test_html_escapes_hostile_strings() -> None:
    events = synthetic_events(sweeps=False, graph_breaks=False)
    evil = "<img src=x onerror=alert(1)>"
    events.append(
        ev.GraphBroken(
            next(iter(Session.from_events(events).runs)), "0/0", evil, f"{evil}.py:1", [evil]
        )
    )
    html = render_html(build_model(Session.from_events(events)))
    assert evil not in html and "&lt;img src=x onerror=alert(1)&gt;" in html
    # In Markdown, code spans show HTML literally; elsewhere it must be escaped.
    md = re.sub(r"`[^`]*`", "", render_markdown(build_model(Session.from_events(events))))
    assert "<img" not in md


def test_benchmark_break_even() -> None:
    s = benchmark_session()
    b = next(r.benchmark for r in s.runs.values() if r.benchmark)
    speed = fb.speed(b)
    html = _html.unescape(render_html(build_model(s))).replace("\xa0", " ")
    if speed.verdict == fb.FASTER:
        assert f"pays for itself after {text.break_even(speed.break_even)}" in html
    elif speed.verdict == fb.SLOWER:
        assert "never pays for itself" in html
    else:
        assert text.NO_DIFFERENCE in html


def test_every_format_renders_a_session_cut_short() -> None:
    """Saving mid-run (Ctrl+S while compiling) or after a crash: open phases,
    compiles without a wall time, no benchmark. Nothing may raise."""
    from dlcprof.figures.compare import compare
    from dlcprof.report.html import render_compare_html
    from dlcprof.report.schema import build_report
    from dlcprof.report.trace import render_chrome_trace
    from dlcprof.tables import compare_table

    full = full_session()
    events = full.events
    for cut in (1, 3, len(events) // 7, len(events) // 3, len(events) // 2, len(events) - 2):
        part = list(events[:cut])
        if cut % 2:
            part.append(ev.WorkerExited(-11, "SIGSEGV", "worker crashed (SIGSEGV)"))
        s = Session.from_events(part)
        model = build_model(s)
        build_report(model)
        assert "dlcprof report" in render_markdown(model)
        assert render_html(model).endswith("</html>\n")
        render_chrome_trace(model)
        if s.runs:
            cmp = compare(s, full)
            render_compare_html(cmp)
            compare_table(cmp)


def test_markdown_fits_a_github_paste() -> None:
    # Every recorded run: kernel sources must give way.
    md = render_markdown(build_model(full_session()))
    assert len(md) <= 65_536 and "```cpp" not in md
    assert "Kernel sources left out to fit a paste" in md
    # Four copies of every recorded run: the per-run sections too.
    dicts = []
    for k in range(4):
        for e in full_session().events:
            d = ev.to_dict(e)
            if d.get("run_id"):
                d["run_id"] = f"{d['run_id']}-{k}"
            dicts.append(d)
    md = render_markdown(build_model(Session.from_events([ev.from_dict(d) for d in dicts])))
    assert len(md) <= 65_536
    assert "section is left out to fit a paste" in md and "## Summary" in md


def test_device_samples_split_into_compile_and_after():
    from dlcprof.figures.device import activity_spans

    session = with_monitors(benchmark_session())
    by_span = build_model(session).device.by_span
    assert set(by_span) == {"compile", "after compile"}
    run = session.latest_run
    for name, start, end in activity_spans(run):
        inside = [s for s in session.all_device_samples() if start <= s.t <= end]
        assert by_span[name]["samples"] == len(inside)
        cpu = [s.values["worker_cpu_pct"] for s in inside]
        assert by_span[name]["worker_cpu_pct.max"] == (max(cpu) if cpu else None)
    assert by_span["compile"]["samples"] > 0


def test_html_escapes_hostile_session_strings_through_the_templates() -> None:
    """A workload, a kernel and its source are the user's: the page shows them
    as text, never as markup."""
    evil = "<script>alert('x')</script>"
    events = synthetic_events(sweeps=False, graph_breaks=False, monitors=False)
    for e in events:
        if isinstance(e, ev.WorkloadLoaded):
            e.name = f"w{evil}"
            e.description = evil
        if isinstance(e, ev.KernelGenerated):
            e.name = f"k{evil}"
            e.source = f"// {evil}\n{e.source}"
            e.source_lines = [f"m.py:1 {evil}"]
    session = Session.from_events(events)
    page = render_html(build_model(session))
    assert "<script" not in page
    assert "&lt;script&gt;alert(&#39;x&#39;)&lt;/script&gt;" in page
    # Unescaped, the page says exactly what the session holds.
    shown = _html.unescape(page).replace("\xa0", " ")
    assert f"w{evil}" in shown and f"k{evil}" in shown and f"// {evil}" in shown
    md = re.sub(r"`[^`]*`", "", render_markdown(build_model(session)))
    assert "<script" not in md


# The recorded fixtures, and what every view must state about each.
PARITY = ["pointwise_chain", "graph_breaks", "variable_length_static", "variable_length_dynamic"]


def _stated(session: Session) -> list[str]:
    """The strings the TUI and the console state (dlcprof.text over dlcprof.figures)."""
    out = []
    for run in session.runs.values():
        s = fb.run_speed(run)
        if s is None:
            out.append(text.na(fb.why_none(run)))
        else:
            out += [
                text.speedup_verdict(s.speedup, s.measurable),
                text.break_even(s.break_even, s.measurable),
                f"compiled vs eager: {s.verdict}",
            ]
        out += [str(fr.newest_reason(rc.reason)) for rc in run.recompiles]
    for pair in fr.sweep_pairs(session):
        if pair.complete:
            verdict = pair.verdict
            out.append(verdict)
    return out


@pytest.mark.parametrize("names", [[n] for n in PARITY] + [PARITY[2:]], ids=lambda n: "+".join(n))
def test_html_and_markdown_state_the_same_words(names: list[str]) -> None:
    events: list[ev.Event] = []
    for n in names:
        events += load_fixture(n)
    session = Session.from_events(events)
    page = _html.unescape(render_html(build_model(session))).replace("\xa0", " ")
    md = render_markdown(build_model(session))
    stated = _stated(session)
    assert stated
    # HTML places "compiled vs eager" and its verdict in two cells of one row.
    page = re.sub(r"</td>\s*<td>", ": ", page)
    for words in stated:
        assert words in page, words
        assert words in md, words
    if len(names) > 1:
        assert any(w.startswith("cumulative transition cost: static") for w in stated)


def _percent(cell: str) -> float:
    return 0.5 if cell == "&lt;1%" else float(cell.rstrip("%"))


def test_every_library_call_is_a_row_and_the_shares_add_up() -> None:
    """Four Linear layers (tests/fixtures/stacked_linears): four extern_kernels.addmm
    launches, each a row of report.md and report.html, their shares adding up
    to the coverage stated beside them (they were one row, 23% under "74%")."""
    session = Session.from_events(load_fixture("stacked_linears"))
    run = session.latest_run
    assert run is not None and run.kernel_profile is not None
    addmms = [k for k in run.kernels if k.name == "extern_kernels.addmm"]
    assert len(addmms) == 4
    report = build_model(session)
    (m,) = report.runs
    assert [r.name for r in m.kernels].count("extern_kernels.addmm") == 4
    profile = m.kernel_table.profile
    assert profile is not None and profile.kernel_ms is not None and profile.coverage
    times = [r.timing.time_ms for r in m.kernels if r.timing and r.timing.time_ms is not None]
    assert len(times) == len(m.kernels)
    assert sum(times) == pytest.approx(profile.kernel_ms)

    md = render_markdown(report)
    section = md.split("### Fused kernels", 1)[1].split("\n- ", 1)[0]
    rows = [
        line.split(" | ")
        for line in section.splitlines()
        if line.startswith("| ") and line[2].isdigit()
    ]
    assert sum(1 for r in rows if "extern_kernels.addmm" in r[1]) == 4
    stated = re.search(r"kernels [\d.]+ \S+ = (\d+)% of the compiled call", md)
    assert stated is not None
    shares = sum(_percent(r[4]) for r in rows)
    # Each share is rounded to a percent: within half a percent a row.
    assert abs(shares - int(stated.group(1))) <= 0.5 * len(rows) + 0.5

    page = render_html(report)
    table = page.split('<table class="kernels">', 1)[1].split("</table>", 1)[0]
    assert table.count('<div class="kname">extern_kernels.addmm</div>') == 4


def test_a_figure_keeps_its_unit_on_its_line_and_the_advice_fits_its_card() -> None:
    """Issue 40, 7: "15.52 s" wrapped its "s"; the Advice table's last column
    ran past the card at 1,400 px (long code in its cells did not break)."""
    from dlcprof.report.html import _unbroken_units

    assert _unbroken_units("compile 15.52 s, 3.4 ms, 2.05 KB at 1.11 GB/s, 5 steps") == (
        "compile 15.52\xa0s, 3.4\xa0ms, 2.05\xa0KB at 1.11\xa0GB/s, 5 steps"
    )
    s = Session.from_events(load_fixture("variable_length_static"))
    page = render_html(build_model(s))
    assert '<table class="advice">' in page and "5.58\xa0s" in page
    assert "table.advice td{overflow-wrap:anywhere}" in page
