"""Recompiles pane: guard failures with their cost, and what shape changes cost.

The shape sweep (key s) runs the workload's sizes twice, static then dynamic;
the two cumulative transition costs are charted side by side.
"""

from __future__ import annotations

from rich import box
from rich.console import Console, ConsoleOptions, Group, RenderResult
from rich.table import Table
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof.session import Run, Session
from dlcprof.tui.view import NA, FitBar, View, fmt_ms, fmt_s, hbar


def sweep_pair(session: Session, run: Run | None) -> tuple[Run | None, Run | None]:
    """The latest static and dynamic sweep runs of the selected run's workload."""
    target = run.target if run is not None and run.target else None
    static = dynamic = None
    for r in session.runs.values():
        if not r.sweep or (target is not None and r.target != target):
            continue
        if r.settings.get("dynamic") == "false":
            static = r
        elif r.settings.get("dynamic") == "true":
            dynamic = r
    return static, dynamic


def latest_reason(reason: str) -> Text:
    """Torch lists every cached entry's failed guard, newest first: keep the newest."""
    parts = [p.strip() for p in reason.split("; ") if p.strip()]
    if len(parts) <= 1:
        return Text(reason)
    out = Text(parts[0])
    out.append(f" (+{len(parts) - 1} older entries failed too)", style="dim")
    return out


class RecompileReport:
    """Rich renderable sized to the pane width (bars scale to it)."""

    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run, width = self.view.run, options.max_width
        if run is None:
            yield Text("no run yet: press r to compile, or s to sweep shapes", style="dim")
            return
        # The headline first: what new shapes cost, static vs dynamic.
        yield self._comparison(width)
        yield Text()
        if run.sweep:
            yield self._sweep(run, width)
            yield Text()
        yield self._recompiles(run)
        if run.recompiles and not run.sweep:
            yield Text()
            yield self._cumulative(run, width)
        if run.dynamic_dims:
            dims = list(dict.fromkeys(run.dynamic_dims))  # each recompile re-announces them
            yield Text("dims made dynamic: " + ", ".join(dims), style="cyan")

    def _recompiles(self, run: Run) -> Group | Text:
        if not run.recompiles:
            if run.status in ("pending", "running"):
                return Text("no recompile so far", style="dim")
            return Text("no recompiles in this run", style="dim")
        t = Table(
            title="Recompiles (guard failures)", title_justify="left", expand=True,
            box=box.SIMPLE_HEAD,
        )  # fmt: skip
        t.add_column("#", width=3, justify="right")
        t.add_column("compile", width=9)
        t.add_column("guard failure", ratio=1)
        t.add_column("cost", width=22, justify="right")
        for i, rc in enumerate(run.recompiles, 1):
            if rc.cost_s is not None:
                cost = fmt_s(rc.cost_s)
            elif run.status in ("pending", "running"):
                cost = f"{NA} (compiling)"
            else:
                cost = f"{NA} (no compile record)"
            t.add_row(str(i), rc.compile_id or "?", latest_reason(rc.reason), cost)
        return t

    def _cumulative(self, run: Run, width: int) -> Group:
        """Running total of recompile costs: what the shape changes cost so far."""
        lines = [Text("Cumulative recompile cost", style="bold")]
        costs = [rc.cost_s for rc in run.recompiles]
        total, totals = 0.0, []
        for c in costs:
            total += c or 0.0
            totals.append(total)
        top = max(totals) if totals else 0.0
        bar_w = max(8, width - 30)
        for i, (c, cum) in enumerate(zip(costs, totals, strict=True), 1):
            line = Text(no_wrap=True, overflow="crop")
            line.append(f"{i:>3} ")
            line.append(hbar(cum / top if top > 0 else 0.0, bar_w), style="yellow")
            line.append(f" {fmt_s(cum):>10}" if c is not None else f" {NA:>10}")
            lines.append(line)
        return Group(*lines)

    def _sweep(self, run: Run, width: int) -> Group:
        dyn = run.settings.get("dynamic", "?")
        t = Table(
            title=f"Shape sweep, dynamic={dyn}: cumulative transition cost",
            title_justify="left", expand=True, box=box.SIMPLE_HEAD,
        )  # fmt: skip
        t.add_column("size", width=6, justify="right")
        t.add_column("step", width=10)
        t.add_column("transition", width=10, justify="right")
        t.add_column("cumulative", ratio=1, no_wrap=True)
        t.add_column("total", width=9, justify="right")
        t.add_column("steady", width=10, justify="right")
        cums = run.cumulative_transition_s
        top = max(cums) if cums else 0.0
        for i, (step, cum) in enumerate(zip(run.sweep, cums, strict=True)):
            if step.ran_eager:
                flag = Text("EAGER", style="bold white on red")
            elif step.recompiled:
                # The first size pays the first compile: not a *re*compile.
                flag = Text("compiled" if i == 0 else "recompiled", style="yellow")
            else:
                flag = Text("reused", style="green")
            t.add_row(
                str(step.size), flag, fmt_s(step.transition_s),
                FitBar(cum / top if top > 0 else 0.0, "yellow"),
                fmt_s(cum), fmt_ms(step.latency_ms),
            )  # fmt: skip
        if run.sweep_total_s is None and run.status in ("pending", "running"):
            t.caption = "sweeping…"
        return Group(t)

    def _comparison(self, width: int) -> Group | Text:
        static, dynamic = sweep_pair(self.view.session, self.view.run)
        if static is None and dynamic is None:
            if self.view.replay:
                return Text(
                    f"static vs dynamic: {NA} — no shape sweep of this workload in this session",
                    style="dim",
                )
            return Text(
                f"static vs dynamic: {NA} — press s to sweep the workload's sizes "
                "(static, then dynamic) and compare their cumulative costs",
                style="dim",
            )
        sizes: list[int] = []
        for r in (static, dynamic):
            for step in r.sweep if r else []:
                if step.size not in sizes:
                    sizes.append(step.size)
        s_cum = _cum_by_size(static)
        d_cum = _cum_by_size(dynamic)
        top = max([*s_cum.values(), *d_cum.values(), 0.0])
        t = Table(
            title="Static vs dynamic shapes: cumulative transition cost",
            title_justify="left", expand=True, box=box.SIMPLE_HEAD,
        )  # fmt: skip
        t.add_column("size", width=6, justify="right")
        t.add_column("static (dynamic=false)", ratio=1, no_wrap=True)
        t.add_column("dynamic (dynamic=true)", ratio=1, no_wrap=True)
        for size in sizes:
            t.add_row(str(size), _cell(s_cum.get(size), top, "red"),
                      _cell(d_cum.get(size), top, "green"))  # fmt: skip
        lines: list[Table | Text] = [t, _verdict(static, dynamic)]
        return Group(*lines)


