"""Torch's graph-break catalogue, read through dlcprof/trace_records/gb_catalogue.py:
the installed torch's file, and an older torch without it (n/a, not a crash)."""

from __future__ import annotations

import json
import re

from helpers.trace import DELAYED_BREAK

from dlcprof.figures.graph_breaks import Break
from dlcprof.trace_records import gb_catalogue
from dlcprof.trace_records.payloads import parse_graph_break

# Dynamo's message for a .item() break (torch 2.13), shortened, without its traceback.
ITEM = """Graph break in user code at /w/m.py:6
Graph Break Reason: Encountered graph break when attempting to trace CALL:

Unsupported Tensor.item() call with capture_scalar_outputs=False
  Explanation: Dynamo does not support tracing `Tensor.item()`.
  Hint: Set `torch._dynamo.config.capture_scalar_outputs = True`.

  Developer debug context: call_method TensorVariable() item () {}

 For more details about this graph break, please visit: https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html

User code traceback:
  File "/w/m.py", line 6, in f
    n = z.sum().item()
"""
# The same break as a torch before the link printed it.
NO_LINK = re.sub(r"\n For more details.*\n", "\n", ITEM)


def _user(path: str) -> str:
    return "user"


def test_the_installed_catalogue_names_each_id():
    cat = gb_catalogue.installed()
    assert not cat.missing
    e = cat.entry("GB0124")
    assert e is not None and "item()" in e.title and e.explanation
    assert e.link == "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0124.html"
    assert cat.id_of(e.title) == "GB0124"


def test_a_break_carries_the_id_dynamo_links_and_the_call_that_broke():
    info = parse_graph_break(ITEM, _user)
    assert (info.gb_id, info.link) == ("GB0124", gb_catalogue.link("GB0124"))
    assert info.context == "call_method TensorVariable() item () {}"
    # Without the link, the catalogue finds the id by the break's title.
    assert parse_graph_break(NO_LINK, _user).gb_id == "GB0124"


def test_a_delayed_break_gives_the_cause_and_remedy_its_explanation_holds():
    info = parse_graph_break(DELAYED_BREAK, _user)
    assert info.gb_id == "GB0148"
    assert info.reason == (
        "Unsupported function call (delayed): Dynamo does not support RNN, GRU, or LSTM"
    )
    assert info.hints == [
        "Set torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, "
        "GRU, and LSTM in Dynamo"
    ]


def test_an_older_torch_without_the_catalogue_reads_na(tmp_path):
    cat = gb_catalogue.load(str(tmp_path / "graph_break_registry.json"))
    assert cat.entries == {} and "ships no graph-break catalogue" in cat.missing
    assert cat.entry("GB0124") is None and cat.id_of("anything") == ""
    info = parse_graph_break(NO_LINK, _user, cat)
    assert (info.gb_id, info.link) == ("", "")
    b = Break(info.reason, info.location, "", info.hints, ["0/0"], info.gb_id)
    assert b.kind.startswith("n/a")


def test_an_unreadable_catalogue_says_so(tmp_path):
    bad = tmp_path / "graph_break_registry.json"
    bad.write_text("{not json")
    assert "unreadable" in gb_catalogue.load(str(bad)).missing
    empty = tmp_path / "other.json"
    empty.write_text(json.dumps({"GB0001": "no list"}))
    assert "lists no break" in gb_catalogue.load(str(empty)).missing
