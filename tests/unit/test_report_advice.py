"""The advice and the attached program in the Markdown and HTML reports say
what the JSON says: one report model renders all three (issue 19's rule)."""

from __future__ import annotations

from helpers.program import program_session
from helpers.report import recorded

from dlcprof import events as ev
from dlcprof.report import build_model, build_report, render_html, render_markdown
from dlcprof.session import Session


def test_advice_headline_and_predicted_saving_agree_across_formats():
    model = build_model(recorded("graph_breaks"))
    advice = build_report(model)["advice"]
    assert advice["items"], "the recorded graph breaks have advice"
    md, html = render_markdown(model), render_html(model).replace("\xa0", " ")
    assert "## Advice" in md and 'id="advice"' in html
    for item in advice["items"]:
        md_row = next(line for line in md.splitlines() if f"| {item['title']} |" in line)
        assert f"| {item['predicted_text']} |" in md_row
        assert f"<b>{item['title']}</b>" in html and item["predicted_text"] in html


def test_program_section_in_html_shows_its_timeline_and_graph_lives():
    model = build_model(program_session())
    lines = build_report(model)["program"]["lines"]
    html = render_html(model).replace("\xa0", " ")
    assert 'id="program"' in html
    for line in lines:
        assert f">{line.strip()}</li>" in html
    assert any(line.startswith("  [0/0]") for line in lines)  # a graph's life is among them


def test_compile_cost_tables_in_markdown_and_html_match_the_json():
    # A recorded run, with the cost the compile_cost probe sends for its first compile.
    base = recorded("stacked_linears")
    run = base.latest_run
    cost = ev.CompileCostMeasured(
        run_id=run.run_id,
        compile_id="0/0",
        own_s=0.004,
        t=base.events[-1].t,
        functions=[
            {
                "function": "Stack.forward",
                "file": "/w/stack.py",
                "line": 12,
                "traced": 1,
                "self_s": 0.21,
                "total_s": 0.35,
            }
        ],
        modules=[
            {
                "module": "layers.0",
                "cls": "Linear",
                "stack": [["layers.0", "Linear"]],
                "location": "/w/stack.py:8",
                "nodes": 3,
                "self_s": 0.05,
            }
        ],
    )
    model = build_model(Session.from_events([*base.events, cost]))
    (r,) = [r for r in build_report(model)["runs"] if r["compile_cost"]]
    assert r["compile_cost"]["functions"][0]["self_s"] == 0.21
    md, html = render_markdown(model), render_html(model).replace("\xa0", " ")
    section = model.runs[-1].compile_cost
    assert section is not None
    for out in (md, html):
        assert "Compile cost by your code" in out
        assert section.dynamo_line in out and section.lowering_line in out
    fn = section.functions[0]
    assert (fn[0], fn[2], fn[3], fn[4]) == ("Stack.forward", "1x", "210 ms", "350 ms")
    assert "| " + " | ".join(fn) + " |" in md
    name, where, nodes, lowering = section.modules[0]
    assert f'<td>{name}</td><td>{where}</td><td class="n">{nodes}</td>' in html