def _cum_by_size(run: Run | None) -> dict[int, float]:
    if run is None:
        return {}
    return {s.size: c for s, c in zip(run.sweep, run.cumulative_transition_s, strict=True)}


def _cell(value: float | None, top: float, style: str) -> Text | FitBar:
    if value is None:
        return Text(NA, style="dim")
    return FitBar(value / top if top > 0 else 0.0, style, f" {fmt_s(value):>9}")


def _verdict(static: Run | None, dynamic: Run | None) -> Text:
    missing = [n for n, r in (("static", static), ("dynamic", dynamic)) if r is None]
    if missing:
        return Text(f"{' and '.join(missing)} sweep: n/a (not run yet)", style="dim")
    assert static is not None and dynamic is not None
    done = [r for r in (static, dynamic) if r.sweep_total_s is not None]
    s_total = static.cumulative_transition_s[-1] if static.sweep else None
    d_total = dynamic.cumulative_transition_s[-1] if dynamic.sweep else None
    if len(done) < 2 or s_total is None or d_total is None:
        return Text("comparison: n/a until both sweeps finish", style="dim")
    out = Text(f"total: static {fmt_s(s_total)} · dynamic {fmt_s(d_total)} → ", style="bold")
    if s_total > 0:
        change = (s_total - d_total) / s_total
        if change >= 0:
            out.append(f"dynamic cut the cost by {change:.0%}", style="bold green")
        else:
            out.append(f"dynamic cost {-change:.0%} more", style="bold red")
    else:
        out.append("ratio n/a (static cost 0 s)")
    s_lat, d_lat = static.sweep[-1].latency_ms, dynamic.sweep[-1].latency_ms
    if s_lat > 0:
        out.append(
            f"; steady latency at size {static.sweep[-1].size}: "
            f"{fmt_ms(s_lat)} static vs {fmt_ms(d_lat)} dynamic ({d_lat / s_lat:.2f}x)"
        )
    return out


class RecompilesPane(VerticalScroll):
    def compose(self):  # type: ignore[override]
        yield Static(id="recompiles-body")

    def show(self, view: View) -> None:
        self.query_one("#recompiles-body", Static).update(RecompileReport(view))
