"""One run's section of a report: every table and figure it states."""

from __future__ import annotations

from dataclasses import field

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import compile_cost as fcc
from dlcprof.figures import device as fd
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import observer as fo
from dlcprof.figures import outcome as fout
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.figures import runs as fruns
from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job import program as fprog
from dlcprof.report import run_tables as rt
from dlcprof.report.advice import CompileCostSection, compile_cost_section
from dlcprof.report.benchmark import BenchmarkBlock, benchmark_block
from dlcprof.report.figure import Figure, Kpi, seconds, unknown
from dlcprof.report.monitors import DeviceSummary, Hotspots, Observer, device_summary, hotspot_table
from dlcprof.session import Run, Session
from dlcprof.settings import OPTIONS, repro_command


@data
class LimitAlert:
    limit: str
    function: str
    message: str  # shortened
    eager: str  # the calls that then ran eager, and what each cost
    line: str  # where, and what it means (figures.recompiles.limit_line)


@data
class DdpBlock:
    """What DDP did to a rank's compiles (figures/job/ddp.py)."""

    settings: ev.CompileSettingsRead | None  # read at its first compile; None: never compiled
    graphs: int  # Inductor graphs, each DDP piece counted
    splits: list[fddp.Split]
    lines: list[str]  # fddp.lines


def ddp_block(run: Run) -> DdpBlock | None:
    """None unless the process is a rank or DDP split its graph."""
    if not fddp.distributed(run):
        return None
    return DdpBlock(run.compile_settings, fddp.graphs(run), fddp.splits(run), fddp.lines(run))


# What a run's wall counts, by whose run it is: a workload's is the run itself.
_WALL_SINCE = {
    fruns.TEST: "the test, from its setup to its end",
    fruns.IMPORTED: "from the log's first record to its last",
    fruns.ATTACHED: "from torch's import in the process on",
    fruns.WORKLOAD: "",
}


