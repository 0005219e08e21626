"""Import contracts: the UI side never imports torch nor the torch side's code,
the worker never imports Textual, no import runs back up the layers of
docs/architecture.md's module table, and inside the UI side figures flow one
way (figures -> views)."""

from __future__ import annotations

import ast
import re
import subprocess
import sys
from collections.abc import Iterable, Iterator
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


# The two sides of the process boundary, by folder: what runs beside torch is
# worker/ (the worker, and worker/attached: what runs inside an attached
# program); everything else is dlcprof's own process, the UI side.
TORCH_SIDE = WORKER
IN_PROGRAM = WORKER / "attached"


def _on_torch_side(p: Path) -> bool:
    return TORCH_SIDE in p.parents


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


@pytest.mark.parametrize("path", _ui_side(), ids=_ids)
def test_ui_side_never_imports_the_torch_side(path):
    """dlcprof's process talks to the worker and to an attached program through
    the protocol (events.py, attach_contract.py), never by importing their code."""
    assert not _reaches(path, "dlcprof.worker"), f"{_ids(path)} imports the torch side"


@pytest.mark.parametrize("path", _worker_side(), ids=_ids)
def test_worker_never_imports_textual(path):
    assert not {"textual", "rich"} & _top_level(path)


def test_both_sides_are_found_not_listed():
    ui = {_ids(p) for p in _ui_side()}
    assert {"tables.py", "scratch.py", "signals.py", "tui/app.py", "figures/kernels.py"} <= ui
    assert {"attach/program.py", "attach/tree.py", "monitors/program.py"} <= ui
    assert not any(i.startswith("worker/") for i in ui)
    in_program = {_ids(p) for p in IN_PROGRAM.rglob("*.py")}
    assert {"worker/attached/probe.py", "worker/attached/bootstrap/sitecustomize.py"} <= in_program
    # What the worker needs from outside worker/ is held to the worker's rule too.
    worker = {_ids(p) for p in _worker_side()}
    assert {"events.py", "settings.py", "text.py", "attach_contract.py"} <= worker
    # The trace-record parser is shared: the worker feeds it live, and it stays torch-free.
    assert "trace_records/dispatcher.py" in ui and "trace_records/dispatcher.py" in worker
    assert in_program <= worker


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
    """Above only own_code (a path is dlcprof's own file), which imports nothing."""
    assert {n for n in _imports(PKG / "text.py") if n.startswith("dlcprof")} <= {
        "dlcprof",
        "dlcprof.own_code",
    }
    assert not {n for n in _imports(PKG / "own_code.py") if n.startswith("dlcprof")}


