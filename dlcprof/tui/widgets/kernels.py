"""Kernels pane: every fused kernel Inductor generated; Enter opens its source."""

from __future__ import annotations

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures.kernels import compile_label, kernel_key, short_ops
from dlcprof.session import Run
from dlcprof.tui.messages import KernelChosen
from dlcprof.tui.view import View

# Fixed widths: auto-sized columns reflow as rows stream in and make
# snapshots flaky (docs/design.md).
_COLUMNS: list[tuple[str, str, int]] = [
    ("#", "order", 2),
    ("compile", "compile", 12),
    ("kernel", "name", 36),
    ("kind", "kind", 9),
    ("ops", "nops", 3),
    ("fused aten ops", "ops", 38),
    ("time", "time", 4),
]


class KernelsPane(Vertical):
    """A DataTable filled incrementally so the cursor stays put while rows arrive."""

    def __init__(self, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(**kwargs)
        self._run_id: str | None = None
        self._kernels: dict[str, ev.KernelGenerated] = {}

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
            ops = ", ".join(short_ops(k)) or text.NA
            table.add_row(
                str(k.order),
                compile_label(k),
                k.name,
                k.kind,
                str(len(k.fused_ops)),
                ops,
                text.NA,
                key=key,
            )
        self.border_title = f"Kernels ({len(kernels)})" if kernels else "Kernels"
        hint = self.query_one("#kernels-hint", Static)
        hint.update(_hint(run, len(kernels)))
        hint.display = not kernels

    def kernel(self, key: str) -> ev.KernelGenerated | None:
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
        return text.na(run.unavailable["kernels"])
    backend = run.settings.backend if run.settings else None
    if backend and backend != "inductor":
        return f"no kernels: backend {backend} generates no code (Inductor does)"
    if run.live:
        return "no kernels yet: they appear when Inductor finishes codegen"
    return f"this run produced no kernels (status {run.status})"
