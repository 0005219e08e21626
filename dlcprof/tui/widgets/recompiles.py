"""Recompiles pane: guard failures with their cost, and what shape changes cost.

The shape sweep (key s) runs the workload's sizes twice, static then dynamic;
the two cumulative transition costs are charted side by side.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import recompiles as fr
from dlcprof.session import Run
from dlcprof.tui.ordering import Figured
from dlcprof.tui.view import FitBar, View, hbar
from dlcprof.tui.widgets.sorted_table import Row, SortedTable


def reason_text(reason: str) -> Text:
    """The newest failed guard and where; a count of the older cache entries that failed too."""
    r = fr.newest_reason(reason)
    if r is None:
        return Text("")
    out = Text(r.newest)
    if r.older:
        out.append(f" (+{r.older} older entries)", style="dim")
    return out


COLUMNS: list[tuple[str, int | None]] = [
    ("#", 3),
    ("compile", 9),
    ("guard failure", 90),
    ("cost", 22),
]


def recompile_rows(run: Run | None) -> list[Row]:
    """The guard failures, each a table row (sorts and filters as any table)."""
    if run is None:
        return []
    why = "compiling" if run.live else "no compile record"
    return [
        Row(
            [
                Figured(str(i), i),
                Figured(rc.compile_id or "?", rc.compile_id or None),
                reason_text(rc.reason),
                Figured(text.secs(rc.cost_s, why), rc.cost_s),
            ],
            str(i),
        )
        for i, rc in enumerate(fr.recompile_rows(run), 1)
    ]


class RecompileReport:
    """Rich renderable sized to the pane width (bars scale to it): what comes
    before the guard failures' table (``part`` "head") or after it ("tail")."""

    def __init__(self, view: View, part: str) -> None:
        self.view, self.part = view, part

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run, width = self.view.run, options.max_width
        if self.part == "tail":
            if run is not None:
                yield from self._tail(run, width)
            return
        if run is None:
            yield Text(
                self.view.no_run("no run yet: press r to compile, or s to sweep shapes"),
                style="dim",
            )
            return
        # The headline first: what new shapes cost, static vs dynamic (a sweep
        # of a workload's sizes; an attached program decides its own shapes,
        # and an import's logs ran none).
        if self.view.session.program is None and self.view.session.imported is None:
            yield self._comparison(width)
            yield Text()
        if run.sweep:
            yield self._sweep(run, width)
            yield Text()
        yield self._recompiles(run)

    def _tail(self, run: Run, width: int) -> RenderResult:
        if run.recompiles and not run.sweep:
            yield Text()
            yield self._cumulative(run, width)
        dims = fr.dim_words(run)
        if dims:
            yield Text(f"{fr.DIMS_MADE_DYNAMIC}: " + ", ".join(dims), style="cyan")
        scalars = fr.symbolic_scalars(run)
        if scalars:
            names = [fr.scalar_name(d.source) for d in scalars]
            yield Text(fr.scalars_made_symbols(names), style="dim")

    def _recompiles(self, run: Run) -> Text:
        if not fr.recompile_rows(run):
            if run.live:
                return Text("no recompile so far", style="dim")
            return Text("no recompiles in this run", style="dim")
        return Text("Recompiles (guard failures)", style="italic")

    def _cumulative(self, run: Run, width: int) -> Group:
        """Running total of recompile costs: what the shape changes cost so far."""
        lines = [Text("Cumulative recompile cost", style="bold")]
        rows = fr.recompile_rows(run)
        top = max((r.cumulative_s or 0.0 for r in rows), default=0.0)
        bar_w = max(8, width - 30)
        for i, r in enumerate(rows, 1):
            cum = r.cumulative_s or 0.0
            line = Text(no_wrap=True, overflow="crop")
            line.append(f"{i:>3} ")
            line.append(hbar(cum / top if top > 0 else 0.0, bar_w), style="yellow")
            line.append(f" {text.secs(r.cumulative_s):>10}")
            lines.append(line)
        return Group(*lines)

    def _sweep(self, run: Run, width: int) -> Group:
        dyn = run.settings.dynamic if run.settings else "?"
        t = Table(
            title=f"Shape sweep, dynamic={dyn}: cumulative transition cost",
            title_justify="left",
            expand=True,
            box=box.SIMPLE_HEAD,
        )
        t.add_column("size", width=6, justify="right")
        t.add_column("step", width=10)
        t.add_column("transition", width=10, justify="right")
        t.add_column("cumulative", ratio=1, no_wrap=True)
        t.add_column("total", width=9, justify="right")
        t.add_column("steady", width=18, justify="right")
        cums = fr.cumulative(run)
        top = max(cums) if cums else 0.0
        for i, (step, cum) in enumerate(zip(run.sweep, cums, strict=True)):
            flag = fr.step_flag(i, step)
            style = {"ran EAGER": "bold white on red", "reused": "green"}.get(flag, "yellow")
            t.add_row(
                str(step.size),
                Text(flag, style=style),
                text.secs(step.transition_s),
                FitBar(cum / top if top > 0 else 0.0, "yellow"),
                text.secs(cum),
                fr.latency(step.latency_ms, step.latency_spread_ms),
            )
        if run.sweep_done is None and run.live:
            t.caption = "sweeping…"
        elif fr.rough_latency(run):
            t.caption = f"~ {text.ROUGH}"
        return Group(t)

    def _comparison(self, width: int) -> Group | Text:
        pair = fr.sweep_pair(self.view.session, self.view.run)
        if pair is None:
            if self.view.replay:
                return Text(
                    f"static vs dynamic: {text.NA} — no shape sweep of this workload in this "
                    "session",
                    style="dim",
                )
            return Text(
                f"static vs dynamic: {text.NA} — press s to sweep the workload's sizes "
                "(static, then dynamic) and compare their cumulative costs",
                style="dim",
            )
        s_cum = fr.cumulative_by_size(pair.static)
        d_cum = fr.cumulative_by_size(pair.dynamic)
        top = max([*s_cum.values(), *d_cum.values(), 0.0])
        dyn = pair.dynamic.settings.dynamic if pair.dynamic and pair.dynamic.settings else "true"
        t = Table(
            title="Static vs dynamic shapes: cumulative transition cost",
            title_justify="left",
            expand=True,
            box=box.SIMPLE_HEAD,
        )
        t.add_column("size", width=6, justify="right")
        t.add_column("static (dynamic=false)", ratio=1, no_wrap=True)
        t.add_column(f"dynamic (dynamic={dyn})", ratio=1, no_wrap=True)
        for size in pair.sizes():
            t.add_row(
                str(size), _cell(s_cum.get(size), top, "red"), _cell(d_cum.get(size), top, "green")
            )
        return Group(t, _verdict(pair))


