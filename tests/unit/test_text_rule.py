"""Where words live (issue 19): ``dlcprof/text.py`` holds the units and the
phrases that two or more places share; a sentence about one topic lives beside
the figures that compute it (``dlcprof/figures/<topic>.py``)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

from helpers.paths import PKG

TEXT = PKG / "text.py"
MAX_LINES = 450

# Units with a single caller today: a unit words a quantity, not a topic, so it
# stays beside the other units however many places use it yet.
UNITS = {
    "NEVER": "break-even when compiled is slower (text.break_even)",
    "signed_secs": "secs with its sign",
    "signed_ms": "ms with its sign",
    "signed_pct": "pct with its sign",
    "offset_secs": "an offset from an origin, signed once",
    "gbps": "a bandwidth",
    "ms_spread": "a median with its measured spread",
}


def _public_names(tree: ast.Module) -> dict[str, ast.stmt]:
    out: dict[str, ast.stmt] = {}
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.ClassDef)):
            out[node.name] = node
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                for e in target.elts if isinstance(target, ast.Tuple) else [target]:
                    assert isinstance(e, ast.Name), ast.unparse(e)  # text.py binds names only
                    out[e.id] = node
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            out[node.target.id] = node
    return {k: v for k, v in out.items() if not k.startswith("_")}


def _used_in(path: Path) -> set[str]:
    """The text names a module of dlcprof uses: ``text.X`` or ``from dlcprof.text import X``."""
    if path.suffix != ".py":  # a report template: ``{{ text.X }}``
        return set(re.findall(r"\btext\.(\w+)", path.read_text()))
    out: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name):
            if node.value.id == "text":
                out.add(node.attr)
        elif isinstance(node, ast.ImportFrom) and node.module == "dlcprof.text":
            out.update(a.name for a in node.names)
    return out


def _callers() -> dict[str, set[str]]:
    """Each public name of text.py -> the places that use it; text.py itself is
    one when another of its names is built on it."""
    tree = ast.parse(TEXT.read_text())
    names = _public_names(tree)
    callers: dict[str, set[str]] = {n: set() for n in names}
    for path in sorted(PKG.rglob("*")):
        if path == TEXT or path.suffix not in (".py", ".j2"):
            continue
        for name in _used_in(path) & names.keys():
            callers[name].add(str(path.relative_to(PKG)))
    for name, node in names.items():
        for sub in ast.walk(node):
            if isinstance(sub, ast.Name) and sub.id in callers and sub.id != name:
                callers[sub.id].add("text.py")
    return callers


def test_text_holds_only_what_two_places_share():
    single = {n: sorted(c) for n, c in _callers().items() if len(c) < 2 and n not in UNITS}
    assert not single, (
        f"used by fewer than two places: {single}; a topic's sentence goes beside the "
        "figures that compute it (dlcprof/figures/<topic>.py), a unit into UNITS here"
    )


def test_the_units_allowed_one_caller_are_still_in_text():
    callers = _callers()
    assert not [n for n in UNITS if n not in callers], "a unit left text.py: drop it from UNITS"


def test_text_stays_within_its_line_budget():
    n = len(TEXT.read_text().splitlines())
    assert n <= MAX_LINES, f"dlcprof/text.py has {n} lines (budget {MAX_LINES})"


def test_the_rule_sees_a_single_caller():
    """The counter must be able to fail: a name only one module uses is caught."""
    tree = ast.parse("def lonely(): pass\n")
    assert list(_public_names(tree)) == ["lonely"]
    callers = _callers()
    assert "figures/benchmark.py" in callers["speedup"]
    assert "text.py" in callers["runs"]  # break_even is built on it
