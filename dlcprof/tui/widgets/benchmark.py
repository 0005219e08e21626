"""Benchmark pane: eager vs compiled for the selected run, and every run side by side."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import modes as fm
from dlcprof.figures import observer as fo
from dlcprof.figures.job import program as fprog
from dlcprof.figures.runs import run_number
from dlcprof.session import Run, Session
from dlcprof.settings import OPTION
from dlcprof.tui.view import View

_VERDICT_STYLE = {
    fb.FASTER: "bold green",
    fb.SLOWER: "bold red",
    fb.SAME: "bold yellow",
    fb.MIXED: "bold yellow",
}


def _speedup(run: Run) -> Text:
    s = fb.run_speed(run)
    if s is None:
        return Text(text.NA, style="dim")
    return Text(fb.speedup_short(s), style=_VERDICT_STYLE[s.verdict])


def _steady_speedup(run: Run) -> Text:
    a = fa.contrast(run)
    if a is None or a.steady is None:
        return Text(text.NA, style="dim")
    return Text(fb.speedup_short(a.steady), style="bold yellow" if a.sensitive else "")


def selected_table(run: Run, session: Session) -> Table | Text:
    """Both speedups side by side (fa.rows), then the words that go with them."""
    a = fa.contrast(run)
    if a is None:
        lines = [f"eager vs compiled: {fprog.speedup_text(session, run)}"]
        return Text("\n".join([*lines, *fprog.compiled_with(run)]), style="dim")
    t = Table(box=None, padding=(0, 1), expand=True, header_style="bold underline")
    t.add_column("", style="bold", min_width=10, no_wrap=True)
    for name in fa.columns(narrow=True):
        t.add_column(name, ratio=1)
    for label, cells in fa.rows(a, narrow=True):
        if label == "speedup":
            styles = [_VERDICT_STYLE[s.verdict] if s else "dim" for s in (a.default, a.steady)]
            t.add_row(label, *(Text(c, style) for c, style in zip(cells, styles, strict=True)))
        else:
            t.add_row(label, *cells)
    t.caption = (
        f"faults/call: page faults, eager · compiled; compile {a.default.compile_text}, "
        "first call minus a steady call"
    )
    t.caption_justify = "left"
    return t


def allocator_notes(run: Run) -> list[Text]:
    a = fa.contrast(run)
    if a is None:
        return []
    return [
        Text(n, style="bold yellow" if n == a.sentence and a.sensitive else "")
        for n in fa.notes(a, run)
    ]


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
        # As wide as its cells while the pane has room (a workload's whole name).
        t.add_column(
            f"{mark}#{run_number(view.session, r)}",
            justify="right",
            min_width=_RUN_W,
            no_wrap=True,
            overflow="ellipsis",
        )
    if len(runs) < len(all_runs):
        t.caption = f"{len(all_runs) - len(runs)} more run(s) do not fit: pick one in Runs"
        t.caption_justify = "left"

    def row(label: str, cell) -> None:
        t.add_row(label, *(cell(r) for r in runs))

    def setting(name: str):
        def cell(r: Run) -> str | Text:
            value = fprog.compile_setting(r, name)
            if value:
                return OPTION[name].label(value)
            return Text(fprog.no_setting(r), style="dim") if r.process else text.NA

        return cell

    def bench(fn):
        def cell(r: Run):
            s = fb.run_speed(r)
            return fn(s) if s is not None else Text(text.NA, style="dim")

        return cell

    row("workload", lambda r: r.name)
    row("mode", setting("mode"))
    row("dynamic", setting("dynamic"))
    if {fprog.compile_setting(r, "backend") for r in runs} - {"inductor", None}:
        row("backend", setting("backend"))
    row("eager", bench(lambda s: text.ms(s.eager_ms)))
    row("compiled", bench(lambda s: text.ms(s.compiled_ms)))
    row("speedup", _speedup)
    row("steady", _steady_speedup)
    row("compile", bench(lambda s: text.secs(s.compile_s)))
    row("break-even", bench(_break_even_cell))
    if any(r.settings and r.settings.mode != fm.BASELINE for r in runs):
        row("autotune", _autotune_cell)
        row("cudagraphs", lambda r: fm.cudagraphs(r).verdict or text.NA)
    if any(r.benchmark is None for r in runs):
        row("note", lambda r: Text("" if r.benchmark else fb.why_none(r, short=True), style="dim"))
    return t


def _autotune_cell(r: Run) -> Text:
    a = fm.autotune(r)
    if r.settings is None or (r.settings.mode not in fm.AUTOTUNE_MODES and not a.ops):
        return Text("—", style="dim")
    if a.why_none is not None:
        if r.live:
            return Text(fb.why_none(r, short=True), style="dim")
        return Text("none", style="yellow")
    return Text("cached" if a.all_cached else text.secs(a.seconds))


def _break_even_cell(s: fb.Speed) -> Text:
    if s.modes:
        return Text("2 clusters", style="yellow")
    if not s.measurable:
        return Text("no diff", style="yellow")
    if s.break_even is None:
        return Text("never", style="red")
    return Text(text.count(max(s.break_even, 1.0)))


class BenchmarkReport:
    """Rich renderable: the comparison table fits the columns to the pane width."""

    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run = self.view.run
        if run is None:
            yield Text(
                self.view.no_run("no run yet: press r to compile and benchmark"), style="dim"
            )
        else:
            yield selected_table(run, self.view.session)
            yield from allocator_notes(run)
        if self.view.session.runs:
            yield Text()
            yield runs_table(self.view, options.max_width)
        if run is not None and run.benchmark is not None:
            yield Text()
            yield Text(f"measured: {fb.measured_with(run.benchmark)}", style="dim")
            yield Text(fo.line(run), style="dim")


class BenchmarkPane(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="benchmark-body")

    def on_mount(self) -> None:
        self.border_title = "Benchmark"

    def show(self, view: View) -> None:
        self.query_one("#benchmark-body", Static).update(BenchmarkReport(view))