def test_loading_the_whole_ui_leaves_torch_unimported():
    code = (
        "import sys, dlcprof.cli, dlcprof.tui.app, dlcprof.report.html, dlcprof.figures.compare, "
        "dlcprof.trace_records.dispatcher, "
        "dlcprof.monitors.device, dlcprof.monitors.hotspots, dlcprof.doctor;"
        "assert 'torch' not in sys.modules, 'torch imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_an_attached_program_starts_before_the_rest_of_dlcprof_is_imported(tmp_path):
    """Each import before the spawn is added to the program's wall time: at the
    spawn, only the command line and attach/launch.py are loaded."""
    seen = tmp_path / "modules"
    code = (
        "import subprocess, sys\n"
        "spawn = subprocess.Popen.__init__\n"
        "def spy(self, *a, **k):\n"
        f"    open({str(seen)!r}, 'w').write(' '.join(sorted(sys.modules)))\n"
        "    subprocess.Popen.__init__ = spawn\n"
        "    spawn(self, *a, **k)\n"
        "subprocess.Popen.__init__ = spy\n"
        "from dlcprof.cli import main\n"
        "sys.exit(main(['run', '--quiet', '--', 'true']))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True, capture_output=True)
    loaded = set(seen.read_text().split())
    assert "dlcprof.attach.launch" in loaded
    assert not loaded & {"dlcprof.events", "dlcprof.session", "dlcprof.engine", "rich", "psutil"}


def test_loading_the_worker_leaves_textual_unimported():
    code = "import sys, dlcprof.worker.run; assert 'textual' not in sys.modules"
    subprocess.run([sys.executable, "-c", code], check=True)


# --- the layers: docs/architecture.md's module table ---------------------------------

ARCHITECTURE = PKG.parent / "docs" / "architecture.md"


def _table_rows() -> dict[str, list[str]]:
    """``module`` -> its cells, from the table under "## Modules" (a folder ends in /;
    a ``\\|`` inside a cell is not a cell's end)."""
    text = ARCHITECTURE.read_text().split("\n## Modules\n", 1)[1]
    rows: dict[str, list[str]] = {}
    for line in text.splitlines()[1:]:
        if not line.startswith("|"):
            if rows:
                break
            continue
        cells = [c.strip() for c in re.split(r"(?<!\\)\|", line.strip().strip("|"))]
        if cells[0].startswith("`"):
            rows[cells[0].strip("`")] = cells
    return rows


ROWS = _table_rows()
LAYERS = {room: int(cells[1]) for room, cells in ROWS.items()}


def _room(p: Path) -> str:
    """The table's row that holds ``p``: the longest folder row it is under, else its file."""
    rel = p.relative_to(PKG).as_posix()
    folders = [r for r in LAYERS if r.endswith("/") and rel.startswith(r)]
    return max(folders, key=len) if folders else rel


def _import_nodes(
    nodes: Iterable[ast.AST], lazy: bool = False
) -> Iterator[tuple[ast.Import | ast.ImportFrom, bool]]:
    """Each import statement in ``nodes`` and whether it runs only later, if at
    all: inside a function, or under ``if TYPE_CHECKING:``."""
    for node in nodes:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node, lazy
        elif isinstance(node, ast.If) and ast.unparse(node.test) in (
            "TYPE_CHECKING",
            "typing.TYPE_CHECKING",
        ):
            yield from _import_nodes(node.body, True)
            yield from _import_nodes(node.orelse, lazy)
        else:
            later = lazy or isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
            yield from _import_nodes(ast.iter_child_nodes(node), later)


def _imported(path: Path) -> dict[Path, bool]:
    """Our files ``path`` imports, at the top or inside a function (lazily) or for
    type checking alike, each True if some import of it runs when ``path`` is
    imported: ``from dlcprof.a import b`` is module b when b is one."""
    files: dict[Path, bool] = {}
    for node, lazy in _import_nodes([ast.parse(path.read_text(), str(path))]):
        names: list[str] = []
        found: list[Path] = []
        if isinstance(node, ast.Import):
            names = [a.name for a in node.names]
        elif node.module and node.level == 0:
            subs = [_module_file(f"{node.module}.{a.name}") for a in node.names]
            found = [f for f in subs if f is not None]
            if not all(subs):
                names = [node.module]
        found += [f for n in names if (f := _module_file(n)) is not None]
        for f in found:
            files[f] = files.get(f, False) or not lazy
    return files


def _imported_files(path: Path) -> set[Path]:
    return set(_imported(path))


def test_the_module_table_names_every_module_once():
    rooms = {_room(p) for p in PKG.rglob("*.py")}
    assert not rooms - LAYERS.keys(), "modules missing from docs/architecture.md's table"
    assert not LAYERS.keys() - rooms, "rows of docs/architecture.md's table that hold nothing"


@pytest.mark.parametrize("path", sorted(PKG.rglob("*.py")), ids=_ids)
def test_no_import_runs_back_up_the_layers(path):
    """A module imports its own row's modules and those of lower layers only."""
    room = _room(path)
    up = sorted(
        f"{_ids(f)} ({_room(f)}, layer {LAYERS[_room(f)]})"
        for f in _imported_files(path)
        if _room(f) != room and LAYERS[_room(f)] >= LAYERS[room]
    )
    assert not up, f"{_ids(path)} ({room}, layer {LAYERS[room]}) imports {up}"


def _imports_cell(room: str) -> str:
    """What ``room``'s modules import of the other rows, in the table's order, each
    "(lazily)" when no import of it runs at import time."""
    eager: dict[str, bool] = {}
    for p in PKG.rglob("*.py"):
        if _room(p) == room:
            for f, now in _imported(p).items():
                if (other := _room(f)) != room:
                    eager[other] = eager.get(other, False) or now
    names = [
        r.removesuffix(".py").removesuffix("/") + ("" if eager[r] else " (lazily)")
        for r in ROWS
        if r in eager
    ]
    return ", ".join(names) or "nothing"


@pytest.mark.parametrize("room", list(ROWS))
def test_the_module_table_says_what_each_row_imports(room):
    assert ROWS[room][-1] == _imports_cell(room), (
        f"the imports of `{room}` are: {_imports_cell(room)}"
    )


# --- no circles: between any two files, imports go one way -------------------------


def _circles() -> list[list[str]]:
    """Each set of our files that import each other, however indirectly (the
    graph's strongly connected components of two or more), lazy and
    ``TYPE_CHECKING`` imports included: a circle that runs only at call time
    or for a type checker still ties two ideas into one."""
    graph = {p: _imported_files(p) for p in sorted(PKG.rglob("*.py"))}
    index: dict[Path, int] = {}
    low: dict[Path, int] = {}
    stack: list[Path] = []
    circles: list[list[str]] = []

    def visit(p: Path) -> None:  # Tarjan's algorithm
        index[p] = low[p] = len(index)
        stack.append(p)
        for q in graph[p]:
            if q not in index:
                visit(q)
                low[p] = min(low[p], low[q])
            elif q in stack:
                low[p] = min(low[p], index[q])
        if low[p] == index[p]:
            component = []
            while (q := stack.pop()) != p:
                component.append(q)
            component.append(p)
            if len(component) > 1 or p in graph[p]:
                circles.append(sorted(_ids(f) for f in component))

    for p in graph:
        if p not in index:
            visit(p)
    return sorted(circles)


def test_no_two_files_import_each_other():
    assert _circles() == []


def test_the_graph_reads_imports_in_functions_and_for_type_checkers_as_lazy():
    code = (
        "import a\nif TYPE_CHECKING:\n    import b\nelse:\n    import c\ndef f():\n    import d\n"
    )
    read = {n.names[0].name: lazy for n, lazy in _import_nodes([ast.parse(code)])}
    assert read == {"a": False, "b": True, "c": False, "d": True}