def _cell(value: float | None, top: float, style: str) -> Text | FitBar:
    if value is None:
        return Text(text.NA, style="dim")
    return FitBar(value / top if top > 0 else 0.0, style, f" {text.secs(value):>9}")


def _verdict(pair: fr.SweepPair) -> Text:
    missing = [n for n, r in (("static", pair.static), ("dynamic", pair.dynamic)) if r is None]
    if missing:
        return Text(f"{' and '.join(missing)} sweep: {text.na('not run yet')}", style="dim")
    if not pair.complete:
        return Text(f"comparison: {text.na('until both sweeps finish')}", style="dim")
    return Text(
        pair.verdict,
        style="bold",
    )


class RecompilesPane(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="recompiles-body")
        yield SortedTable(COLUMNS, id="recompiles-table")
        yield Static(id="recompiles-tail")

    def show(self, view: View) -> None:
        self.query_one("#recompiles-body", Static).update(RecompileReport(view, "head"))
        table = self.query_one(SortedTable)
        table.fill(recompile_rows(view.run))
        table.display = bool(table.rows_given)
        self.query_one("#recompiles-tail", Static).update(RecompileReport(view, "tail"))

    def tab_label(self, view: View) -> str:
        table = self.query_one(SortedTable)
        return table.counted("Recompiles")
