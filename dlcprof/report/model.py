"""The report model: everything a report states about a session, built once.

JSON (``schema``), HTML (``html``) and Markdown (``markdown``) render this one
model, so the three cannot disagree. Every number comes from
``dlcprof.figures`` and every word from ``dlcprof.text``; the renderers only
place them. A figure the session does not have is ``None`` with the reason
beside it, worded "n/a (why)".
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import platform
import weakref
from dataclasses import dataclass, field
from typing import Any

import dlcprof
from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import cache as fc
from dlcprof.figures import device as fd
from dlcprof.figures import hotspots as fh
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import observer as fo
from dlcprof.figures import outcome as fout
from dlcprof.figures import paper as fpa
from dlcprof.figures import phases as fp
from dlcprof.figures import recompiles as fr
from dlcprof.figures import runs as fruns
from dlcprof.session import Compile, Run, Session
from dlcprof.settings import OPTIONS, repro_command

# The runs table of the HTML and Markdown reports.
SUMMARY_COLUMNS = (
    "#",
    "workload",
    "mode",
    "dynamic",
    "status",
    "compile",
    "kernels",
    "recompiles",
    "graph breaks",
    "speedup",
    "steady alloc.",
    "break-even",
)
HOTSPOT_LIMIT = 20

# What a loaded report said about where it was recorded (platform, created,
# extra): the events do not carry it, and re-saving a loaded session on another
# machine must not claim that machine recorded it.
_ORIGINS: weakref.WeakKeyDictionary[Session, dict[str, Any]] = weakref.WeakKeyDictionary()


def report_origin(session: Session) -> dict[str, Any] | None:
    """The top-level fields of the report ``session`` was loaded from, if any."""
    return _ORIGINS.get(session)


def remember_origin(session: Session, fields: dict[str, Any]) -> None:
    _ORIGINS[session] = fields


def iso(t: float | None) -> str | None:
    """An event time as local ISO 8601, to the second."""
    if t is None:
        return None
    return (
        _dt.datetime.fromtimestamp(t, _dt.timezone.utc).astimezone().isoformat(timespec="seconds")
    )


@dataclass(frozen=True)
class Figure:
    """One figure as every format states it: the number (None when not known)
    and its words ("1.93 s", or "n/a (not finished)" with ``na`` set)."""

    value: float | None
    text: str
    na: bool = False

    def __str__(self) -> str:
        return self.text


def unknown(why: str) -> Figure:
    return Figure(None, text.na(why), True)


def seconds(x: float | None, why: str) -> Figure:
    """Seconds as every view words them; "n/a (why)" when not known."""
    return Figure(x, text.secs(x)) if x is not None else unknown(why)


# --- environment ----------------------------------------------------------------------


@dataclass(frozen=True)
class Row:
    label: str
    text: str
    na: bool = False


@dataclass
class Environment:
    values: dict[str, Any]  # raw, null when not known: the JSON report's "environment"
    rows: list[Row]  # worded, for people


def environment(session: Session) -> Environment:
    """Where the session ran: from the events, else from the loaded report."""
    origin = (report_origin(session) or {}).get("environment") or {}
    w = session.worker
    run = session.latest_run
    s = run.settings if run else None
    bench_run = fruns.latest_benchmarked(session)
    values: dict[str, Any] = {
        "torch": (w.torch_version if w else None) or (s.torch_version if s else None),
        "python": w.python_version if w else None,
        "device": s.device if s else None,
        "device_name": (s.device_name if s else None) or (w.device_name if w else None),
        "cuda_available": w.cuda_available if w else None,
        "threads": s.threads if s else None,
        # Measured next to the benchmark: the load that could disturb it.
        "load_avg": list(bench_run.benchmark.load_avg)  # type: ignore[union-attr]
        if bench_run
        else None,
        "cpu_count": w.cpu_count if w else None,
        "platform": origin.get("platform") or platform.platform(),
    }
    for k, v in values.items():
        if v is None and origin.get(k) is not None:
            values[k] = origin[k]
    la = values["load_avg"]
    recorded = iso(fruns.session_origin(session))
    rows = [
        Row("torch", text.value(values["torch"]), values["torch"] is None),
        Row("python", values["python"] or text.na("no WorkerReady event"), not values["python"]),
        Row("device", f"{text.value(values['device'])} · {text.value(values['device_name'])}"),
        Row("threads", text.value(values["threads"]), values["threads"] is None),
        Row("cpu count", text.value(values["cpu_count"]), values["cpu_count"] is None),
        Row("load avg (1/5/15 min)", text.load_avg(la) if la else text.na("no benchmark ran"),
            not la),
        Row("platform", text.value(values["platform"])),
        Row("recorded", recorded or text.NA, recorded is None),
    ]  # fmt: skip
    return Environment(values, rows)


# --- one run --------------------------------------------------------------------------


@dataclass(frozen=True)
class Kpi:
    value: str
    label: str
    tone: str = ""  # "good" | "bad" | ""
    na: bool = False


@dataclass
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
        if not self.pool:
            return self.name
        many = f"s ×{self.threads}" if self.threads > 1 else ""
        return f"{self.name} (pool thread{many})"


@dataclass
class PhaseTable:
    base_s: float
    major: list[PhaseRow]
    minor: list[PhaseRow]  # folded: each under FOLD_SHARE of the compile (or FOLD_MIN_S)

    @property
    def fold_note(self) -> str:
        return (
            f"{text.plural(len(self.minor), 'shorter phase')} "
            f"(each under {text.pct(fp.FOLD_SHARE)} of the compile)"
        )


def _phase_table(run: Run) -> PhaseTable:
    tree = fp.phase_tree(run)
    base = fp.share_base(run, tree)
    major, minor = fp.split_minor(tree, base)

    def row(t: fp.PhaseTotal) -> PhaseRow:
        share = t.total_s / base if base > 0 else None
        return PhaseRow(
            t.name, t.depth, t.pool, t.threads, t.count, text.secs(t.total_s), t.total_s,
            share, text.pct(share, "no compile wall"), t.stage,
        )  # fmt: skip

    return PhaseTable(base, [row(t) for t in major], [row(t) for t in minor])


@dataclass
class ReasonText:
    """A guard-failure reason: the newest failed guard (as every view words
    it), and the whole of it for a hover or the JSON."""

    newest: str
    full: str
    guard: str  # the newest guard alone, to cut without losing ``at``
    at: str

    def __str__(self) -> str:
        return self.newest


def reason_text(reason: str | None) -> ReasonText | None:
    newest = fr.newest_reason(reason)
    return ReasonText(str(newest), reason or "", newest.guard, newest.at) if newest else None


@dataclass
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
    restarts: fp.Restarts | None = None  # attempts Dynamo threw away

    @property
    def restarts_text(self) -> str | None:
        r = self.restarts
        return text.restarts(r.count, r.cost_s, r.reasons) if r is not None else None


def _compile_rows(run: Run) -> list[CompileRow]:
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
                restarts=fp.restarts(c),
            )
        )
    return out


@dataclass
class SourceLine:
    location: str  # "file.py:13"
    code: str
    raw: str  # the whole "path/file.py:13 code" line


@dataclass
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


@dataclass
class KernelTable:
    rows: list[KernelRow]  # slowest first once profiled
    summary: list[str]  # the profiling stage in sentences (figures.kernels.summary_lines)
    method: str | None  # how and when it measured
    notes: list[str]  # the reasons behind "n/a¹" cells
    profile: fk.ProfileSummary | None
    timings: dict[str, fk.KernelTiming]  # every kernel of the run, by kernel_key

    @property
    def columns(self) -> tuple[str, ...]:
        """The per-kernel figure columns; none when the run was not profiled
        (the summary says why once instead of a column of n/a)."""
        return fk.TIMING_COLUMNS if self.profile is not None else ()

    def cells(self, row: KernelRow) -> tuple[str, ...]:
        return row.cells.values() if self.columns else ()


def _kernel_table(run: Run) -> KernelTable:
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
            KernelRow(i, k, g.compile_ids, ", ".join(k.fused_ops) or "—", sources, t,
                      fk.timing_cells(t, notes))
        )  # fmt: skip
    summary = fk.summary_lines(run)
    method = summary.pop() if run.kernel_profile is not None else None
    return KernelTable(rows, summary, method, notes.lines(), fk.profile_summary(run), timings)


@dataclass
class RecompileRow:
    number: int
    compile_id: str | None
    reason: ReasonText
    cost: Figure
    cumulative: Figure
    row: fr.RecompileRow


def _recompile_rows(run: Run) -> list[RecompileRow]:
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


@dataclass
class SweepStep:
    size: int
    flag: str  # compiled | recompiled | reused | ran EAGER
    transition: str
    cumulative: str
    cumulative_s: float
    latency: str
    reason: ReasonText | None
    step: ev.ShapeStepMeasured


@dataclass
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


def _sweep_table(run: Run) -> SweepTable | None:
    if not run.sweep:
        return None
    steps = [
        SweepStep(
            st.size, fr.step_flag(i, st), text.secs(st.transition_s), text.secs(cum), cum,
            text.latency(st.latency_ms, st.latency_spread_ms), reason_text(st.reason), st,
        )
        for i, (st, cum) in enumerate(zip(run.sweep, fr.cumulative(run), strict=True))
    ]  # fmt: skip
    return SweepTable(
        run.settings.dynamic if run.settings else text.NA,
        steps,
        seconds(fr.sweep_total(run), "no sweep step"),
        fr.rough_latency(run),
    )


@dataclass
class BenchmarkBlock:
    """Eager vs compiled, worded once for every format."""

    event: ev.BenchmarkMeasured
    speed: fb.Speed
    eager: str
    compiled: str
    eager_spread: str
    compiled_spread: str
    speedup: str  # "2.91x", or "1.00x (no measurable difference)"
    break_even: str  # "658 runs", "never (compiled is slower)", "n/a (no measurable difference)"
    compile: str
    measured: str  # how the numbers were taken
    sentence: str  # the verdict in a sentence
    tone: str  # "info" | "warn"
    # The headline beside the speedup with the allocator held steady (figures.allocator).
    allocator: fa.AllocatorContrast
    columns: list[str]
    rows: list[tuple[str, list[str]]]
    notes: list[str]

    @property
    def verdict(self) -> str:
        return self.speed.verdict

    @property
    def steady_speedup(self) -> str:
        """The steady figure in a narrow cell."""
        s = self.allocator.steady
        return fb.speedup_short(s) if s is not None else text.na(self.allocator.steady_why)


def _benchmark(run: Run) -> BenchmarkBlock | None:
    b = run.benchmark
    if b is None:
        return None
    contrast = fa.contrast(run)
    assert contrast is not None
    s = contrast.default
    compile_s = s.compile_text
    if s.modes:
        sentence = (
            f"The repetitions split into two clusters, so both are stated: speedup "
            f"{fb.speedup_text(s)}; break-even {fb.break_even_text(s)}."
        )
        tone = "warn"
    elif s.verdict == fb.FASTER:
        sentence = (
            f"The {compile_s} compile pays for itself after "
            f"{text.break_even(s.break_even)} (compile seconds ÷ time saved per run, "
            f"{text.ms(s.eager_ms - s.compiled_ms)})."
        )
        tone = "info"
    elif s.verdict == fb.SLOWER:
        sentence = (
            f"Compiled is slower here ({text.ms(s.compiled_ms)} vs {text.ms(s.eager_ms)} eager): "
            f"the {compile_s} compile never pays for itself."
        )
        tone = "warn"
    else:
        sentence = (
            f"Eager and compiled differ by less than their measured spread: "
            f"{text.NO_DIFFERENCE}, so there is no break-even to state."
        )
        tone = "warn"
    return BenchmarkBlock(
        event=b,
        speed=s,
        eager=text.ms(s.eager_ms),
        compiled=text.ms(s.compiled_ms),
        eager_spread=text.ms(s.eager_spread_ms),
        compiled_spread=text.ms(s.compiled_spread_ms),
        speedup=fb.speedup_text(s),
        break_even=fb.break_even_text(s),
        compile=compile_s,
        measured=fb.measured_with(b),
        sentence=sentence,
        tone=tone,
        allocator=contrast,
        columns=fa.columns(),
        rows=fa.rows(contrast),
        notes=fa.notes(contrast, run),
    )


# --- device and hotspots ----------------------------------------------------------------


@dataclass
class MetricRow:
    key: str
    label: str
    stats: fd.MetricStats
    min: str
    mean: str
    max: str


@dataclass
class DeviceSummary:
    """What the device monitor saw, over a run or the whole session."""

    samples: list[ev.DeviceSampled]
    sources: list[str]
    duration_s: float
    series: dict[str, list[tuple[float, float]]]
    metrics: list[MetricRow]
    by_span: dict[str, dict[str, float | None]]  # figures.device.summarize
    monitors: dict[str, ev.MonitorStatus]

    @property
    def duration(self) -> str:
        return text.secs(self.duration_s)

    def span_rows(self) -> list[tuple[str, list[str]]]:
        """(metric label, "mean / max" per span) for the headline metrics."""
        seen = {k for s in self.samples for k in s.values}
        source = self.samples[-1].source if self.samples else ""
        keys = [k for k in fd.HEADLINE_KEYS.get(source, ()) if k in seen] or [
            m.key for m in self.metrics
        ]
        rows = []
        for key in keys:
            cells = []
            for row in self.by_span.values():
                mean, peak = row.get(f"{key}.mean"), row.get(f"{key}.max")
                cells.append(
                    text.NA
                    if mean is None
                    else f"{text.metric(key, mean)} / {text.metric(key, peak)}"
                )
            rows.append((text.metric_label(key), cells))
        return rows

    def to_json(self) -> dict[str, Any]:
        return {
            "by_span": self.by_span,
            "samples": len(self.samples),
            "sources": self.sources,
            "duration_s": self.duration_s,
            "metrics": {m.key: dataclasses.asdict(m.stats) for m in self.metrics},
            "monitors": {
                name: {"available": m.available, "message": m.message}
                for name, m in self.monitors.items()
            },
        }


def device_summary(
    samples: list[ev.DeviceSampled],
    spans: list[tuple[str, float, float]],
    monitors: dict[str, ev.MonitorStatus],
) -> DeviceSummary:
    series = fd.series(samples)
    metrics = []
    for key, pts in series.items():
        st = fd.stats(pts)
        metrics.append(
            MetricRow(
                key, text.metric_label(key), st, text.metric(key, st.min),
                text.metric(key, st.mean), text.metric(key, st.max),
            )
        )  # fmt: skip
    return DeviceSummary(
        samples=samples,
        sources=sorted({s.source for s in samples}),
        duration_s=(samples[-1].t - samples[0].t) if len(samples) > 1 else 0.0,
        series=series,
        metrics=metrics,
        # Samples share the event clock with the compile phases: "compile"
        # vs "after compile" (benchmark, sweep), pooled over runs.
        by_span=fd.summarize(samples, spans) if samples and spans else {},
        monitors=monitors,
    )


@dataclass
class HotspotRow:
    row: fh.HotRow
    own: str
    total: str

    @property
    def location(self) -> str:
        return f"{self.row.file}:{self.row.line}"

    @property
    def phase(self) -> str:
        return self.row.phase or "(not compiling)"


@dataclass
class Hotspots:
    samples: int  # of the thread shown (every tick when all are)
    rows: list[HotspotRow]
    why: str  # why there are none
    scope: str  # what the table covers (text.hot_scope)
    threads: dict[str, int]  # samples per thread
    others: str | None  # the threads left out (text.other_threads)

    def to_json(self, run_id: str | None = None) -> dict[str, Any]:
        rows = []
        for r in self.rows:
            h = r.row
            n = self.threads.get(h.thread, self.samples)
            rows.append(
                {
                    "function": h.function, "file": h.file, "line": h.line, "thread": h.thread,
                    "own": _count(h.own, n), "total": _count(h.total, n),
                    "own_share": h.own, "total_share": h.total, "phase": h.phase,
                }
            )  # fmt: skip
        out: dict[str, Any] = {"samples": self.samples, "rows": rows, "threads": self.threads}
        if run_id is not None:
            out["run_id"] = run_id
        return out


def _count(share: float | None, samples: int) -> int | None:
    return None if share is None else round(share * samples)


def _hotspots(run: Run) -> Hotspots:
    rows = [
        HotspotRow(r, text.pct(r.own), text.pct(r.total)) for r in fh.hot_rows(run, HOTSPOT_LIMIT)
    ]
    status = run.monitors.get("py-spy")
    why = fh.why_none(run) or (
        status.message if status and not status.available else "no py-spy samples in this run"
    )
    others = fh.other_threads(run)
    return Hotspots(
        samples=fh.samples_shown(run),
        rows=rows,
        why=why,
        scope=text.hot_scope(fh.shown_thread(run), fh.samples_shown(run)),
        threads=fh.thread_samples(run),
        others=text.other_threads(others) if others else None,
    )


@dataclass
class Observer:
    """What watched the run and what it cost (figures/observer.py)."""

    line: str
    figures: fo.Observer

    def to_json(self) -> dict[str, Any]:
        return {"line": self.line, **dataclasses.asdict(self.figures)}


# --- the run section ----------------------------------------------------------------------


@dataclass
class LimitAlert:
    limit: str
    function: str
    message: str  # shortened
    eager: str  # the calls that then ran eager


@dataclass
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
    phases: PhaseTable | None
    compiles: list[CompileRow]
    kernels: list[KernelRow]
    kernels_why: str
    kernel_table: KernelTable
    recompiles: list[RecompileRow]
    dims: list[str]
    scalars: list[str]  # "zf0 = L['self'].p": scalars made symbols, apart from the dims
    sweep: SweepTable | None
    benchmark: BenchmarkBlock | None
    benchmark_why: str
    benchmark_why_short: str
    warnings: list[ev.LogEmitted]
    device: DeviceSummary
    hotspots: Hotspots
    autotune: fm.Autotune
    cudagraphs: fm.Cudagraphs
    observer: Observer

    @property
    def run_id(self) -> str:
        return self.run.run_id

    @property
    def mode_meaning(self) -> str:
        s = self.settings
        return f"{s.mode}: {text.MODE_MEANINGS.get(s.mode, '')}" if s else ""

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
        return [fout.headline(e), *fout.hint_lines(e)] if e is not None else []

    @property
    def graph_breaks(self) -> list[ev.GraphBroken]:
        return self.run.graph_breaks

    @property
    def unavailable(self) -> dict[str, str]:
        return self.run.unavailable

    @property
    def scalars_text(self) -> str | None:
        names = [fr.scalar_name(d.source) for d in fr.symbolic_scalars(self.run)]
        return text.symbolic_scalars(names) if names else None

    @property
    def restarted(self) -> list[CompileRow]:
        return [c for c in self.compiles if c.restarts is not None]

    def summary_row(self) -> list[str]:
        """The run's line in the runs table (SUMMARY_COLUMNS)."""
        s = self.settings
        b = self.benchmark
        why = text.na(self.benchmark_why_short)
        return [
            str(self.number), self.name, s.mode if s else text.NA, s.dynamic if s else text.NA,
            self.status, self.compile_wall.text, str(len(self.run.kernels)),
            str(len(self.run.recompiles)), str(len(self.run.graph_breaks)),
            b.speedup if b else why, b.steady_speedup if b else why,
            b.break_even if b else why,
        ]  # fmt: skip


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


