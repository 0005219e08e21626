"""The UI side never imports torch; the worker never imports Textual."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parent.parent / "dlcprof"
UI_SIDE = ["cli.py", "console.py", "session.py", "engine.py", "runner.py", "events.py",
           "settings.py", "workloads.py", "tui", "report", "monitors"]  # fmt: skip


def _imported_modules(path: Path) -> set[str]:
    names: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            names.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _files(*parts: str) -> list[Path]:
    out: list[Path] = []
    for part in parts:
        p = PKG / part
        out.extend(sorted(p.rglob("*.py")) if p.is_dir() else [p])
    return out


@pytest.mark.parametrize("path", _files(*UI_SIDE), ids=lambda p: str(p.relative_to(PKG)))
def test_ui_side_never_imports_torch(path):
    assert "torch" not in _imported_modules(path)


@pytest.mark.parametrize("path", _files("worker"), ids=lambda p: str(p.relative_to(PKG)))
def test_worker_never_imports_textual(path):
    assert not {"textual", "rich"} & _imported_modules(path)


def test_loading_the_whole_ui_leaves_torch_unimported():
    code = (
        "import sys, dlcprof.cli, dlcprof.tui.app, dlcprof.report.html, dlcprof.report.compare, "
        "dlcprof.monitors.device, dlcprof.monitors.hotspots, dlcprof.monitors.doctor;"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_loading_the_worker_leaves_textual_unimported():
    code = "import sys, dlcprof.worker.run; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)