@data
class RunModel:
    number: int
    run: Run
    name: str
    label: str
    status: str
    wall: Figure | None
    chips: list[tuple[str, str]]
    repro: str | None
    limit: LimitAlert | None
    kpis: list[Kpi]
    compile_wall: Figure
    phases: rt.PhaseTable | None
    compiles: list[rt.CompileRow]
    kernels: list[rt.KernelRow]
    kernels_why: str
    kernel_table: rt.KernelTable
    recompiles: list[rt.RecompileRow]
    dims: list[str]
    scalars: list[str]  # "zf0 = L['self'].p": scalars made symbols, apart from the dims
    sweep: rt.SweepTable | None
    benchmark: BenchmarkBlock | None
    benchmark_why: str
    benchmark_why_short: str
    warnings: list[ev.LogEmitted]
    device: DeviceSummary
    hotspots: Hotspots
    autotune: fm.Autotune
    cudagraphs: fm.Cudagraphs
    observer: Observer
    origin_t: float | None  # the run's start: the JSON states its compile phases from it
    sweep_total_s: float | None
    compile_cost: CompileCostSection | None  # by the user's functions and modules
    compile_cost_why: str | None  # why a run that compiled has none
    # An attached process: how it ended when not plainly, and what DDP did to its compiles.
    process_notes: list[str] = field(default_factory=list)
    # Its torch.compile calls, in the words of the Benchmark pane and the console.
    compiled_with: list[str] = field(default_factory=list)
    ddp: DdpBlock | None = None

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def mode_meaning(self) -> str:
        s = self.settings
        return f"{s.mode}: {fm.MODE_MEANINGS.get(s.mode, '')}" if s else ""

    @property
    def shows_autotune(self) -> bool:
        """The autotune section: in an autotuning mode, or when something was tuned."""
        s = self.settings
        return bool(self.autotune.ops) or (s is not None and s.mode in fm.AUTOTUNE_MODES)

    @property
    def shows_cudagraphs(self) -> bool:
        return self.cudagraphs.verdict != "off" or bool(self.cudagraphs.graphs)

    @property
    def target(self) -> str:
        return self.run.target

    @property
    def wall_since(self) -> str:
        """What the run's wall counts, where that is not the run itself: an
        attached process's clock starts as torch is imported in it."""
        return _WALL_SINCE[fruns.kind(self.run)]

    @property
    def description(self) -> str:
        return self.run.description

    @property
    def settings(self) -> ev.RunStarted | None:
        return self.run.settings

    @property
    def errors(self) -> list[ev.ErrorRaised]:
        return self.run.errors

    @property
    def nothing_compiled(self) -> list[str]:
        """A run that compiled nothing: the loud line, then torch's hints; else empty."""
        e = self.run.nothing_compiled
        return [fout.headline(e), *fout.hint_lines(e, self.run)] if e is not None else []

    @property
    def compile_raised(self) -> list[str]:
        """A compile that raised into the program: the loud line, then the fixes; else empty."""
        e = self.run.compile_raised
        return fout.raised_lines(e) if e is not None else []

    @property
    def graph_breaks(self) -> list[fgb.Break]:
        return fgb.breaks(self.run)

    @property
    def graph_break_kinds(self) -> list[fgb.Kind]:
        return fgb.kinds([self.run])

    @property
    def unavailable(self) -> dict[str, str]:
        return self.run.unavailable

    @property
    def scalars_text(self) -> str | None:
        names = [fr.scalar_name(d.source) for d in fr.symbolic_scalars(self.run)]
        return fr.scalars_made_symbols(names) if names else None

    @property
    def cpu_columns(self) -> list[str]:
        """The compiles table's CPU columns: none where no compile's CPU was measured."""
        return (
            [label.strip() for label, _ in fp.CPU_PARTS]
            if any(c.compile.cpu for c in self.compiles)
            else []
        )

    @property
    def cpu_note(self) -> str | None:
        return fp.cpu_note([c.compile for c in self.compiles]) if self.cpu_columns else None

    @property
    def restarted(self) -> list[rt.CompileRow]:
        return [c for c in self.compiles if c.restarts is not None]

    def summary_row(self) -> list[str]:
        """The run's line in the runs table (SUMMARY_COLUMNS)."""
        b = self.benchmark
        why = text.na(self.benchmark_why_short)

        def setting(name: str) -> str:  # a run's own, or its torch.compile calls'
            value = fprog.compile_setting(self.run, name)
            return value or fprog.no_setting(self.run)

        return [
            str(self.number),
            self.name,
            setting("mode"),
            setting("dynamic"),
            self.status,
            self.compile_wall.text,
            fk.kernel_count(self.run).cell
            if "kernels" not in self.run.unavailable
            else text.na("not read"),
            str(len(self.run.recompiles)),
            str(len(self.graph_breaks)),
            b.speedup if b else why,
            b.steady_speedup if b else why,
            b.break_even if b else why,
        ]


def settings_chips(s: ev.RunStarted | None) -> list[tuple[str, str]]:
    """The resolved settings in a stable order: the options, then what the worker resolved."""
    if s is None:
        return []
    out = []
    for o in OPTIONS:
        out.append((o.name, text.value(getattr(s, o.name, None))))
        if o.name == "device":
            out.append(("device_name", text.value(s.device_name)))
    out.append(("torch_version", text.value(s.torch_version)))
    return out


def _compile_wall(run: Run) -> Figure:
    if not run.compiles:
        return unknown("no compile")
    if not any(c.finished for c in run.compiles.values()):
        return unknown(text.NOT_FINISHED)
    return seconds(run.compile_wall_s, text.NOT_FINISHED)


def kpi_line(run: Run) -> str:
    """What a run compiled in one line (an import says it of each process): its
    report's head tiles, "30.29 s compile wall, 5 compiles · 44 fused kernels, …
    · 4 recompiles · 0 graph breaks", with the compiles that failed."""
    if not run.compiles:
        return "no compile"
    tiles = [f"{k.value} {k.label}" for k in _kpis(run, _compile_wall(run), None, None)]
    failed = [c.record.fail_type for c in run.compiles.values() if c.record and c.record.fail_type]
    if failed:
        tiles[0] += f" ({len(failed)} failed: {', '.join(dict.fromkeys(failed))})"
    return " · ".join(tiles)