def _kpis(
    run: Run, wall: Figure, bench: BenchmarkBlock | None, sweep: SweepTable | None
) -> list[Kpi]:
    n = len(run.compiles)
    items = [
        Kpi(wall.text, f"compile wall, {text.plural(n, 'compile')}", na=wall.na),
        Kpi(str(len(run.kernels)), "fused kernels"),
        Kpi(str(len(run.recompiles)), "recompiles", "bad" if run.recompile_limit else ""),
        Kpi(str(len(run.graph_breaks)), "graph breaks", "bad" if run.graph_breaks else ""),
    ]
    if bench is not None:
        s = bench.speed
        tone = {fb.FASTER: "good", fb.SLOWER: "bad"}.get(s.verdict, "")
        label = f"speedup (eager ÷ compiled), {text.DEFAULT_ALLOC}"
        if not s.measurable:
            label += f", {text.NO_DIFFERENCE}"
        items.append(Kpi(fb.speedup_short(s), label, tone))
        items.append(
            Kpi(bench.break_even, "break-even", "bad" if s.verdict == fb.SLOWER else "",
                na=not s.measurable)
        )  # fmt: skip
        a = bench.allocator
        label = f"speedup, {text.STEADY_ALLOC}"
        label += f", {text.ALLOC_SENSITIVE}" if a.sensitive else ""
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
    bench = _benchmark(run)
    sweep = _sweep_table(run)
    ktable = _kernel_table(run)
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
            text.eager_calls(run.eager_calls),
        )
        if limit
        else None,
        kpis=_kpis(run, wall, bench, sweep),
        compile_wall=wall,
        phases=_phase_table(run) if run.compiles else None,
        compiles=_compile_rows(run),
        kernels=ktable.rows,
        kernels_why=run.unavailable.get("kernels")
        or "none generated, or the kernel probe did not run",
        kernel_table=ktable,
        recompiles=_recompile_rows(run),
        dims=[f"{d.symbol} = {d.source}" for d in fr.unique_dims(run)],
        scalars=[f"{d.symbol} = {d.source}" for d in fr.symbolic_scalars(run)],
        sweep=sweep,
        benchmark=bench,
        benchmark_why=fb.why_none(run),
        benchmark_why_short=fb.why_none(run, short=True),
        warnings=[lg for lg in run.logs if lg.level in ("warning", "error")],
        device=device_summary(run.device_samples, fd.activity_spans(run), dict(run.monitors)),
        hotspots=_hotspots(run),
        autotune=fm.autotune(run),
        cudagraphs=fm.cudagraphs(run),
        observer=Observer(fo.line(run), fo.observer(run)),
    )


