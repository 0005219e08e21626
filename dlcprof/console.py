"""Rich renderings of a Session for the headless CLI: live lines and tables.
One idea past 600 lines: how the console lays a run out, every table of it.

Every figure and its words come from ``dlcprof.figures`` (units from
``dlcprof.text``): this module only lays them out.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from functools import partial
from typing import Any

from rich.console import Console, ConsoleOptions, Group, RenderableType, RenderResult
from rich.measure import Measurement
from rich.table import Column, Table
from rich.text import Text

from dlcprof import events as ev
from dlcprof import text
from dlcprof.advice_tables import advice_view, compile_cost_view
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import boot as fboot
from dlcprof.figures import cache as fc
from dlcprof.figures import cache_misses as fcm
from dlcprof.figures import device as fd
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures import hotspots as fh
from dlcprof.figures import kernels as fk
from dlcprof.figures import live_log as ll
from dlcprof.figures import modes as fm
from dlcprof.figures import observer as fo
from dlcprof.figures import outcome as fout
from dlcprof.figures import paper as fpa
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.figures.advice import trial as fat
from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import program as fprog
from dlcprof.figures.runs import run_label
from dlcprof.session import Run, Session
from dlcprof.tables import (
    autotune_table,
    cudagraphs_table,
    device_table,
    divergence_text,
    divergences_text,
    group_table,
    rank_table,
)

_LIVE_PHASES = (fp.KEY_NAMES - {"compile_file"}) | {"entire_frame_compile"}
# Off a terminal (a pipe, a log file, CI) Rich would cut every table to 80
# columns; there a table gets the room its whole cells need (a kernel's name is
# searched for in a CI log). COLUMNS still wins when it is set.
PIPE_WIDTH = 400
# The mark and the style of each part of a line figures.live_log.event_line words
# that the live log shows (one line each: no traceback).
_EVENT_STYLE: dict[type[ev.Event], tuple[str, dict[str, str]]] = {
    ev.RunStarted: ("▶ ", {ll.HEAD: "bold green"}),
    ev.RecompileTriggered: ("  ↻ ", {ll.HEAD: "bold yellow"}),
    ev.RecompileLimitHit: (
        "  ⚠ ",
        {ll.HEAD: "bold white on red", ll.PLACE: "bold", ll.ASIDE: "dim"},
    ),
    ev.CompileRaised: ("✗ ", {ll.HEAD: "bold white on red", ll.PLACE: "bold", ll.ASIDE: "dim"}),
    ev.EagerCallsCounted: ("  ⚠ ", {ll.HEAD: "bold red"}),
    ev.GraphBroken: ("  ✂ ", {ll.HEAD: "bold magenta", ll.ASIDE: "dim"}),
    ev.LogEmitted: ("  ! ", {ll.HEAD: "yellow", ll.ASIDE: "dim"}),
    ev.ErrorRaised: ("✗ ", {ll.HEAD: "bold red"}),
    ev.ProbeUnavailable: ("  ", {ll.HEAD: "yellow"}),
    ev.WorkerExited: ("✗ ", {ll.HEAD: "bold red"}),
    ev.MonitorStatus: ("  · ", {ll.HEAD: "dim"}),
}


def make_console(**kwargs: Any) -> Console:
    """The CLI's console: the terminal's width, or PIPE_WIDTH when output is not a terminal."""
    console = Console(highlight=False, **kwargs)
    if not console.is_terminal and not os.environ.get("COLUMNS"):
        console.width = PIPE_WIDTH
    return console


def live_line(event: ev.Event, session: Session) -> Text | None:
    """One line for the headless live log, or None to stay quiet."""
    match event:
        case ev.LogEmitted() if event.level not in ("warning", "error") or event.source == "stderr":
            return None
        case ev.MonitorStatus() if event.available:
            return None
        case ev.WorkerExited() if event.returncode == 0:
            return None
    line = ll.event_line(event)
    if line is not None:
        mark, styles = _EVENT_STYLE[type(event)]
        (head, _), *rest = line
        return Text.assemble(
            (f"{mark}{head}", styles[ll.HEAD]),
            *((words, styles.get(part, "")) for words, part in rest if part != ll.TRACE),
        )
    match event:
        case ev.PhaseEnded() if event.name in _LIVE_PHASES:
            run = session.run(event.run_id)
            cid = event.compile_id or run.last_compile_id or "?"
            # Dynamo threw an attempt away: its phases come again, said as a retry.
            thrown = [
                p
                for p in (run.compiles[cid].phases if cid in run.compiles else [])
                if fp.attempt(p.name) is not None and p.end_t <= event.start_t + 1e-9
            ]
            again = f" · attempt {len(thrown) + 1}, after a Dynamo restart" if thrown else ""
            return Text.assemble(
                ("  ", ""),
                (f"[{cid}] ", "cyan"),
                f"{event.name:<32}",
                (text.secs(event.duration_s), "bold"),
                (again, "yellow"),
            )
        case ev.CompileFinished() if event.fail_type:
            return Text.assemble(
                ("  ✗ ", "bold red"), (f"[{event.compile_id}] ", "cyan"), fout.frame_failed(event)
            )
        case ev.HeaderPrecompiled():
            return Text.assemble(("  · ", "dim"), fc.header_line(event))
        case ev.GraphSplitForDDP():
            split = fddp.splits(session.run(event.run_id))[-1]
            return Text.assemble(("  ⑂ DDP: ", "bold cyan"), split.line)
        case ev.NothingCompiled():
            return Text(
                "\n".join(
                    [fout.headline(event), *fout.hint_lines(event, session.run(event.run_id))]
                ),
                style="bold white on red",
            )
        case ev.CompileFinished():
            what = "backward compile" if event.is_backward else "compile"
            run = session.run(event.run_id)
            cache = fc.compile_cache(run, run.compile(event.compile_id))
            extra = f" · cache {cache}" if cache else ""
            return Text.assemble(
                ("  ✓ ", "green"),
                (f"[{event.compile_id}] ", "cyan"),
                f"{what} done in {text.secs(event.wall_s)}{extra}",
            )
        case ev.OpAutotuned():
            op = fm.autotune(session.run(event.run_id)).ops[-1]
            best = op.winner
            return Text.assemble(
                ("  ⚙ autotuned ", "bold cyan"),
                f"{op.op}({op.shapes}): ",
                fm.choices_line(
                    len(op.choices), best.name if best else None, best.ms if best else None
                ),
                f" · {fm.AUTOTUNE_CACHED}" if op.cached else f" · {text.secs(op.seconds)}",
            )
        case ev.CudagraphDecided():
            cg = fm.cudagraphs(session.run(event.run_id))
            return Text.assemble(("  CUDA graphs: ", "bold"), cg.line)
        case ev.ShapeStepMeasured():
            run = session.run(event.run_id)
            flag = fr.step_flag(len(run.sweep) - 1, event)
            return Text(
                f"  size {event.size:>6}: {flag:<10} transition {text.secs(event.transition_s)}, "
                f"steady {fr.latency(event.latency_ms, event.latency_spread_ms)}"
            )
        case ev.ProfilingStarted():
            return Text.assemble(("  ⏱ ", "cyan"), f"profiling kernels: {event.method}")
        case ev.KernelsProfiled():
            return Text.assemble(
                ("  ✓ ", "green"), f"kernels profiled in {text.secs(event.wall_s)}"
            )
    return None


def phases_table(run: Run) -> Table:
    t = Table(title="Compile phases per compile id", title_justify="left")
    t.add_column("phase")
    compiles = list(run.compiles.values())
    for c in compiles:
        t.add_column(c.compile_id, justify="right")
    t.add_row("wall (torch compilation_metrics)", *(text.secs(c.wall_s) for c in compiles))
    restarted = [fp.restarts(c) for c in compiles]
    if any(restarted):
        t.add_row(
            "thrown away (Dynamo restarts)",
            *("—" if r is None else f"{text.secs(r.cost_s)} ×{r.count}" for r in restarted),
        )
    rows = [fp.key_phases(c) for c in compiles]
    for i, (label, _) in enumerate(fp.KEY_PHASES):
        t.add_row(label, *(fp.key_phase_words(keys[i]) for keys in rows))
    t.add_row("cache", *((fc.compile_cache(run, c) or text.NA) for c in compiles))
    if any(c.cpu is not None for c in compiles):
        cells = [fp.cpu_cells(c) for c in compiles]
        for i, (label, _) in enumerate(fp.CPU_PARTS):
            t.add_row(label, *(x[i] for x in cells))
    notes = [fp.cpu_note(compiles)]
    if any(fp.summed(c) for c in compiles):
        notes.append(fp.SUMMED_NOTE[0].upper() + fp.SUMMED_NOTE[1:] + ": compare the wall row.")
    if any(notes):
        t.caption = "\n".join(n for n in notes if n)
        t.caption_justify = "left"
    return t


def kernels_table(run: Run, fit: bool = True) -> Table:
    """Each kernel once per place in its frame's call (figures.kernels.kernel_groups),
    slowest first once profiled; ``fit`` (a terminal): long names and op lists
    lose their middle, so that the figures fit beside them."""
    timings = fk.kernel_timings(run)
    groups = fk.kernel_groups(run)
    group_t = {fk.kernel_key(g.kernel): fk.group_timing(g, timings) for g in groups}
    by_kernel = {id(g.kernel): g for g in groups}
    profiled = run.kernel_profile is not None
    notes = text.Footnotes()
    title = "Kernels" + (", slowest first" if profiled else "")
    t = SqueezedTable(title=title, title_justify="left") if fit else Table(title=title)
    t.title_justify = "left"
    t.add_column("compile", no_wrap=True)
    t.add_column("kernel", no_wrap=True)
    t.add_column("kind", no_wrap=True)
    for col in fk.TIMING_COLUMNS if profiled else ():
        t.add_column(col, justify="right", no_wrap=True)
    t.add_column("fused ops", no_wrap=True)
    kernels = [g.kernel for g in groups]
    for k in fk.by_time(kernels, group_t) if profiled else kernels:
        g = by_kernel[id(k)]
        c = fk.timing_cells(group_t[fk.kernel_key(k)], notes).values() if profiled else ()
        name: RenderableType = k.name
        ops: RenderableType = fk.ops_whole(k)
        if fit:
            name = Fitted(k.name, partial(text.middle, k.name))
            ops = Fitted(fk.ops_whole(k), partial(fk.ops_cell, k))
        t.add_row(g.label, name, k.kind, *c, ops)
    count = fk.kernel_count(run)
    head = [count.words, *filter(None, [count.rows_words])]
    t.caption = "\n".join([*head, *fk.summary_lines(run), *notes.lines()])
    t.caption_justify = "left"
    return t


# The figures a narrow terminal leaves out first, when cutting the names to their
# least still leaves the table too wide (the time and the fusion gain stay).
KERNEL_FIGURES_LEFT_OUT = ("of copy BW", "bytes", "GB/s", "eager ops", "share")


class Fitted:
    """A cell on one line, whole when its column has the room, else ``cut`` to
    the column's width (a name loses its middle): never cut while the table
    has room, never cut at its end without an ellipsis."""

    LEAST = 12  # the narrowest a cut cell is made: a name.s start and number

    def __init__(self, whole: str, cut: Callable[[int], str]) -> None:
        self.whole, self.cut = whole, cut

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement(min(self.LEAST, len(self.whole)), len(self.whole))

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = options.max_width
        shown = self.whole if len(self.whole) <= width else self.cut(width)
        yield Text(shown, no_wrap=True, overflow="crop")


class FitOnTerminal:
    """A table that fits a terminal's width, its long cells cut in the middle; off
    a terminal (a pipe, a CI log) the same table with every cell whole."""

    def __init__(self, build: Callable[[bool], Table]) -> None:
        self.build = build

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        yield self.build(console.is_terminal)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        return Measurement.get(console, options, self.build(console.is_terminal))


class SqueezedTable(Table):
    """A table whose ``Fitted`` columns give the room when it is too wide, the
    widest first, down to ``Fitted.LEAST``: the names are cut, the figures keep
    their width (rich alone would shrink every column alike, or a wrapping one
    to nothing). Where that is not enough, the figure columns named in
    ``KERNEL_FIGURES_LEFT_OUT`` are left out, in its order, and the caption says
    which: a figure is shown whole or not at all, never cut."""

    # The columns and caption as built, before any squeeze left some out.
    _whole: tuple[list[Column], Any] | None = None

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        self._squeeze(console, options)
        yield from super().__rich_console__(console, options)

    def __rich_measure__(self, console: Console, options: ConsoleOptions) -> Measurement:
        self._squeeze(console, options)
        return super().__rich_measure__(console, options)

    def _squeeze(self, console: Console, options: ConsoleOptions) -> None:
        # Measured and rendered alike: start from the whole table each time.
        self._whole = self._whole or (list(self.columns), self.caption)
        self.columns, self.caption = list(self._whole[0]), self._whole[1]
        cuttable = [c for c in self.columns if all(isinstance(x, Fitted) for x in c.cells)]
        wide = options.update_width(100_000)

        def excess() -> int:
            return super(SqueezedTable, self).__rich_measure__(console, wide).maximum - (
                options.max_width
            )

        # First the figures that must go even with every name at its least...
        needed = {
            id(c): max(
                len(str(c.header)), *(len(x.whole) for x in c.cells if isinstance(x, Fitted))
            )
            for c in cuttable
        }
        for c in cuttable:
            c.width = min(needed[id(c)], Fitted.LEAST)
        left_out = []
        for name in KERNEL_FIGURES_LEFT_OUT:
            column = next((c for c in self.columns if c.header == name), None)
            if column is None or excess() <= 0:
                continue
            self.columns.remove(column)
            left_out.append(name)
        # ...then the names give back what they need of the room left, widest first.
        for c in cuttable:
            c.width = needed[id(c)]
        over = excess()
        while over > 0:
            widest = max(cuttable, key=lambda c: c.width or 0, default=None)
            if widest is None or (widest.width or 0) <= Fitted.LEAST:
                break
            widest.width = (widest.width or 0) - 1
            over -= 1
        if left_out:
            said = f"left out at {options.max_width} columns: {', '.join(left_out)} (a wider "
            said += "terminal, the report or --json has them)"
            self.caption = "\n".join(filter(None, [str(self.caption or ""), said]))


def benchmark_table(run: Run, session: Session) -> RenderableType:
    a = fa.contrast(run)
    if a is None:
        t = Table(title="Eager vs compiled", title_justify="left", show_header=False)
        t.add_column(style="bold")
        t.add_column()
        t.add_row("benchmark", fprog.speedup_text(session, run))
        return Group(t, *(Text(line, style="dim") for line in fprog.compiled_with(run)))
    assert run.benchmark is not None
    t = Table(title="Eager vs compiled", title_justify="left")
    t.add_column("", style="bold")
    for name in fa.columns():
        t.add_column(name, justify="right")
    for label, cells in fa.rows(a):
        t.add_row(label, *cells)
    lines: list[RenderableType] = [
        t,
        Text(f"compile {a.default.compile_text}, first call minus a steady call"),
    ]
    lines += [Text(line) for line in fa.notes(a, run)]
    lines.append(Text(f"measured: {fb.measured_with(run.benchmark)}", style="dim"))
    return Group(*lines)


def sweep_table(run: Run) -> Table:
    t = Table(title=f"Shape sweep, {run_label(run)}", title_justify="left")
    for col in ("size", "step", "transition", "cumulative", "steady latency", "reason"):
        t.add_column(col)
    for i, (step, cum) in enumerate(zip(run.sweep, fr.cumulative(run), strict=True)):
        t.add_row(
            str(step.size),
            fr.step_flag(i, step),
            text.secs(step.transition_s),
            text.secs(cum),
            fr.latency(step.latency_ms, step.latency_spread_ms),
            str(fr.newest_reason(step.reason) or ""),
        )
    if fr.rough_latency(run):
        t.caption = f"~ {text.ROUGH}"
    return t


def sweep_verdict(session: Session, run: Run) -> Text | None:
    pair = fr.sweep_pair(session, run)
    if pair is None or not pair.complete:
        return None
    return Text(
        pair.verdict,
        style="bold",
    )


def cache_lines(run: Run) -> list[Text]:
    """Each compile's cache layers and why it missed, where torch logged its lookups."""
    out = []
    for c in run.compiles.values():
        for line in fcm.cache_lines(run, c.compile_id):
            out.append(Text(f"[{c.compile_id}] {line}", style="dim"))
    note = fcm.folder_note(run)
    if note:
        out.append(Text(note, style="yellow"))
    return out