def _counted(words: str, tone: str = "") -> Kpi:
    """A count's tile from its words: "1,024 graph breaks" is "1,024" over "graph
    breaks", "1 recompile" is "1" over "recompile"."""
    value, label = words.split(" ", 1)
    return Kpi(value, label, tone)


def _kpis(
    run: Run, wall: Figure, bench: BenchmarkBlock | None, sweep: rt.SweepTable | None
) -> list[Kpi]:
    n = len(run.compiles)
    kernels = fk.kernel_count(run)
    items = [
        Kpi(wall.text, f"compile wall, {text.plural(n, 'compile')}", na=wall.na),
        _counted(kernels.words),
        _counted(
            text.plural(len(run.recompiles), "recompile"), "bad" if run.recompile_limit else ""
        ),
        _counted(
            text.plural(len(fgb.breaks(run)), "graph break"), "bad" if run.graph_breaks else ""
        ),
    ]
    if bench is not None:
        s = bench.speed
        tone = {fb.FASTER: "good", fb.SLOWER: "bad"}.get(s.verdict, "")
        label = f"speedup (eager ÷ compiled), {text.DEFAULT_ALLOC}"
        if not s.measurable:
            label += f", {text.NO_DIFFERENCE}"
        items.append(Kpi(fb.speedup_short(s), label, tone))
        items.append(
            Kpi(
                bench.break_even,
                "break-even",
                "bad" if s.verdict == fb.SLOWER else "",
                na=not s.measurable,
            )
        )
        a = bench.allocator
        label = f"speedup, {text.STEADY_ALLOC}"
        label += f", {fa.SENSITIVE}" if a.sensitive else ""
        items.append(Kpi(bench.steady_speedup, label, na=a.steady is None))
    if sweep is not None:
        items.append(
            Kpi(sweep.total.text, f"transition cost, {text.plural(len(sweep.steps), 'shape')}")
        )
    return items


def run_model(session: Session, run: Run, number: int | None = None) -> RunModel:
    number = number if number is not None else fruns.run_number(session, run)
    limit = run.recompile_limit
    wall = _compile_wall(run)
    bench = benchmark_block(run)
    sweep = rt.sweep_table(run)
    ktable = rt.kernel_table(run)
    ddp = ddp_block(run)
    return RunModel(
        number=number,
        run=run,
        name=run.name,
        label=fruns.run_label(run),
        status=fout.status(run),
        wall=seconds(run.wall_s, text.NOT_FINISHED) if run.wall_s is not None else None,
        chips=settings_chips(run.settings),
        repro=repro_command(run.settings) if run.settings else None,
        limit=LimitAlert(
            text.value(limit.limit),
            limit.function,
            text.short(limit.message, 240),
            fr.eager_cost(run),
            fr.limit_line(limit),
        )
        if limit
        else None,
        kpis=_kpis(run, wall, bench, sweep),
        compile_wall=wall,
        phases=rt.phase_table(run) if run.compiles else None,
        compiles=rt.compile_rows(run),
        kernels=ktable.rows,
        kernels_why=run.unavailable.get("kernels")
        or "none generated, or the kernel probe did not run",
        kernel_table=ktable,
        recompiles=rt.recompile_rows(run),
        dims=fr.dim_words(run),
        scalars=[f"{d.symbol} = {d.source}" for d in fr.symbolic_scalars(run)],
        sweep=sweep,
        benchmark=bench,
        benchmark_why=fb.why_none(run),
        benchmark_why_short=fb.why_none(run, short=True),
        compiled_with=fprog.compiled_with(run),
        warnings=[lg for lg in run.logs if lg.level in ("warning", "error")],
        device=device_summary(run.device_samples, fd.activity_spans(run), dict(run.monitors)),
        hotspots=hotspot_table(run),
        autotune=fm.autotune(run),
        cudagraphs=fm.cudagraphs(run),
        observer=Observer(fo.line(run), fo.observer(run)),
        origin_t=fruns.run_origin(run),
        sweep_total_s=fr.sweep_total(run),
        compile_cost=compile_cost_section(run),
        compile_cost_why=fcc.why_none(run),
        process_notes=[n for n in (fout.end_line(run, session),) if n] + (ddp.lines if ddp else []),
        ddp=ddp,
    )
