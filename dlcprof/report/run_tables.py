"""A run's tables as every report states them: compile phases, compiles,
fused kernels, recompiles and the shape sweep."""

from __future__ import annotations

from dataclasses import field

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import cache as fc
from dlcprof.figures import cache_misses as fcm
from dlcprof.figures import kernels as fk
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.report.figure import Figure, ReasonText, reason_text, seconds
from dlcprof.session import Compile, Run


@data
class PhaseRow:
    name: str
    depth: int
    pool: bool
    threads: int
    count: int
    total: str
    total_s: float
    share: float | None  # of the compile (see figures.phases.share_base)
    share_text: str
    stage: fp.Stage

    @property
    def label(self) -> str:
        """The phase's name; a pool-thread phase says it ran on the pool."""
        return f"{self.name} ({self.pool_note})" if self.pool else self.name

    @property
    def pool_note(self) -> str:
        return fp.pool_words(self.threads)


@data
class PhaseTable:
    base_s: float
    major: list[PhaseRow]
    minor: list[PhaseRow]  # folded: each under FOLD_SHARE of the compile (or FOLD_MIN_S)

    note = fp.SUMMED_NOTE

    @property
    def fold_note(self) -> str:
        return (
            f"{text.plural(len(self.minor), 'shorter phase')} "
            f"(each under {text.pct(fp.FOLD_SHARE)} of the compile)"
        )


def phase_table(run: Run) -> PhaseTable:
    tree = fp.phase_tree(run)
    base = fp.share_base(run, tree)
    major, minor = fp.split_minor(tree, base)

    def row(t: fp.PhaseTotal) -> PhaseRow:
        share = t.total_s / base if base > 0 else None
        return PhaseRow(
            t.name,
            t.depth,
            t.pool,
            t.threads,
            t.count,
            text.secs(t.total_s),
            t.total_s,
            share,
            text.pct(share, "no compile wall"),
            t.stage,
        )

    return PhaseTable(base, [row(t) for t in major], [row(t) for t in minor])


@data
class CompileRow:
    compile_id: str
    backward: bool
    wall: Figure
    cache: str
    ops: str
    guards: str
    kernels: int
    reason: ReasonText | None
    failure: str | None
    record: ev.CompileFinished | None
    compile: Compile
    phases: list[tuple[ev.PhaseEnded, int]]  # with their depth (figures.phases.nest_phases)
    cpu: list[str]  # figures.phases.CPU_PARTS ("n/a" each where not measured)
    restarts: fp.Restarts | None = None  # attempts Dynamo threw away
    cache_lines: list[str] = field(default_factory=list)  # its cache layers, why it missed

    @property
    def restarts_text(self) -> str | None:
        r = self.restarts
        return fp.restarts_words(r.count, r.cost_s, r.reasons) if r is not None else None


def compile_rows(run: Run) -> list[CompileRow]:
    out = []
    for c in run.compiles.values():
        rec = c.record
        failure = None
        if rec is not None and rec.fail_type:
            failure = f"{rec.fail_type}: {text.short(rec.fail_reason, 100)}"
        out.append(
            CompileRow(
                compile_id=c.compile_id,
                backward=c.is_backward,
                wall=seconds(c.wall_s, text.NOT_FINISHED),
                cache=fc.compile_cache(run, c) or text.NA,
                ops=text.value(rec.graph_op_count if rec else None),
                guards=text.value(rec.guard_count if rec else None),
                kernels=len(c.kernels),
                reason=reason_text(rec.recompile_reason if rec else None),
                failure=failure,
                record=rec,
                compile=c,
                phases=fp.nest_phases(c.phases),
                restarts=fp.restarts(c),
                cpu=fp.cpu_cells(c),
                cache_lines=fcm.cache_lines(run, c.compile_id),
            )
        )
    return out


@data
class SourceLine:
    location: str  # "file.py:13"
    code: str
    raw: str  # the whole "path/file.py:13 code" line