def restart_lines(run: Run) -> list[Text]:
    """One line per compile whose first attempt(s) Dynamo threw away."""
    out = []
    for c in run.compiles.values():
        r = fp.restarts(c)
        if r is not None:
            out.append(
                Text(
                    f"[{c.compile_id}] {fp.restarts_words(r.count, r.cost_s, r.reasons)}",
                    style="yellow",
                )
            )
    return out


def dynamic_lines(run: Run) -> list[Text]:
    """The dims made dynamic, and apart from them the scalars made symbols."""
    out = []
    dims = fr.dim_words(run)
    if dims:
        out.append(Text(f"{fr.DIMS_MADE_DYNAMIC}: " + ", ".join(dims), style="cyan"))
    scalars = fr.symbolic_scalars(run)
    if scalars:
        names = [fr.scalar_name(d.source) for d in scalars]
        out.append(Text(fr.scalars_made_symbols(names), style="dim"))
    return out


def graph_breaks_table(run: Run) -> Table:
    t = Table(title="Graph breaks", title_justify="left")
    t.add_column("id")
    t.add_column("location", overflow="fold")
    t.add_column("reason")
    t.add_column("compile")
    for b in fgb.breaks(run):
        where = " ".join(filter(None, (b.location, text.broke_inside(b.detail))))
        t.add_row(b.kind, where, b.reason, b.frames)
    t.caption = "by kind: " + "; ".join(k.words() for k in fgb.kinds([run]))
    t.caption_justify = "left"
    return t


