"""Kernels pane: every fused kernel Inductor generated; Enter opens its source."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from dlcprof.session import Kernel, Run
from dlcprof.tui.messages import KernelChosen
from dlcprof.tui.view import NA, View

# Fixed widths: auto-sized columns reflow as rows stream in and make
# snapshots flaky (DESIGN.md).
_COLUMNS: list[tuple[str, str, int]] = [
    ("#", "order", 2),
    ("compile", "compile", 12),
    ("kernel", "name", 36),
    ("kind", "kind", 9),
    ("ops", "nops", 3),
    ("fused aten ops", "ops", 38),
    ("time", "time", 4),
]


_GRAPH_SHORT = {"forward": "fwd", "backward": "bwd", "inference": ""}


def kernel_key(k: Kernel) -> str:
    # Kernel names repeat across compiles and across a compile's forward and
    # backward graphs (TORCH_NOTES §2): key by all three.
    return f"{k.compile_id}|{k.graph}|{k.name}|{k.order}"


def compile_label(k: Kernel) -> str:
    graph = k.graph
    short = _GRAPH_SHORT.get(graph, graph) if graph else ""
    return f"{k.compile_id} {short}".strip()


class KernelsPane(Vertical):
    """A DataTable filled incrementally so the cursor stays put while rows arrive."""

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self._run_id: str | None = None
        self._kernels: dict[str, Kernel] = {}

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable(id="kernels-table", cursor_type="row", zebra_stripes=True)
        for label, key, width in _COLUMNS:
            table.add_column(label, key=key, width=width)
        yield table
        yield Static(id="kernels-hint")

    def on_mount(self) -> None:
        self.border_title = "Kernels"
        self.border_subtitle = "time n/a: per-kernel timing is not captured yet · Enter: source"

    def show(self, view: View) -> None:
        table = self.query_one(DataTable)
        run = view.run
        rid = run.run_id if run else None
        if rid != self._run_id:
            table.clear()
            self._kernels.clear()
            self._run_id = rid
        kernels = run.kernels if run else []
        for k in kernels:
            key = kernel_key(k)
            if key in self._kernels:
                continue
            self._kernels[key] = k
            ops = ", ".join(op.removeprefix("aten.") for op in k.fused_ops) or NA
            table.add_row(
                str(k.order),
                compile_label(k),
                k.name,
                k.kind,
                str(len(k.fused_ops)),
                ops,
                NA,
                key=key,
            )
        self.border_title = f"Kernels ({len(kernels)})" if kernels else "Kernels"
        hint = self.query_one("#kernels-hint", Static)
        hint.update(_hint(run, len(kernels)))
        hint.display = not kernels

    def kernel(self, key: str) -> Kernel | None:
        return self._kernels.get(key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        k = self._kernels.get(str(event.row_key.value))
        if k is not None:
            self.post_message(KernelChosen(k))


def _hint(run: Run | None, count: int) -> str:
    if count:
        return ""
    if run is None:
        return "no kernels yet: press r to compile"
    if "kernels" in run.unavailable:
        return f"{NA}: {run.unavailable['kernels']}"
    backend = run.settings.get("backend")
    if backend and backend != "inductor":
        return f"no kernels: backend {backend} generates no code (Inductor does)"
    if run.status in ("pending", "running"):
        return "no kernels yet: they appear when Inductor finishes codegen"
    return f"this run produced no kernels (status {run.status})"
