"""Rich renderings of a Session for the headless CLI: live lines and tables."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dlcprof import events as ev
from dlcprof.monitors.device import summarize
from dlcprof.report import fmt
from dlcprof.report import summary as sm
from dlcprof.session import KEY_PHASES, Run, Session

NA = fmt.NA


def fmt_s(x: float | None) -> str:
    return NA if x is None else f"{x:.3f} s" if x < 10 else f"{x:.1f} s"


def fmt_ms(x: float | None) -> str:
    return NA if x is None else f"{x:.3f} ms" if x < 10 else f"{x:.1f} ms"


def fmt_break_even(runs: float | None) -> str:
    return "never (compiled is not faster)" if runs is None else f"{runs:,.0f} runs"


def live_line(event: ev.Event, session: Session) -> Text | None:
    """One line for the headless live log, or None to stay quiet."""
    match event:
        case ev.RunStarted():
            return Text.assemble(
                ("▶ ", "bold green"),
                f"{event.workload} on {event.device} ({event.device_name}) · mode={event.mode} · "
                f"dynamic={event.dynamic} · backend={event.backend} · {event.dtype} · "
                f"size={event.size} · cache={event.cache} · threads={event.threads}",
            )
        case ev.PhaseEnded() if event.name in _LIVE_PHASES:
            cid = event.compile_id or session.run(event.run_id).last_compile_id or "?"
            return Text.assemble(
                ("  ", ""),
                (f"[{cid}] ", "cyan"),
                f"{event.name:<32}",
                (fmt_s(event.duration_s), "bold"),
            )
        case ev.CompileFinished():
            what = "backward compile" if event.is_backward else "compile"
            extra = f" · cache {event.cache}" if event.cache else ""
            return Text.assemble(
                ("  ✓ ", "green"), (f"[{event.compile_id}] ", "cyan"),
                f"{what} done in {fmt_s(event.wall_s)}{extra}",
            )  # fmt: skip
        case ev.RecompileTriggered():
            return Text.assemble(("  ↻ recompile: ", "bold yellow"), event.reason)
        case ev.RecompileLimitHit():
            return Text.assemble(("  ⚠ RECOMPILE LIMIT HIT: ", "bold white on red"), event.message)
        case ev.GraphBroken():
            return Text.assemble(
                ("  ✂ graph break: ", "bold magenta"), f"{event.reason} at {event.location}"
            )
        case ev.ShapeStepMeasured():
            flag = (
                "recompiled" if event.recompiled else ("ran eager" if event.ran_eager else "reused")
            )
            return Text(
                f"  size {event.size:>6}: {flag:<10} transition {fmt_s(event.transition_s)}, "
                f"steady {fmt_ms(event.latency_ms)}"
            )
        case ev.ErrorRaised():
            return Text.assemble(("✗ ", "bold red"), event.message)
        case ev.LogEmitted() if event.level in ("warning", "error") and event.source != "stderr":
            return Text.assemble(("  ! ", "yellow"), event.message)
        case ev.ProbeUnavailable():
            return Text.assemble(("  n/a ", "yellow"), f"{event.probe}: {event.reason}")
        case ev.MonitorStatus() if not event.available:
            return Text.assemble(("  · ", "dim"), event.message)
        case ev.WorkerExited() if event.returncode != 0:
            return Text.assemble(("✗ ", "bold red"), event.message)
    return None


_LIVE_PHASES = {name for _, name in KEY_PHASES if name != "compile_file"} | {"entire_frame_compile"}


def phases_table(run: Run) -> Table:
    t = Table(title="Compile phases (seconds) per compile id", title_justify="left")
    t.add_column("phase")
    ids = list(run.compiles)
    for cid in ids:
        c = run.compiles[cid]
        t.add_column(cid, justify="right")
    t.add_row("wall (torch compilation_metrics)", *(fmt_s(run.compiles[c].wall_s) for c in ids))
    for label, name in KEY_PHASES:
        cells = []
        for cid in ids:
            c = run.compiles[cid]
            secs = c.phase_seconds(name)
            n = c.phase_count(name)
            cells.append(NA if secs is None else fmt_s(secs) + (f" ×{n}" if n > 1 else ""))
        t.add_row(label, *cells)
    t.add_row("cache", *((run.compiles[c].cache or NA) for c in ids))
    return t


def kernels_table(run: Run) -> Table:
    t = Table(title="Fused kernels", title_justify="left")
    for col in ("compile", "kernel", "kind", "#ops", "fused ops"):
        t.add_column(col)
    for k in run.kernels:
        t.add_row(k.compile_id, k.name, k.kind, str(len(k.fused_ops)), ", ".join(k.fused_ops) or NA)
    return t


def benchmark_table(run: Run) -> Table:
    t = Table(title="Eager vs compiled", title_justify="left", show_header=False)
    t.add_column(style="bold")
    t.add_column(justify="right")
    b = run.benchmark
    if b is None:
        t.add_row("benchmark", "n/a (not measured in this run)")
        return t
    t.add_row("eager", f"{fmt_ms(b.eager_ms)} ± {b.eager_spread_ms:.3f} (IQR)")
    t.add_row("compiled", f"{fmt_ms(b.compiled_ms)} ± {b.compiled_spread_ms:.3f} (IQR)")
    t.add_row("speedup", NA if b.speedup is None else f"{b.speedup:.2f}x")
    t.add_row("compile time", fmt_s(b.compile_s))
    t.add_row("break-even", fmt_break_even(b.break_even_iters))
    t.add_row(
        "measured with",
        f"{b.reps} reps × {b.iters} calls, {b.warmup} warm-up, {b.threads} thread(s), "
        f"{b.timer}, load avg {' '.join(f'{x:.2f}' for x in b.load_avg)}",
    )
    return t


def sweep_table(run: Run) -> Table:
    t = Table(title="Shape sweep", title_justify="left")
    for col in ("size", "recompiled", "transition", "cumulative", "steady latency", "reason"):
        t.add_column(col)
    for step, cum in zip(run.sweep, run.cumulative_transition_s, strict=True):
        flag = "yes" if step.recompiled else ("EAGER" if step.ran_eager else "no")
        t.add_row(
            str(step.size), flag, fmt_s(step.transition_s), fmt_s(cum), fmt_ms(step.latency_ms),
            step.reason or "",
        )  # fmt: skip
    return t


def graph_breaks_table(run: Run) -> Table:
    t = Table(title="Graph breaks", title_justify="left")
    t.add_column("location")
    t.add_column("reason")
    for gb in run.graph_breaks:
        t.add_row(gb.location, gb.reason)
    return t


# What the headless summary shows of the device samples, by source.
_DEVICE_KEYS = {
    "nvml": ("gpu_util_pct", "mem_used_mb", "proc_mem_mb", "power_w"),
    "cpu": ("worker_cpu_pct", "children_cpu_pct", "cxx_compilers", "worker_rss_mb"),
}


def device_table(session: Session, run: Run) -> Table | None:
    """Mean / max of the device samples during compiles vs after them."""
    samples = [s for s in session.device_samples if run.started_t and s.t >= run.started_t]
    spans = run.activity_spans
    if not samples or not spans:
        return None
    source = samples[-1].source
    by_span = summarize(samples, spans)
    t = Table(title=f"Device ({source}) — mean / max per span", title_justify="left")
    t.add_column("metric")
    for name in by_span:
        t.add_column(f"{name} ({by_span[name]['samples']:.0f} samples)", justify="right")
    for key in _DEVICE_KEYS.get(source, ()):
        cells = []
        for row in by_span.values():
            mean, peak = row.get(f"{key}.mean"), row.get(f"{key}.max")
            cells.append(NA if mean is None else f"{mean:.1f} / {peak:.1f}")
        t.add_row(key, *cells)
    return t


def hotspots_table(session: Session, limit: int = 10) -> Table | None:
    hot = session.hot_frames
    if hot is None or not hot.rows:
        return None
    t = Table(title=f"Compiler hot frames (py-spy, {hot.samples} samples)", title_justify="left")
    for col in ("own", "total", "function", "where", "thread", "phase"):
        t.add_column(col)
    for r in sm.hotspot_rows(session, limit):
        t.add_row(
            fmt.pct(sm.hotspot_share(r["own"], hot.samples)),
            fmt.pct(sm.hotspot_share(r["total"], hot.samples)),
            str(r["function"]), f"{r['file']}:{r['line']}", str(r["thread"]),
            str(r["phase"] or "(not compiling)"),
        )  # fmt: skip
    return t


def run_summary(run: Run, session: Session) -> RenderableType:
    parts: list[RenderableType] = [Text(f"\n{run.label} — {run.status}", style="bold")]
    if run.compiles:
        parts.append(phases_table(run))
    if run.kernels:
        parts.append(kernels_table(run))
    if run.graph_breaks:
        parts.append(graph_breaks_table(run))
    if run.recompile_limit:
        parts.append(
            Text(f"RECOMPILE LIMIT HIT: {run.recompile_limit.message}", style="bold white on red")
        )
    if run.benchmark or run.settings.get("iters"):
        parts.append(benchmark_table(run))
    if run.sweep:
        parts.append(sweep_table(run))
    for extra in (device_table(session, run), hotspots_table(session)):
        if extra is not None:
            parts.append(extra)
    for name, status in session.monitors.items():
        if not status.available:
            parts.append(Text(f"{name}: n/a — {status.message}", style="yellow"))
    return Group(*parts)
