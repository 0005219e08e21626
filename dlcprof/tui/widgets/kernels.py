"""Kernels pane: every fused kernel Inductor generated, slowest first once
profiled, with what each costs inside the compiled call; Enter opens its source."""

from __future__ import annotations

from functools import partial
from typing import Any

from textual.app import ComposeResult
from textual.containers import Vertical
from textual.widgets import DataTable, Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import kernels as fk
from dlcprof.session import Run
from dlcprof.tui import editor
from dlcprof.tui.messages import KernelChosen
from dlcprof.tui.ordering import Figured
from dlcprof.tui.view import View
from dlcprof.tui.widgets.sorted_table import Cut, Row, SortedTable

# Fixed widths: auto-sized columns reflow as rows stream in and make
# snapshots flaky (docs/design.md). The figures come before the fused ops,
# which take what width the pane leaves (cut after a whole op where it is short).
_COLUMNS: list[tuple[str, int | None]] = [
    ("compile", 7),
    ("kernel", 30),
    ("kind", 9),
    ("time", 8),
    ("share", 5),
    ("eager ops", 9),
    ("gain", 7),
    ("GB/s", 10),
    ("of copy", 7),
    ("fused aten ops", 40),
]


class KernelsPane(Vertical):
    """Kernels as they arrive (the cursor stays put), slowest first once the
    profiling stage reports; any column sorts (o, O, a header click)."""

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._kernels: dict[str, ev.KernelGenerated] = {}
        self._timings: dict[str, fk.KernelTiming] = {}

    def compose(self) -> ComposeResult:
        yield SortedTable(_COLUMNS, flex=len(_COLUMNS) - 1, id="kernels-table")
        yield Static(id="kernels-hint")

    def on_mount(self) -> None:
        self.border_title = "Kernels"
        self.border_subtitle = "Enter: source"

    def show(self, view: View) -> None:
        table = self.query_one(SortedTable)
        run = view.run
        kernels = run.kernels if run else []
        timings = self._timings = fk.kernel_timings(run) if run else {}
        notes = text.Footnotes()
        rows = []
        self._kernels.clear()
        for k in fk.by_time(kernels, timings) if run and run.kernel_profile else kernels:
            key = fk.kernel_key(k)
            t = timings.get(key)
            c = fk.timing_cells(t, notes)
            if key in self._kernels:
                continue
            self._kernels[key] = k
            words = (c.time, c.share, c.eager, c.gain, c.gbps, c.bw_share)
            none = (None,) * len(words)
            figures = (t.time_ms, t.share, t.eager_ms, t.gain, t.gbps, t.bw_share) if t else none
            timed = [Figured(w, f) for w, f in zip(words, figures, strict=True)]
            ops_words = ", ".join(fk.short_ops(k)) or None
            ops = Figured(Cut(fk.ops_whole(k), partial(fk.ops_cell, k)), ops_words)
            cells = (fk.compile_label(k), k.name, k.kind, *timed, ops)
            place = editor.place(k.source_lines[0]) if k.source_lines else None
            rows.append(Row(cells, key, place))
        table.fill(rows)
        self.border_title = table.counted("Kernels")
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
