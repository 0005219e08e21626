"""Phases pane: a time-scaled timeline per compile id, the running phase lit."""

from __future__ import annotations

from typing import Any

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.reactive import reactive
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import cache as fc
from dlcprof.figures import phases as fp
from dlcprof.figures.cache_misses import cache_lines
from dlcprof.figures.recompiles import newest_reason
from dlcprof.session import Compile, Run
from dlcprof.tui.view import View, span_bar

_RUNNING = "bold black on yellow"
_MAX_INDENT = 8  # torch nests ~12 deep; deeper rows keep this indent


@data
class _Row:
    name: str
    depth: int
    start: float
    duration: float | None  # None: still running (or was, at save time)
    thread: int
    pool: bool = False  # on a pool thread beside the compiling one (a g++ build)


class PhaseTimeline:
    """Rich renderable: bars laid out against the width it is given."""

    LABEL = 12
    SECS = 10
    name_w = 30

    def __init__(self, view: View, show_all: bool = False) -> None:
        self.view = view
        self.show_all = show_all

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run = self.view.run
        if run is None:
            yield Text(
                self.view.no_run("no run yet: pick a workload and press r to compile"), style="dim"
            )
            return
        groups = _groups(run)
        if not groups:
            yield Text(_empty_reason(run), style="dim")
            return
        width = options.max_width
        self.name_w = min(44, max(24, width * 2 // 5))
        bar_w = max(8, width - self.LABEL - self.name_w - self.SECS - 3)
        for title, compile_, rows in groups:
            yield self._header(title, compile_)
            said = [fp.summed_words(compile_), fp.cpu_words(compile_)] if compile_ else []
            if compile_ is not None and self.view.run is not None:
                said += cache_lines(self.view.run, compile_.compile_id)
            for words in filter(None, said):
                yield Text(f"  {words}", style="dim", no_wrap=True, overflow="ellipsis")
            if not rows:
                continue
            end = self._end(rows)
            t0 = min(r.start for r in rows)
            span = max(end - t0, 1e-9)
            hidden: list[_Row] = []
            for row in rows:
                if self._shown(row, span):
                    yield self._line(row, t0, span, end, bar_w)
                else:
                    hidden.append(row)
            if hidden:
                yield Text(
                    f"{'':<{self.LABEL}} + {len(hidden)} phases under {fp.FOLD_SHARE:.0%} of this "
                    "compile each, folded (key v shows all)",
                    style="dim",
                    no_wrap=True,
                    overflow="ellipsis",
                )

    def _shown(self, row: _Row, span: float) -> bool:
        if self.show_all or row.duration is None or row.name in fp.ALWAYS_SHOWN:
            return True
        return not fp.is_minor(row.duration, span)

    def _end(self, rows: list[_Row]) -> float:
        ends = [r.start + r.duration for r in rows if r.duration is not None]
        if self.view.now is not None and any(r.duration is None for r in rows):
            ends.append(self.view.now)
        starts = [r.start for r in rows]
        return max(ends + starts)

    def _header(self, title: str, c: Compile | None) -> Text:
        out = Text(title, style="bold", no_wrap=True, overflow="ellipsis")
        if c is None:
            out.append("  compiling, id not known yet", style="yellow")
            return out
        bits: list[str] = []
        if c.is_backward:
            bits.append("backward")
        bits.append(f"wall {text.secs(c.wall_s)}" if c.finished else "in progress")
        cache = fc.compile_cache(self.view.run, c) if self.view.run is not None else c.cache
        if cache:
            bits.append(f"cache {cache}")
        rec = c.record
        if rec is not None and rec.graph_op_count is not None:
            bits.append(f"{rec.graph_op_count} ops")
        if rec is not None and rec.guard_count is not None:
            bits.append(f"{rec.guard_count} guards")
        if c.kernels:
            bits.append(text.plural(len(c.kernels), "kernel"))
        out.append("  " + " · ".join(bits), style="dim")
        if rec is not None and rec.fail_type:
            out.append(f"  failed: {rec.fail_type}", style="bold red")
        reason = newest_reason(c.record.recompile_reason if c.record else None)
        if reason:
            out.append(f"  recompile: {reason}", style="yellow")
        restarted = fp.restarts(c)
        if restarted is not None:
            out.append(
                "  " + fp.restarts_words(restarted.count, restarted.cost_s, restarted.reasons),
                style="yellow",
            )
        return out

    def _line(self, row: _Row, t0: float, span: float, end: float, bar_w: int) -> Text:
        stage = fp.stage_of(row.name)
        running = row.duration is None
        indent = " " * min(row.depth, _MAX_INDENT)
        label = f"{row.name} ({fp.pool_words(1)})" if row.pool else row.name
        name = text.middle(label, max(1, self.name_w - len(indent)))  # its end says most
        pad = " " * (self.name_w - len(indent) - len(name))
        if running:
            shown = end - row.start if self.view.now is not None else None
            secs = "running" if shown is None else f"▶ {text.secs(shown)}"
            length = (end - row.start) / span
        else:
            assert row.duration is not None
            secs = text.secs(row.duration)
            length = row.duration / span
        bar = span_bar((row.start - t0) / span, length, bar_w)
        line = Text(no_wrap=True, overflow="crop")
        line.append(f"{stage.name[: self.LABEL - 1]:<{self.LABEL}}", style=stage.style)
        line.append(" ")
        line.append(indent)
        line.append(name, style=_RUNNING if running else "")
        line.append(pad + " ")
        line.append(f"{secs:>{self.SECS}}", style="bold yellow" if running else "")
        line.append(" ")
        line.append(bar, style="yellow" if running else stage.style)
        return line


def _groups(run: Run) -> list[tuple[str, Compile | None, list[_Row]]]:
    out: list[tuple[str, Compile | None, list[_Row]]] = []
    # Begin events often carry no compile id (torch names it at the End): an
    # open phase belongs to the compile in progress, if one is.
    current = run.last_compile_id
    if current is not None and run.compiles.get(current, Compile(current)).finished:
        current = None
    open_by_cid: dict[str | None, list[ev.PhaseStarted]] = {}
    for p in run.open_phases.values():
        open_by_cid.setdefault(p.compile_id or current, []).append(p)
    for cid, c in run.compiles.items():
        rows = _rows(c.phases, open_by_cid.pop(cid, []), fp.main_thread(c.phases))
        out.append((f"compile {cid}", c, rows))
    for open_cid, opened in open_by_cid.items():
        title = f"compile {open_cid}" if open_cid else "compile ?"
        out.append((title, None, _rows([], opened)))
    return out


# Open phases all "end" at this far epoch time, so each encloses everything
# that started after it on its thread (and the open ones nest in each other).
_STILL_OPEN_END = 1e12


def _rows(
    phases: list[ev.PhaseEnded], opened: list[ev.PhaseStarted], main: int | None = None
) -> list[_Row]:
    """Finished and running phases nested together (depth = enclosing phases);
    those off the ``main`` (compiling) thread are marked as a pool thread's."""
    running = [
        ev.PhaseEnded(
            run_id=p.run_id,
            compile_id=p.compile_id,
            name=p.name,
            thread=p.thread,
            start_t=p.t,
            duration_s=_STILL_OPEN_END - p.t,
            t=p.t,
        )
        for p in opened
    ]
    open_ids = {id(p) for p in running}
    return [
        _Row(
            p.name,
            d,
            p.start_t,
            None if id(p) in open_ids else p.duration_s,
            p.thread,
            main is not None and p.thread != main,
        )
        for p, d in fp.nest_phases([*phases, *running])
    ]


def _empty_reason(run: Run) -> str:
    if run.status in ("pending", "running"):
        return "waiting for the first compile phase…"
    if "trace" in run.unavailable:
        return text.na(run.unavailable["trace"])
    if run.settings is not None and run.settings.backend == "eager":
        return "no compile phases: backend eager does not compile"
    if run.status in ("cancelled", "crashed"):
        return f"no compile phase finished before the run was {run.status}"
    return text.na(f"this run recorded no compile phases (status {run.status})")


class PhasesPane(VerticalScroll):
    """Timeline per compile id; follows the newest line while a run is live."""

    show_all: reactive[bool] = reactive(False)

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._view: View | None = None

    def action_toggle_all(self) -> None:
        self.show_all = not self.show_all

    def watch_show_all(self) -> None:
        if self._view is not None:
            self.show(self._view)

    def compose(self) -> ComposeResult:
        yield Static(id="phases-body")

    def on_mount(self) -> None:
        self.border_title = "Phases"

    def show(self, view: View) -> None:
        self._view = view
        at_end = self.scroll_y >= self.max_scroll_y - 1
        self.query_one("#phases-body", Static).update(PhaseTimeline(view, self.show_all))
        run = view.run
        done = [c for c in run.compiles.values() if c.finished] if run is not None else []
        if done:
            # Only finished compiles carry torch's wall time.
            wall = text.secs(sum(c.wall_s or 0.0 for c in done))
            self.border_subtitle = f"{len(done)} compile(s) done · torch wall {wall}"
        else:
            self.border_subtitle = ""
        if at_end and run is not None and run.status == "running":
            self.call_after_refresh(self.scroll_end, animate=False)
