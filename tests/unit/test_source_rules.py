"""Rules of the source itself: a file holds one idea (over 600 lines only when
its first lines say it is one idea), and no type-ignore comment silences mypy
(.ci/run runs it over dlcprof/ and tests/): a type is fixed, not silenced."""

from __future__ import annotations

import ast

from helpers.paths import PKG, REPO

MAX_LINES = 600
IGNORE = "# type" + ": ignore"  # spelled apart: this file holds no such comment either


def _modules() -> list:
    return sorted(PKG.rglob("*.py"))


def test_a_long_file_says_it_holds_one_idea():
    long = []
    for path in _modules():
        source = path.read_text()
        if source.count("\n") <= MAX_LINES:
            continue
        doc = ast.get_docstring(ast.parse(source)) or ""
        if "one idea" not in " ".join(doc.split()[:60]).lower():
            long.append(f"{path.relative_to(PKG)}: {source.count(chr(10))} lines")
    assert not long, f"over {MAX_LINES} lines without saying they hold one idea: {long}"


def test_no_type_ignore_comments():
    found = [
        f"{path.relative_to(REPO)}:{n}"
        for path in [*_modules(), *sorted((REPO / "tests").rglob("*.py"))]
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if IGNORE in line
    ]
    assert not found, f"fix the type mypy finds, do not silence it: {found}"