# --- the session ------------------------------------------------------------------------


@dataclass
class SweepContrast:
    """Static vs dynamic shapes over one target (the paper's finding 3)."""

    pair: fr.SweepPair
    verdict: str  # text.sweep_verdict

    @property
    def workload(self) -> str:
        return self.pair.workload

    def to_json(self) -> dict[str, Any]:
        p = self.pair
        return {
            "target": p.target,
            "workload": p.workload,
            "static_run_id": p.static.run_id if p.static else None,
            "dynamic_run_id": p.dynamic.run_id if p.dynamic else None,
            "static_s": p.static_s,
            "dynamic_s": p.dynamic_s,
            "reduction": p.reduction,
            "steady": list(p.steady) if p.steady else None,
            "verdict": self.verdict,
        }


@dataclass
class PaperSection:
    """The paper's findings beside this machine's, for a session ``dlcprof paper`` made."""

    findings: fpa.Findings
    summary: list[tuple[str, str, str]]  # (finding, paper, measured here)
    workloads: list[list[str]]  # cells in text.WORKLOAD_COLUMNS order
    notes: list[str]

    def to_json(self) -> dict[str, Any]:
        f = self.findings
        p = f.plan
        return {
            "plan": {"workloads": p.workloads, "fresh": p.fresh, "sweep": p.sweep,
                     "sizes": p.sizes, "quick": p.quick, "size": p.size, "device": p.device},
            "findings": [dict(zip(("finding", "paper", "measured"), row, strict=True))
                         for row in self.summary],
            "workloads": [fpa.workload_json(w) for w in f.workloads],
            "sweep": {"static_s": f.sweep.static_s, "dynamic_s": f.sweep.dynamic_s,
                      "reduction": f.sweep.reduction,
                      "steady": list(f.sweep.steady) if f.sweep.steady else None},
        }  # fmt: skip


