"""What a table's sort and filter do with the cells the panes draw
(tui/ordering.py), what ``e`` runs (tui/editor.py), --theme, and dlcprof
serve without its extra."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from rich.text import Text

from dlcprof.cli import main
from dlcprof.tui import editor
from dlcprof.tui.ordering import Figured, Order, arrange, counted, marked, sort_value
from dlcprof.tui.widgets.sorted_table import Row


def test_cells_sort_by_the_figures_handed_over_and_none_last_both_ways() -> None:
    given = [
        ("1.93 s", 1.93),
        ("840 µs", 840e-6),
        ("n/a (no profile)", None),
        ("<1%", 0.009),
        ("<1%", 0.004),
        ("2 min 05 s", 125.0),
    ]
    rows = [
        Row([Figured(words, figure), f"k{i}"], str(i)) for i, (words, figure) in enumerate(given)
    ]
    assert rows[0].figures == (1.93, "k0") and rows[0] == ("1.93 s", "k0")
    down, _ = arrange(rows, Order(0, True), figures=lambda r: r.figures)
    assert [r.key for r in down] == ["5", "0", "3", "4", "1", "2"]  # by value, not by words
    up, _ = arrange(rows, Order(0, False), figures=lambda r: r.figures)
    assert [r.key for r in up] == ["1", "4", "3", "0", "5", "2"]  # n/a still last
    # A cell without a figure sorts by its words, after the numbers; an empty one last.
    assert Row([Text("extern_kernels.mm"), ""], "x").figures == ("extern_kernels.mm", None)
    assert sort_value(3.0) < sort_value("a") < sort_value(None)
    assert sort_value(float("nan")) == sort_value(None)


def test_a_filter_is_a_substring_or_a_regex_and_a_bad_regex_keeps_every_row() -> None:
    rows = [("0/0", "cpp_fused_add"), ("0/1", "extern_kernels.mm"), ("1/0", "cpp_fused_mul")]
    kept, error = arrange(rows, Order(query="FUSED"))
    assert [r[1] for r in kept] == ["cpp_fused_add", "cpp_fused_mul"] and error is None
    kept, _ = arrange(rows, Order(query="re:^0/.*(add|mm)$"))
    assert [r[0] for r in kept] == ["0/0", "0/1"]
    kept, error = arrange(rows, Order(query="re:(add"))
    assert kept == rows and error is not None and error.startswith("not a regex")
    order = Order(1, True, "fused")
    assert marked("kernel", 1, order) == "kernel ▼" and marked("kind", 2, order) == "kind"
    assert counted("Kernels", 2, 3, order) == "Kernels (2 of 3)"
    assert counted("Kernels", 3, 3, Order()) == "Kernels (3)"
    assert order.sorted_by(1) == Order(1, False, "fused") and order.sorted_by(0).descending


def test_the_editor_command_opens_the_line() -> None:
    assert editor.place("/w/model.py:13 y = f(x)") == ("/w/model.py", 13)
    assert editor.place("torch/_dynamo/x.py:?") is None
    assert editor.command("/w/m.py", 13, {"EDITOR": "vim"}) == ["vim", "+13", "/w/m.py"]
    assert editor.command("/w/m.py", 13, {"VISUAL": "code --wait", "EDITOR": "vi"}) == [
        "code",
        "--wait",
        "-g",
        "/w/m.py:13",
    ]
    assert editor.command("/w/m.py", 13, {"EDITOR": "hx"}) == ["hx", "/w/m.py:13"]
    assert editor.command("/w/m.py", 13, {}) is None
    assert editor.run(["/nonexistent/editor", "+1", "x"]).startswith("e: /nonexistent/editor")


def test_the_editor_gets_the_absolute_file_of_a_short_path() -> None:
    """Hot frames name installed files from their package on and the standard
    library's from its folder on: the editor gets the real file."""
    import subprocess as stdlib_module

    import textual

    assert editor.absolute("subprocess.py") == stdlib_module.__file__
    assert editor.absolute("textual/app.py") == str(Path(textual.__file__).parent / "app.py")
    assert editor.absolute("/w/m.py") == "/w/m.py"  # absolute: as it is
    assert editor.absolute("nowhere/x.py") is None
    assert "nowhere/x.py is not in" in editor.not_here("nowhere/x.py")


def test_a_bad_theme_is_one_line_and_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["replay", "s.json", "--theme", "nope"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--theme nope: not a theme" in err[0] and "textual-light" in err[0]


def test_serve_without_its_extra_is_one_line_and_exit_2(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.setitem(sys.modules, "textual_serve.server", None)  # as if not installed
    assert main(["serve", "replay", "s.json"]) == 2
    assert capsys.readouterr().err.strip() == (
        "dlcprof: error: dlcprof serve needs textual-serve: pip install 'dlcprof[serve]'"
    )