def recompiles_table(run: Run) -> Table:
    t = Table(title="Recompiles (guard failures)", title_justify="left")
    for col in ("compile", "newest guard failure", "cost", "cumulative"):
        t.add_column(col)
    for row in fr.recompile_rows(run):
        t.add_row(
            row.compile_id or "?",
            str(fr.newest_reason(row.reason)),
            text.secs(row.cost_s, text.NOT_FINISHED),
            text.secs(row.cumulative_s),
        )
    return t


def hotspots_table(run: Run, limit: int = 10) -> Table | None:
    rows = fh.hot_rows(run, limit)
    if not rows:
        return None
    scope = fh.hot_scope(fh.shown_thread(run), fh.samples_shown(run))
    t = Table(title=f"Compiler hot frames (py-spy, {scope})", title_justify="left")
    for col in ("own", "total", "function", "where", "thread", "phase"):
        t.add_column(col, overflow="fold")
    for r in rows:
        t.add_row(
            text.pct(r.own),
            text.pct(r.total),
            Text(r.function, "yellow" if r.waiting else "dim" if r.program_work else ""),
            f"{r.file}:{r.line}",
            r.thread,
            r.phase or "(not compiling)",
        )
    others = fh.other_threads(run)
    if others:
        t.caption, t.caption_justify = fh.threads_not_shown(others), "left"
    return t


