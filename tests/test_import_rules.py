"""Import contracts: the UI side never imports torch, the worker never imports
Textual, and inside the UI side figures flow one way (figures -> views)."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "dlcprof"
UI_SIDE = ["cli.py", "console.py", "session.py", "engine.py", "runner.py", "events.py", "paper.py",
           "settings.py", "text.py", "workloads.py", "doctor.py", "allocator.py", "figures",
           "tui", "report", "monitors"]  # fmt: skip


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


def _ids(p: Path) -> str:
    return str(p.relative_to(PKG))


def _reaches(path: Path, package: str) -> bool:
    return any(n == package or n.startswith(package + ".") for n in _imports(path))


@pytest.mark.parametrize("path", _files(*UI_SIDE), ids=_ids)
def test_ui_side_never_imports_torch(path):
    assert "torch" not in _top_level(path)


@pytest.mark.parametrize("path", _files("worker"), ids=_ids)
def test_worker_never_imports_textual(path):
    assert not {"textual", "rich"} & _top_level(path)


# (importer files, packages they must not import): the figures are computed in
# dlcprof.figures and only placed by the views, so no view leans on another.
CONTRACTS = [
    (("tui", "console.py", "tables.py"), ("dlcprof.report",)),
    (("tui",), ("dlcprof.console",)),
    (("report",), ("dlcprof.monitors", "dlcprof.tui", "dlcprof.console")),
    (("figures", "text.py", "session.py", "events.py", "settings.py"),
     ("dlcprof.report", "dlcprof.tui", "dlcprof.console", "dlcprof.monitors", "rich", "textual")),
]  # fmt: skip


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
