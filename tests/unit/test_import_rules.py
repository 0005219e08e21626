"""Import contracts: the UI side never imports torch, the worker never imports
Textual, and inside the UI side figures flow one way (figures -> views)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import PKG

WORKER = PKG / "worker"


def _imports(path: Path) -> set[str]:
    """Every absolute module an import statement in ``path`` names, in full."""
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module)
            names.update(f"{node.module}.{a.name}" for a in node.names)
    return names


def _top_level(path: Path) -> set[str]:
    return {n.split(".")[0] for n in _imports(path)}


def _files(*parts: str) -> list[Path]:
    out: list[Path] = []
    for part in parts:
        p = PKG / part
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


def _module_file(name: str) -> Path | None:
    """The file of module ``dlcprof.a.b`` (a package's __init__), None if not ours."""
    if name != "dlcprof" and not name.startswith("dlcprof."):
        return None
    base = PKG.parent.joinpath(*name.split("."))
    for p in (base.with_suffix(".py"), base / "__init__.py"):
        if p.is_file():
            return p
    return None


# What runs beside torch: the worker, and the probe an attached program loads.
ATTACH = PKG / "attach"
TORCH_SIDE = (
    WORKER,
    ATTACH / "bootstrap",
    ATTACH / "probe.py",
    ATTACH / "graph_calls.py",
    ATTACH / "kernel_sample.py",
)


def _on_torch_side(p: Path) -> bool:
    return any(p == root or root in p.parents for root in TORCH_SIDE)


def _ui_side() -> list[Path]:
    """Everything else: a new module is covered without naming it."""
    return [p for p in sorted(PKG.rglob("*.py")) if not _on_torch_side(p)]


def _worker_side() -> list[Path]:
    """The torch side and every module of ours it imports, however indirectly."""
    todo = [p for p in sorted(PKG.rglob("*.py")) if _on_torch_side(p)]
    seen: set[Path] = set()
    while todo:
        p = todo.pop()
        if p in seen:
            continue
        seen.add(p)
        todo.extend(f for n in _imports(p) if (f := _module_file(n)) is not None)
    return sorted(seen)


def _ids(p: Path) -> str:
    return str(p.relative_to(PKG))


def _reaches(path: Path, package: str) -> bool:
    return any(n == package or n.startswith(package + ".") for n in _imports(path))


@pytest.mark.parametrize("path", _ui_side(), ids=_ids)
def test_ui_side_never_imports_torch(path):
    assert "torch" not in _top_level(path)


@pytest.mark.parametrize("path", _worker_side(), ids=_ids)
def test_worker_never_imports_textual(path):
    assert not {"textual", "rich"} & _top_level(path)


def test_both_sides_are_found_not_listed():
    ui = {_ids(p) for p in _ui_side()}
    assert {"tables.py", "scratch.py", "signals.py", "tui/app.py", "figures/kernels.py"} <= ui
    assert not any(i.startswith("worker/") for i in ui) and "attach/probe.py" not in ui
    # What the worker needs from outside worker/ is held to the worker's rule too.
    worker = {_ids(p) for p in _worker_side()}
    assert {"events.py", "settings.py", "text.py", "attach/channel.py"} <= worker


# (importer files, packages they must not import): the figures are computed in
# dlcprof.figures and only placed by the views, so no view leans on another.
CONTRACTS = [
    (("tui", "console.py", "tables.py"), ("dlcprof.report",)),
    (("tui",), ("dlcprof.console",)),
    (("report",), ("dlcprof.monitors", "dlcprof.tui", "dlcprof.console")),
    (
        ("figures", "text.py", "session.py", "events.py", "settings.py"),
        ("dlcprof.report", "dlcprof.tui", "dlcprof.console", "dlcprof.monitors", "rich", "textual"),
    ),
]


@pytest.mark.parametrize(
    ("path", "forbidden"),
    [(p, forbidden) for parts, forbidden in CONTRACTS for p in _files(*parts)],
    ids=lambda x: _ids(x) if isinstance(x, Path) else "",
)
def test_import_contract(path, forbidden):
    bad = [pkg for pkg in forbidden if _reaches(path, pkg)]
    assert not bad, f"{_ids(path)} imports {bad}"


def test_text_is_at_the_bottom_of_the_import_graph():
    assert not {n for n in _imports(PKG / "text.py") if n.startswith("dlcprof")}


def test_loading_the_whole_ui_leaves_torch_unimported():
    code = (
        "import sys, dlcprof.cli, dlcprof.tui.app, dlcprof.report.html, dlcprof.figures.compare, "
        "dlcprof.monitors.device, dlcprof.monitors.hotspots, dlcprof.doctor;"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_loading_the_worker_leaves_textual_unimported():
    code = "import sys, dlcprof.worker.run; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
