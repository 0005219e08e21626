"""Kernels pane: every fused kernel Inductor generated, slowest first once
profiled, with what each costs inside the compiled call; Enter opens its source."""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import kernels as fk
from dlcprof.session import Run
from dlcprof.tui.messages import KernelChosen
from dlcprof.tui.view import View

# Fixed widths: auto-sized columns reflow as rows stream in and make
# snapshots flaky (docs/design.md). The figures come before the fused ops,
# which may run off to the right (the table scrolls).
_COLUMNS: list[tuple[str, str, int]] = [
    ("compile", "compile", 7),
    ("kernel", "name", 30),
    ("kind", "kind", 9),
    ("time", "time", 8),
    ("share", "share", 5),
    ("eager ops", "eager", 9),
    ("gain", "gain", 7),
    ("GB/s", "gbps", 10),
    ("of copy", "bw", 7),
    ("fused aten ops", "ops", 40),
]


class KernelsPane(Vertical):
    """A DataTable filled incrementally so the cursor stays put while rows
    arrive; refilled in time order when the profiling stage reports."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._run_id: str | None = None
        self._profile: ev.KernelsProfiled | None = None
        self._kernels: dict[str, ev.KernelGenerated] = {}
        self._timings: dict[str, fk.KernelTiming] = {}

    def compose(self) -> ComposeResult:
        table: DataTable[str] = DataTable(id="kernels-table", cursor_type="row", zebra_stripes=True)
        for label, key, width in _COLUMNS:
            table.add_column(label, key=key, width=width)
        yield table
        yield Static(id="kernels-hint")

    def on_mount(self) -> None:
        self.border_title = "Kernels"
        self.border_subtitle = "Enter: source"

    def show(self, view: View) -> None:
        table = self.query_one(DataTable)
        run = view.run
        rid = run.run_id if run else None
        profile = run.kernel_profile if run else None
        restore = None
        if rid != self._run_id or profile is not self._profile:
            restore = table.cursor_row if rid == self._run_id else 0
            table.clear()
            self._kernels.clear()
            self._run_id, self._profile = rid, profile
        kernels = run.kernels if run else []
        timings = self._timings = fk.kernel_timings(run) if run else {}
        notes = text.Footnotes()
        for k in fk.by_time(kernels, timings) if profile is not None else kernels:
            key = fk.kernel_key(k)
            c = fk.timing_cells(timings.get(key), notes)
            if key in self._kernels:
                continue
            self._kernels[key] = k
            table.add_row(
                fk.compile_label(k),
                k.name,
                k.kind,
                c.time,
                c.share,
                c.eager,
                c.gain,
                c.gbps,
                c.bw_share,
                fk.ops_whole(k),
                key=key,
            )
        if restore:
            table.move_cursor(row=min(restore, table.row_count - 1))
        self.border_title = f"Kernels ({len(kernels)})" if kernels else "Kernels"
        self.border_subtitle = _subtitle(run)
        hint = self.query_one("#kernels-hint", Static)
        hint.update(_hint(view, run, len(kernels), notes))

    def kernel(self, key: str) -> ev.KernelGenerated | None:
        return self._kernels.get(key)

    def on_data_table_row_selected(self, event: DataTable.RowSelected) -> None:
        event.stop()
        k = self._kernels.get(str(event.row_key.value))
        if k is not None:
            timing = self._timings.get(fk.kernel_key(k))
            self.post_message(KernelChosen(k, fk.timing_sentence(timing) if timing else ""))


def _subtitle(run: Run | None) -> str:
    if run is not None and run.kernel_profile is not None:
        return f"slowest first · profiled in {text.secs(run.kernel_profile.wall_s)} · Enter: source"
    if run is not None and run.profiling is not None and run.live:
        return "profiling kernels… · Enter: source"
    return "Enter: source"


def _hint(view: View, run: Run | None, count: int, notes: text.Footnotes) -> str:
    if count and run is not None:
        # How it was measured: in the Log, and the subtitle says when.
        lines = [fk.kernel_count(run).words, *fk.summary_lines(run, method=False)]
        return "\n".join([*lines, *notes.lines()])
    if run is None:
        return view.no_run("no kernels yet: press r to compile")
    if "kernels" in run.unavailable:
        return text.na(run.unavailable["kernels"])
    backend = run.settings.backend if run.settings else None
    if backend and backend != "inductor":
        return f"no kernels: backend {backend} generates no code (Inductor does)"
    if run.live:
        return "no kernels yet: they appear when Inductor finishes codegen"
    return f"this run produced no kernels (status {run.status})"