def run_summary(run: Run, session: Session) -> RenderableType:
    parts: list[RenderableType] = [Text(f"\n{run_label(run)} — {fout.status(run)}", style="bold")]
    if run.compile_raised is not None:
        parts.append(
            Text("\n".join(fout.raised_lines(run.compile_raised)), style="bold white on red")
        )
    if run.nothing_compiled is not None:
        e = run.nothing_compiled
        parts.append(
            Text("\n".join([fout.headline(e), *fout.hint_lines(e, run)]), style="bold white on red")
        )
    end = fout.end_line(run, session)
    if end is not None:
        parts.append(Text(end, style="bold red"))
    parts += [Text(line, style="cyan") for line in fddp.lines(run)]
    if run.compiles:
        parts.append(phases_table(run))
        parts += restart_lines(run)
        parts += cache_lines(run)
    if run.kernels:
        parts.append(FitOnTerminal(lambda fit: kernels_table(run, fit)))
    for mode_part in (autotune_table(run), cudagraphs_table(run)):
        if mode_part is not None:
            parts.append(mode_part)
    if run.graph_breaks:
        parts.append(graph_breaks_table(run))
    recompiles = recompiles_table(run)
    if recompiles.row_count:
        parts.append(recompiles)
    parts += dynamic_lines(run)
    if run.recompile_limit:
        parts.append(
            Text(
                f"RECOMPILE LIMIT HIT {fr.limit_line(run.recompile_limit)} ({fr.eager_cost(run)})",
                style="bold white on red",
            )
        )
    if run.benchmark is not None or not run.sweep:
        parts.append(benchmark_table(run, session))
    parts.append(Text(fo.line(run), style="dim"))
    if run.sweep:
        parts.append(sweep_table(run))
        verdict = sweep_verdict(session, run)
        if verdict is not None:
            parts.append(verdict)
    for extra in (device_table(run), hotspots_table(run)):
        if extra is not None:
            parts.append(extra)
    for name, status in fd.monitors(session, run).items():
        if not status.available:
            parts.append(Text(f"{name}: {text.na(status.message)}", style="yellow"))
    return Group(*parts)


