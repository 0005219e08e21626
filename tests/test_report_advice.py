"""The advice and the attached program in the Markdown and HTML reports say
what the JSON says: one report model renders all three (issue 19's rule)."""

from __future__ import annotations

from report_helpers import recorded
from test_program_figures import session as program_session

from dlcprof.report import build_model, build_report, render_html, render_markdown


def test_advice_headline_and_predicted_saving_agree_across_formats():
    model = build_model(recorded("graph_breaks"))
    advice = build_report(model)["advice"]
    assert advice["items"], "the recorded graph breaks have advice"
    md, html = render_markdown(model), render_html(model)
    assert "## Advice" in md and 'id="advice"' in html
    for item in advice["items"]:
        md_row = next(line for line in md.splitlines() if f"| {item['title']} |" in line)
        assert f"| {item['predicted_text']} |" in md_row
        assert f"<b>{item['title']}</b>" in html and item["predicted_text"] in html


def test_program_section_in_html_shows_its_timeline_and_graph_lives():
    model = build_model(program_session())
    lines = build_report(model)["program"]["lines"]
    html = render_html(model)
    assert 'id="program"' in html
    for line in lines:
        assert f">{line.strip()}</li>" in html
    assert any(line.startswith("  [0/0]") for line in lines)  # a graph's life is among them