@data
class KernelRow:
    number: int
    kernel: ev.KernelGenerated
    compile_ids: list[str]
    ops: str  # fused ops, ", "-joined, or "—"
    sources: list[SourceLine]
    timing: fk.KernelTiming | None
    cells: fk.TimingCells  # the timing worded for the table ("n/a¹" with a footnote)

    @property
    def name(self) -> str:
        return self.kernel.name

    @property
    def compiles(self) -> str:
        return fk.compile_list(self.compile_ids)

    @property
    def source_lines(self) -> int:
        return len(self.kernel.source.splitlines())

    @property
    def lang(self) -> str:
        src = self.kernel.source
        return "cpp" if 'extern "C"' in src or "#include" in src else "python"


@data
class KernelTable:
    rows: list[KernelRow]  # slowest first once profiled
    summary: list[str]  # the profiling stage in sentences (figures.kernels.summary_lines)
    method: str | None  # how and when it measured
    notes: list[str]  # the reasons behind "n/a¹" cells
    profile: fk.ProfileSummary | None
    timings: dict[str, fk.KernelTiming]  # every kernel of the run, by kernel_key
    why: str  # why the run has no per-kernel figures (when ``profile`` is None)

    @property
    def columns(self) -> tuple[str, ...]:
        """The per-kernel figure columns; none when the run was not profiled
        (the summary says why once instead of a column of n/a)."""
        return fk.TIMING_COLUMNS if self.profile is not None else ()

    def cells(self, row: KernelRow) -> tuple[str, ...]:
        return row.cells.values() if self.columns else ()


def kernel_table(run: Run) -> KernelTable:
    timings = fk.kernel_timings(run)
    groups = fk.kernel_groups(run)
    by_kernel = {id(g.kernel): g for g in groups}
    group_t = {fk.kernel_key(g.kernel): fk.group_timing(g, timings) for g in groups}
    notes = text.Footnotes()
    rows = []
    for i, k in enumerate(fk.by_time([g.kernel for g in groups], group_t), 1):
        g = by_kernel[id(k)]
        t = group_t[fk.kernel_key(k)]
        sources = [SourceLine(*fk.source_line(line), line) for line in k.source_lines]
        rows.append(
            KernelRow(
                i,
                k,
                g.compile_ids,
                ", ".join(k.fused_ops) or "—",
                sources,
                t,
                fk.timing_cells(t, notes),
            )
        )
    summary = fk.summary_lines(run)
    method = summary.pop() if run.kernel_profile is not None else None
    return KernelTable(
        rows,
        summary,
        method,
        notes.lines(),
        fk.profile_summary(run),
        timings,
        fk.why_no_profile(run),
    )


@data
class RecompileRow:
    number: int
    compile_id: str | None
    reason: ReasonText
    cost: Figure
    cumulative: Figure
    row: fr.RecompileRow


def recompile_rows(run: Run) -> list[RecompileRow]:
    out = []
    for i, r in enumerate(fr.recompile_rows(run), 1):
        out.append(
            RecompileRow(
                i,
                r.compile_id,
                reason_text(r.reason) or ReasonText("", r.reason, "", ""),
                seconds(r.cost_s, "compile not finished"),
                seconds(r.cumulative_s, "compile not finished"),
                r,
            )
        )
    return out


@data
class SweepStep:
    size: int
    flag: str  # compiled | recompiled | reused | ran EAGER
    transition: str
    cumulative: str
    cumulative_s: float
    latency: str
    reason: ReasonText | None
    step: ev.ShapeStepMeasured


@data
class SweepTable:
    dynamic: str
    steps: list[SweepStep]
    total: Figure

    rough: bool = False  # latencies are medians of single calls (older reports)

    @property
    def summary(self) -> str:
        rough = f" Latencies marked ~ are {text.ROUGH}." if self.rough else ""
        return (
            f"Cumulative transition cost: {self.total.text} over "
            f"{text.plural(len(self.steps), 'shape')}.{rough}"
        )


def sweep_table(run: Run) -> SweepTable | None:
    if not run.sweep:
        return None
    steps = [
        SweepStep(
            st.size,
            fr.step_flag(i, st),
            text.secs(st.transition_s),
            text.secs(cum),
            cum,
            fr.latency(st.latency_ms, st.latency_spread_ms),
            reason_text(st.reason),
            st,
        )
        for i, (st, cum) in enumerate(zip(run.sweep, fr.cumulative(run), strict=True))
    ]
    return SweepTable(
        run.settings.dynamic if run.settings else text.NA,
        steps,
        seconds(fr.sweep_total(run), "no sweep step"),
        fr.rough_latency(run),
    )
