"""Benchmark pane: eager vs compiled for the selected run, and every run side by side."""

from __future__ import annotations

from rich import box
from rich.console import Group
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof.session import Benchmark, Run
from dlcprof.tui.view import NA, View, fmt_break_even, fmt_ms, fmt_s

_MODE_SHORT = {
    "default": "default",
    "reduce-overhead": "red-ovh",
    "max-autotune": "max-at",
    "max-autotune-no-cudagraphs": "max-at-nocg",
}


def missing_reason(run: Run) -> str:
    """Why a run has no benchmark: said plainly instead of a number."""
    if run.sweep or run.sweep_total_s is not None:
        return "a sweep run is not benchmarked"
    if run.status in ("pending", "running"):
        return "not measured yet"
    if run.status in ("cancelled", "crashed", "error"):
        return f"run {run.status} before it"
    if "benchmark" in run.unavailable:
        return run.unavailable["benchmark"]
    return "not measured in this run"


def _short_reason(run: Run) -> str:
    if run.sweep or run.sweep_total_s is not None:
        return "sweep run"
    if run.status in ("pending", "running"):
        return "running"
    if run.status in ("cancelled", "crashed", "error"):
        return run.status
    return "not measured"


def _speedup(run: Run) -> Text:
    b = run.benchmark
    if b is None or b.speedup is None:
        return Text(NA, style="dim")
    return Text(f"{b.speedup:.2f}x", style="bold green" if b.speedup >= 1 else "bold red")


def selected_table(run: Run) -> Table | Text:
    b = run.benchmark
    if b is None:
        return Text(f"eager vs compiled: {NA} ({missing_reason(run)})", style="dim")
    t = Table(show_header=False, box=None, padding=(0, 1), expand=False)
    t.add_column(style="bold", width=11, no_wrap=True)
    t.add_column(no_wrap=True)
    t.add_row("eager", f"{fmt_ms(b.eager_ms)} ± {b.eager_spread_ms:.3f} IQR")
    t.add_row("compiled", f"{fmt_ms(b.compiled_ms)} ± {b.compiled_spread_ms:.3f} IQR")
    t.add_row("speedup", _speedup(run))
    t.add_row("compile", f"{fmt_s(b.compile_s)} (first call minus a steady call)")
    be = b.break_even_iters
    t.add_row("break-even", Text(fmt_break_even(be), style="red" if be is None else "bold"))
    load = " ".join(f"{x:.2f}" for x in b.load_avg) or NA
    t.add_row(
        "measured",
        Text(
            f"{b.reps} reps × {b.iters} calls, {b.warmup} warm-up, {b.threads} thread(s), "
            f"{b.timer}, load {load}",
            style="dim",
        ),
    )
    return t


def runs_table(view: View) -> Table:
    """Every run of the session, one column each: modes and dynamic settings side by side."""
    t = Table(
        title="Runs side by side", title_justify="left", box=box.SIMPLE_HEAD, padding=(0, 1),
    )  # fmt: skip
    t.add_column("", style="bold", width=10, no_wrap=True)
    runs = list(view.session.runs.values())
    selected = view.run.run_id if view.run else None
    for i, r in enumerate(runs, 1):
        mark = "▶" if r.run_id == selected else " "
        t.add_column(f"{mark}#{i}", justify="right", width=11, no_wrap=True, overflow="ellipsis")

    def row(label: str, cell) -> None:  # type: ignore[no-untyped-def]
        t.add_row(label, *(cell(r) for r in runs))

    def bench(fn):  # type: ignore[no-untyped-def]
        return lambda r: fn(r.benchmark) if r.benchmark is not None else Text(NA, style="dim")

    row("workload", lambda r: r.workload or r.target or r.run_id)
    row("mode", lambda r: _MODE_SHORT.get(r.settings.get("mode", ""), r.settings.get("mode", NA)))
    row("dynamic", lambda r: r.settings.get("dynamic", NA))
    row("backend", lambda r: r.settings.get("backend", NA))
    row("eager", bench(lambda b: fmt_ms(b.eager_ms)))
    row("compiled", bench(lambda b: fmt_ms(b.compiled_ms)))
    row("speedup", _speedup)
    row("compile", bench(lambda b: fmt_s(b.compile_s)))
    row("break-even", bench(_break_even_cell))
    row("note", lambda r: Text("" if r.benchmark else _short_reason(r), style="dim"))
    return t


def _break_even_cell(b: Benchmark) -> Text:
    be = b.break_even_iters
    return Text("never", style="red") if be is None else Text(f"{be:,.0f} runs")


class BenchmarkPane(VerticalScroll):
    def compose(self):  # type: ignore[override]
        yield Static(id="benchmark-body")

    def on_mount(self) -> None:
        self.border_title = "Benchmark"

    def show(self, view: View) -> None:
        run = view.run
        parts: list[Table | Text] = []
        if run is None:
            parts.append(Text("no run yet: press r to compile and benchmark", style="dim"))
        else:
            parts.append(selected_table(run))
        if view.session.runs:
            parts.append(Text())
            parts.append(runs_table(view))
        self.query_one("#benchmark-body", Static).update(Group(*parts))
