"""Benchmark pane: eager vs compiled for the selected run, and every run side by side."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof.session import Benchmark, Run
from dlcprof.tui.view import MODE_SHORT, NA, View, fmt_break_even, fmt_ms, fmt_s


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
    t = Table(show_header=False, box=None, padding=(0, 1), expand=True)
    t.add_column(style="bold", min_width=10, no_wrap=True)
    t.add_column(ratio=1)
    t.add_row("eager", f"{fmt_ms(b.eager_ms)} ± {b.eager_spread_ms:.3f} IQR")
    t.add_row("compiled", f"{fmt_ms(b.compiled_ms)} ± {b.compiled_spread_ms:.3f} IQR")
    t.add_row("speedup", _speedup(run))
    t.add_row("compile", f"{fmt_s(b.compile_s)} (first call minus a steady call)")
    be = b.break_even_iters
    t.add_row("break-even", Text(fmt_break_even(be), style="red" if be is None else "bold"))
    return t


def measured_with(run: Run) -> Text | None:
    """How the selected run's numbers were taken: the caveat that goes with them."""
    b = run.benchmark
    if b is None:
        return None
    load = " ".join(f"{x:.2f}" for x in b.load_avg) or NA
    return Text(
        f"measured: median of {b.reps} reps × {b.iters} calls after {b.warmup} warm-up, "
        f"{b.threads} thread(s), {b.timer}, load avg {load}",
        style="dim",
    )


_LABEL_W = 10
_RUN_W = 10


def runs_to_show(view: View, width: int) -> list[Run]:
    """As many of the newest runs as fit in ``width``, the selected one always among them."""
    runs = list(view.session.runs.values())
    fit = max(1, (width - _LABEL_W - 1) // (_RUN_W + 1))
    if len(runs) <= fit:
        return runs
    shown = runs[-fit:]
    if view.run is not None and view.run not in shown:
        shown = [view.run, *runs[-(fit - 1) :]] if fit > 1 else [view.run]
    return shown


def runs_table(view: View, width: int = 200) -> Table:
    """Runs of the session, one column each: modes and dynamic settings side by side."""
    all_runs = list(view.session.runs.values())
    runs = runs_to_show(view, width)
    t = Table(box=None, padding=(0, 1, 0, 0), header_style="bold underline")
    t.add_column("runs", style="bold", width=_LABEL_W, no_wrap=True, overflow="crop")
    selected = view.run.run_id if view.run else None
    for r in runs:
        mark = "▶" if r.run_id == selected else " "
        t.add_column(f"{mark}#{all_runs.index(r) + 1}", justify="right", width=_RUN_W,
                     no_wrap=True, overflow="ellipsis")  # fmt: skip
    if len(runs) < len(all_runs):
        t.caption = f"{len(all_runs) - len(runs)} more run(s) do not fit: pick one in Runs"
        t.caption_justify = "left"

    def row(label: str, cell) -> None:  # type: ignore[no-untyped-def]
        t.add_row(label, *(cell(r) for r in runs))

    def bench(fn):  # type: ignore[no-untyped-def]
        return lambda r: fn(r.benchmark) if r.benchmark is not None else Text(NA, style="dim")

    row("workload", lambda r: r.workload or r.target or r.run_id)
    row("mode", lambda r: MODE_SHORT.get(r.settings.get("mode", ""), r.settings.get("mode", NA)))
    row("dynamic", lambda r: r.settings.get("dynamic", NA))
    if {r.settings.get("backend") for r in runs} != {"inductor"}:
        row("backend", lambda r: r.settings.get("backend", NA))
    row("eager", bench(lambda b: fmt_ms(b.eager_ms)))
    row("compiled", bench(lambda b: fmt_ms(b.compiled_ms)))
    row("speedup", _speedup)
    row("compile", bench(lambda b: fmt_s(b.compile_s)))
    row("break-even", bench(_break_even_cell))
    if any(r.benchmark is None for r in runs):
        row("note", lambda r: Text("" if r.benchmark else _short_reason(r), style="dim"))
    return t


class BenchmarkReport:
    """Rich renderable: the comparison table fits the columns to the pane width."""

    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run = self.view.run
        if run is None:
            yield Text("no run yet: press r to compile and benchmark", style="dim")
        else:
            yield selected_table(run)
        if self.view.session.runs:
            yield Text()
            yield runs_table(self.view, options.max_width)
        caveat = measured_with(run) if run is not None else None
        if caveat is not None:
            yield Text()
            yield caveat


def _break_even_cell(b: Benchmark) -> Text:
    be = b.break_even_iters
    return Text("never", style="red") if be is None else Text(f"{be:,.0f}")


class BenchmarkPane(VerticalScroll):
    def compose(self):  # type: ignore[override]
        yield Static(id="benchmark-body")

    def on_mount(self) -> None:
        self.border_title = "Benchmark"

    def show(self, view: View) -> None:
        self.query_one("#benchmark-body", Static).update(BenchmarkReport(view))