def paper_line(event: ev.Event, session: Session) -> Text | None:
    """One progress line of ``dlcprof paper``, or None to stay quiet."""
    match event:
        case ev.PaperPlanned():
            return Text(
                fpa.paper_plan(
                    fpa.planned_runs(event), event.workloads, event.fresh, event.sweep, event.sizes
                ),
                style="bold",
            )
        case ev.RunStarted() if session.paper is not None:
            n = fpa.planned_runs(session.paper)
            i = len(fpa.paper_runs(session))
            return Text.assemble(
                ("▶ ", "bold green"), f"[{i}/{n}] ", fpa.step(session.run(event.run_id))
            )
        case ev.RunFinished() if event.status == "ok":
            return Text.assemble(("  ✓ ", "green"), fpa.outcome(session.run(event.run_id)))
        case ev.ShapeStepMeasured() | ev.ErrorRaised() | ev.RecompileLimitHit() | ev.WorkerExited():
            return live_line(event, session)
    return None


def attach_line(event: ev.Event, session: Session) -> Text | None:
    """A live line for ``dlcprof run -- CMD`` (on stderr: stdout is the program's)."""
    if getattr(event, "run_id", None) in session.eager_run_ids:
        return None  # --eager-baseline's run: compiles nothing, said once by cli/attach.py
    match event:
        case ev.ProcessAttached():
            return Text.assemble(("▶ compiling: ", "bold green"), session.run(event.run_id).name)
        case ev.ProgramExited():
            return Text(f"■ {event.message}", style="bold")
        case ev.KernelsProfiled():
            return None  # sent again as each graph's calls are sampled: the tables say it once
        case ev.ErrorRaised() if event.stage == "program":
            # Sent as the program's traceback is printed, so its line would land
            # inside it; the run's end line ("crashed: uncaught ...") says it after.
            return None
        case ev.RunFinished():
            ended = session.run(event.run_id)
            end = fout.end_line(ended, session) or fout.status(ended)
            return Text(
                f"■ {ended.name}: {end}", style="bold" if ended.status == "ok" else "bold red"
            )
        case (
            ev.PhaseEnded()
            | ev.CompileFinished()
            | ev.RecompileTriggered()
            | ev.GraphBroken()
            | ev.GraphSplitForDDP()
            | ev.NothingCompiled()
            | ev.CompileRaised()
            | ev.RecompileLimitHit()
            | ev.ErrorRaised()
        ):
            line = live_line(event, session)
            run = session.runs.get(getattr(event, "run_id", "") or "")
            many = sum(r.process is not None for r in session.runs.values()) > 1
            if line is None or run is None or not many:
                return line
            return Text.assemble((f"{run.name} ", "dim"), line)
    return live_line(event, session)