def paper_section(session: Session) -> PaperSection | None:
    f = fpa.findings(session)
    if f is None:
        return None
    return PaperSection(f, fpa.summary_rows(f), fpa.workload_rows(f), fpa.notes(f))


@dataclass
class SessionError:
    stage: str
    message: str


@dataclass
class Report:
    """One session, as every report format states it."""

    session: Session
    title: str
    version: str
    recorded: str | None
    origin_t: float | None
    environment: Environment
    runs: list[RunModel]
    sweep_runs: list[RunModel]  # every swept run, for the combined chart
    sweeps: list[SweepContrast]  # complete static/dynamic pairs
    modes: list[fm.ModeTable]  # a workload run in two or more modes, side by side
    device: DeviceSummary
    monitors: dict[str, ev.MonitorStatus]
    errors: list[SessionError] = field(default_factory=list)
    paper: PaperSection | None = None  # a session `dlcprof paper` made

    @property
    def hotspot_runs(self) -> list[RunModel]:
        return [r for r in self.runs if r.hotspots.rows]

    @property
    def hotspots_why(self) -> str:
        status = self.monitors.get("py-spy")
        if status is not None and not status.available:
            return status.message
        whys = {r.hotspots.why for r in self.runs}
        return whys.pop() if len(whys) == 1 else "no py-spy samples in this session"

    @property
    def subtitle(self) -> str:
        return f"{text.plural(len(self.runs), 'run')} · recorded {self.recorded or text.NA}"


def build(session: Session) -> Report:
    """The report model of ``session``."""
    runs = [run_model(session, r, i) for i, r in enumerate(session.runs.values(), 1)]
    swept = [rm for rm in runs if rm.run.sweep]
    sweeps = [
        SweepContrast(p, p.verdict)
        for p in fr.sweep_pairs(session)
        if p.complete
    ]
    spans = [span for r in session.runs.values() for span in fd.activity_spans(r)]
    monitors = fd.monitors(session)
    errors = [SessionError(e.stage, e.message) for e in session.errors]
    errors += [
        SessionError("worker exited", x.message)
        for x in session.worker_exits
        if x.returncode not in (0, None) or x.signal
    ]
    origin_t = fruns.session_origin(session)
    return Report(
        session=session,
        title=fruns.workload_title(session),
        version=dlcprof.__version__,
        recorded=iso(origin_t),
        origin_t=origin_t,
        environment=environment(session),
        runs=runs,
        sweep_runs=swept,
        sweeps=sweeps,
        modes=fm.mode_tables(session),
        device=device_summary(session.all_device_samples(), spans, monitors),
        monitors=monitors,
        errors=errors,
        paper=paper_section(session),
    )