class DivergenceWatch:
    """Each divergence among the ranks, said once, the moment it appears: checked
    after each event that can settle one (a compile, a rank's end) and at most
    every ``every_s`` otherwise (the checks walk every rank's compiles)."""

    SETTLING = (ev.CompileFinished, ev.RunFinished, ev.ErrorRaised, ev.ProgramExited)

    def __init__(self, every_s: float = 0.5) -> None:
        self.every_s = every_s
        self.next_t = 0.0
        self.said: set[tuple[str, int, str]] = set()

    def lines(self, session: Session, now: float, event: ev.Event | None = None) -> list[Text]:
        if now < self.next_t and not isinstance(event, self.SETTLING):
            return []
        self.next_t = now + self.every_s
        new = [d for d in fdiv.divergences(session, now) if d.key not in self.said]
        self.said.update(d.key for d in new)
        return [divergence_text(d) for d in new]


def program_summary(session: Session) -> RenderableType:
    """After the program: each compiling process's tables, the ranks side by side,
    then the program in sentences."""
    parts: list[RenderableType] = [run_summary(r, session) for r in fprog.attached_runs(session)]
    ranks = rank_table(session)
    if ranks is not None:
        parts += [group_table(session) or Text(""), ranks, divergences_text(session)]
    parts += [Text(line) for line in fprog.program_lines(session) + fboot.boot_lines(session)]
    advised = fat.advised_run(session)
    if advised is not None:
        parts += [v for v in (compile_cost_view(advised),) if v is not None]
        parts.append(advice_view(session, advised))
    return Group(*parts)
