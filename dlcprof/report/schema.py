"""The JSON report: the raw event stream plus a summary. One idea, in one file
however long it grows: every JSON field's shape is here, read from the report
model (``dlcprof.report.model``) and nothing else; the model holds no JSON.

A report is self-describing (``"schema": "dlcprof.report/2"``). The summary is
for people and other tools; its reader (``dlcprof.report.load``) ignores it and
replays ``events``.
"""

from __future__ import annotations

import dataclasses
import datetime as _dt
import json
from collections.abc import Callable
from typing import Any

import dlcprof
from dlcprof import events as ev
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import boot as fboot
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import paper as fpa
from dlcprof.figures import phases as fp
from dlcprof.figures.job import program as fprog
from dlcprof.figures.job.steps import StepComparison
from dlcprof.report import model as rm
from dlcprof.report import shared_parts
from dlcprof.report.advice import AdviceSection, CompileCostSection
from dlcprof.report.benchmark import BenchmarkBlock
from dlcprof.report.figure import iso as _iso
from dlcprof.report.monitors import DeviceSummary, Hotspots, Observer
from dlcprof.report.program import Process, ProgramNode, ProgramSection
from dlcprof.report.ranks import RanksSection
from dlcprof.report.run import DdpBlock, RunModel
from dlcprof.report.run_tables import CompileRow, KernelTable
from dlcprof.trace_records import gb_catalogue

SCHEMA_PREFIX = "dlcprof.report/"
REPORT_VERSION = 2
REPORT_SCHEMA = f"{SCHEMA_PREFIX}{REPORT_VERSION}"


def _settings(s: ev.RunStarted | None) -> dict[str, Any]:
    """The settings the worker echoed, as they travelled (no event bookkeeping)."""
    if s is None:
        return {}
    return {k: v for k, v in dataclasses.asdict(s).items() if k not in ("t", "run_id")}


# Per-kernel figures in the JSON, as KernelTiming names them (None: see "why").
_TIMING_FIELDS = {
    "time_ms": "time_ms",
    "share": "share",
    "launches": "launches",
    "eager_ms": "eager_ms",
    "fusion_gain": "gain",
    "bytes": "bytes",
    "gbps": "gbps",
    "copy_bw_share": "bw_share",
}


def _timing_dict(t: fk.KernelTiming) -> dict[str, Any]:
    out: dict[str, Any] = {name: getattr(t, attr) for name, attr in _TIMING_FIELDS.items()}
    out["why"] = {
        name: t.reason(attr) or "not measured"
        for name, attr in _TIMING_FIELDS.items()
        if out[name] is None
    }
    return out


def _compile_dict(
    row: CompileRow, origin: float | None, timings: dict[str, fk.KernelTiming]
) -> dict[str, Any]:
    c, rec = row.compile, row.record
    base = origin or 0.0
    return {
        "compile_id": c.compile_id,
        "finished": c.finished,
        "wall_s": c.wall_s,
        "start_s": (c.start_t - origin) if c.start_t is not None and origin else None,
        "phases": [
            {
                "name": p.name,
                "start_s": p.start_t - base,
                "duration_s": p.duration_s,
                "depth": depth,
                "thread": p.thread,
                "cache_state": p.cache_state,
            }
            for p, depth in row.phases
        ],
        "kernels": [
            {
                "name": k.name,
                "kind": k.kind,
                "graph": k.graph,
                "fused_ops": list(k.fused_ops),
                "source": k.source,
                "source_lines": list(k.source_lines),
                "order": k.order,
            }
            | _timing_dict(timings[fk.kernel_key(k)])
            for k in sorted(c.kernels, key=lambda k: k.order)
        ],
        "recompile_reason": rec.recompile_reason if rec else None,
        "graph_breaks": [
            {
                "gb_id": g.gb_id or None,
                "link": g.link or None,
                "reason": g.reason,
                "location": g.location,
                "detail": g.detail,
                "hints": list(g.hints),
            }
            for g in c.graph_breaks
        ],
        "cache": c.cache,
        "restarts": _restarts_dict(row.restarts),
        "is_backward": c.is_backward,
        "fail_type": rec.fail_type if rec else None,
        "fail_reason": rec.fail_reason if rec else None,
        "graph_op_count": rec.graph_op_count if rec else None,
        "guard_count": rec.guard_count if rec else None,
        "metrics": dict(rec.metrics) if rec else {},
    }


def _restarts_dict(r: fp.Restarts | None) -> dict[str, Any] | None:
    if r is None:
        return None
    return {
        "count": r.count,
        "cost_s": r.cost_s,
        "attempts": [{"attempt": n, "duration_s": secs} for n, secs in r.attempts],
        "reasons": list(r.reasons),
    }


def _clusters(s: fb.Speed) -> dict[str, Any] | None:
    """Repetitions in two clusters: each side's clusters and the speedup of each pairing."""
    if not s.modes:
        return None

    def side(c: fb.Clusters | None) -> dict[str, Any] | None:
        if c is None:
            return None
        return {
            "fast_ms": c.fast_ms,
            "slow_ms": c.slow_ms,
            "fast_reps": list(c.fast),
            "slow_reps": list(c.slow),
        }

    return {
        "eager": side(s.eager_split),
        "compiled": side(s.compiled_split),
        "speedups": [m.speedup for m in s.modes],
        "break_even_runs": [m.break_even for m in s.modes],
    }


def _faults(f: fa.Faults) -> dict[str, float] | None:
    if f.eager is None or f.compiled is None:
        return None
    return {"eager": f.eager, "compiled": f.compiled}


def _steady_dict(a: fa.AllocatorContrast, st: ev.SteadyAllocatorMeasured | None) -> Any:
    s = a.steady
    if s is None or st is None:
        return None
    return {
        "eager_ms": s.eager_ms,
        "compiled_ms": s.compiled_ms,
        "speedup": s.one_speedup,
        "how": a.how,
        "verdict": s.verdict,
        "break_even_runs": s.break_even,
        "eager_spread_ms": s.eager_spread_ms,
        "compiled_spread_ms": s.compiled_spread_ms,
        "eager_reps_ms": list(st.eager_reps_ms),
        "compiled_reps_ms": list(st.compiled_reps_ms),
        "page_faults_per_call": _faults(a.steady_faults),
        "clusters": _clusters(s),
        "wall_s": st.wall_s,
    }


def _profiled(m: RunModel, bench: dict[str, Any] | None) -> dict[str, Any] | None:
    """The benchmark with the profiling stage's run-level figures beside it."""
    if bench is None:
        return None
    return bench | _profile_dict(m.kernel_table)


def _profile_dict(table: KernelTable) -> dict[str, Any]:
    """The profiling stage's run-level figures, null with a reason where not measured."""
    p = table.profile
    figures = {
        "kernel_coverage": p.coverage if p else None,
        "eager_coverage": p.eager_coverage if p else None,
        "copy_gbps": p.copy_gbps if p else None,
    }
    reasons = {
        "kernel_coverage": "no kernel was timed",
        "eager_coverage": (p.eager_why if p else None) or "no graph was replayed",
        "copy_gbps": (p.copy_why if p else None) or "not measured",
    }
    out: dict[str, Any] = dict(figures)
    out["why"] = {k: (reasons[k] if p else table.why) for k, v in figures.items() if v is None}
    out["profile"] = (
        {
            "method": p.method,
            "calls": p.calls,
            "wall_s": p.wall_s,
            "kernel_ms": p.kernel_ms,
            "compiled_ms": p.compiled_ms,
            "call_ms": p.call_ms,
            "eager_nodes_ms": p.eager_nodes_ms,
            "eager_kernels_ms": p.eager_kernels_ms,
            "eager_ms": p.eager_ms,
            "device_busy": p.device_busy,
            "notes": list(p.notes),
        }
        if p
        else None
    )
    return out


def benchmark_dict(block: BenchmarkBlock) -> dict[str, Any]:
    """A run's benchmark with its figures, as the JSON report and the trace carry it."""
    b, s = block.event, block.speed
    return {
        "eager_ms": b.eager_ms,
        "compiled_ms": b.compiled_ms,
        "speedup": s.one_speedup,
        "verdict": s.verdict,
        "compile_s": b.compile_s,
        "compile_cache": s.cache.state if s.cache else None,
        "break_even_runs": s.break_even,
        "eager_spread_ms": b.eager_spread_ms,
        "compiled_spread_ms": b.compiled_spread_ms,
        "reps": b.reps,
        "iters": b.iters,
        "warmup": b.warmup,
        "threads": b.threads,
        "load_avg": list(b.load_avg),
        "timer": b.timer,
    }


def _allocator_dict(
    block: BenchmarkBlock, steady: ev.SteadyAllocatorMeasured | None
) -> dict[str, Any]:
    """The benchmark's repetitions, page faults and the steady-allocator figures."""
    b, s, a = block.event, block.speed, block.allocator
    faults = _faults(a.faults)
    return {
        "eager_reps_ms": list(b.eager_reps_ms),
        "compiled_reps_ms": list(b.compiled_reps_ms),
        "clusters": _clusters(s),
        "allocator": b.allocator or None,
        "headline": block.headline,
        "page_faults_per_call": faults,
        "page_faults_why": None if faults else "not counted in this recording",
        "steady_allocator": _steady_dict(a, steady),
        "steady_allocator_why": a.steady_why or None,
        "allocator_sensitive": a.sensitive,
        "allocator_verdict": a.sentence,
    }


def _autotune_dict(a: fm.Autotune) -> dict[str, Any]:
    return {
        "ops": [
            {
                "op": op.op,
                "compile_id": op.event.compile_id,
                "shapes": list(op.event.shapes),
                "dtypes": list(op.event.dtypes),
                "choices": [dict(c) for c in op.event.choices],
                "winner": op.winner.name if op.winner else None,
                "precompile_s": op.event.precompile_s,
                "benchmark_s": op.event.benchmark_s,
                "cached": op.cached,
            }
            for op in a.ops
        ],
        "seconds": a.seconds,
        "runtime_triton_s": a.runtime_triton_s,
        "torch_compile_time_autotune_s": a.torch_seconds,
        "nothing_autotuned": a.why_none,
        "line": a.line,
    }


def _cudagraphs_dict(c: fm.Cudagraphs) -> dict[str, Any]:
    return {
        "verdict": c.verdict,
        "reason": c.reason,
        "graphs": [
            {
                "compile_id": g.event.compile_id,
                "graph": g.event.graph,
                "graphed": g.event.graphed,
                "torch_reason": g.event.reason,
                "recordings": g.recordings,
                "rerecordings": g.rerecordings,
                "replays": g.replays,
            }
            for g in c.graphs
        ],
        "runtime_skips": list(c.runtime_skips),
        "torch_skip_count": c.skips,
        "recordings": c.recordings,
        "rerecordings": c.rerecordings,
        "replays": c.replays,
        "line": c.line,
    }


def _modes_dict(t: fm.ModeTable) -> dict[str, Any]:
    rows = []
    for row in t.rows:
        s = row.speed
        rows.append(
            {
                "run_id": row.run.run_id,
                "mode": row.mode,
                "compile_s": row.compile_s,
                "autotune_s": row.autotune.seconds,
                "compiled_ms": s.compiled_ms if s else None,
                "speedup": s.one_speedup if s else None,
                "verdict": s.verdict if s else None,
                "break_even_runs": s.break_even if s else None,
                "kernels": row.kernels.fused,
                "cudagraphs": row.cudagraphs.verdict,
                "vs_default": list(row.vs_baseline) if row.vs_baseline else None,
                "words": dict(zip(fm.COLUMNS, row.words(), strict=True)),
            }
        )
    return {"workload": t.workload, "cache": t.cache, "rows": rows, "notes": t.notes}


def _program_dict(p: ProgramSection | None) -> dict[str, Any] | None:
    """An attached program (dlcprof -- CMD): its command, its end, and per
    compiling process the compile share of wall time and each graph's life."""
    if p is None:
        return None
    end, base = p.end, p.eager_baseline

    def span(s: fboot.Span) -> dict[str, Any]:
        return {
            "mark": s.mark,
            "seconds": s.seconds,
            "why": s.why or None,
            "pieces": [
                {"label": p.label, "seconds": p.seconds, "why": p.why or None} for p in s.pieces
            ],
        }

    def boot(b: fboot.Boot | None) -> dict[str, Any] | None:
        if b is None:
            return None
        return {
            "start": b.start,
            "first": span(b.first),
            "steady": span(b.steady),
            "saved_s": b.saved_s,
            "saved_why": b.saved_why or None,
        }

    def process(proc: Process) -> dict[str, Any]:
        t = proc.timeline
        return {
            "run_id": proc.run_id,
            "compile_s": t.compile_s,
            "compile_share": t.share,
            "first_call_waited_s": t.first_wait_s,
            "line": t.line,
            "graphs": [
                {
                    "compile_id": g.compile_id,
                    "calls": g.calls,
                    "inside_s": g.inside_s,
                    "per_call_s": g.per_call_s,
                    "compile_s": g.compile_s,
                    "amortized_s": g.amortized_s,
                    "sampled_calls": g.sampled,
                    "sampled_s": g.sampled_s,
                }
                for g in proc.lives
            ],
            "boot": boot(proc.boot),
            "kernel_sampling": {
                "calls": proc.sampling.calls,
                "seconds": proc.sampling.seconds,
                "extra_s": proc.sampling.extra_s,
                "line": proc.sampling.line,
            },
        }

    return {
        "argv": list(p.program.argv),
        "cwd": p.program.cwd,
        "pid": p.program.pid,
        "wall_s": p.wall_s,
        "returncode": end.returncode if end else None,
        "signal": end.signal if end else None,
        "stopped_by": end.stopped_by if end else None,
        "detached": end.detached if end else False,
        "processes": [process(proc) for proc in p.processes],
        "eager_baseline": (
            {
                "compiled_wall_s": base.compiled_s,
                "compile_s": base.compile_s,
                "eager_wall_s": base.eager_s,
                "eager_over_compiled": base.ratio,
                "per_step": base.step_line,
                "per_step_compiled_s": (
                    base.steps.compiled if isinstance(base.steps, StepComparison) else None
                ),
                "per_step_eager_s": (
                    base.steps.eager if isinstance(base.steps, StepComparison) else None
                ),
            }
            if base
            else None
        ),
        "lines": p.lines,
        "nodes": [_node_dict(n) for n in p.nodes],
    }


def _node_dict(p: ProgramNode) -> dict[str, Any]:
    """One node of a merged session (dlcprof merge): its origin, ranks, program and clock."""
    n = p.node
    m, start, end = n.merged, n.program, n.program_exit
    return {
        "node": m.node,
        "source": m.source,
        "hosts": list(m.hosts),
        "ranks": list(m.ranks),
        "run_ids": list(m.run_ids),
        "argv": list(start.argv) if start else None,
        "returncode": end.returncode if end else None,
        "wall_s": end.wall_s if end else None,
        "offset_s": m.offset_s,
        "clock_aligned": m.offset_s is not None,
        "clock": p.clock,
    }


def _ranks_dict(r: RanksSection) -> dict[str, Any]:
    """A multi-rank job: one row per rank, then each divergence found among them."""
    return {
        "rows": [dataclasses.asdict(row) for row in r.rows],
        "divergences": [
            {
                "check": d.check,
                "rank": d.rank,
                "alarm": d.alarm,
                "subject": d.subject,
                "t": d.t,
                "headline": d.headline,
                "evidence": d.evidence,
            }
            for d in r.divergences
        ],
        "summary": r.summary,
        "notes": r.notes,
        "groups": [
            {
                "ranks": g.ranks,
                "run_id": g.run_id,
                "differs": g.differs,
                "words": g.words,
                "signature": dataclasses.asdict(g.signature),
                "compile_s": [m.compile_s for m in g.members],
            }
            for g in r.groups
        ],
        "groups_summary": r.groups_summary,
        "graph_break_kinds": [_kind_dict(k) for k in r.break_kinds],
    }


def _kind_dict(k: fgb.Kind) -> dict[str, Any]:
    return {
        "gb_id": k.gb_id or None,
        "title": k.title,
        "link": k.link or None,
        "frames": k.frames,
        "lines": k.lines,
    }


def _event_fields(e: ev.Event) -> dict[str, Any]:
    """An event's own fields, without its time and run (the run's dict holds it)."""
    return {k: v for k, v in dataclasses.asdict(e).items() if k not in ("t", "run_id")}


def _process_dict(p: ev.ProcessAttached | None) -> dict[str, Any] | None:
    return _event_fields(p) if p is not None else None


def _nothing_compiled(m: RunModel) -> dict[str, Any] | None:
    """Null when a graph was compiled; else torch's refusal and the line every view shows."""
    e = m.run.nothing_compiled
    if e is None:
        return None
    headline, *lines = m.nothing_compiled
    return {
        "message": headline,
        "fail_type": e.fail_type,
        "fail_reason": e.fail_reason,
        "location": e.location,
        "hints": list(e.hints),
        "lines": lines,
        "frames": e.frames,
    }


def _compile_raised(m: RunModel) -> dict[str, Any] | None:
    """Null unless a compile raised into the program; else torch's error, where, the fixes."""
    e = m.run.compile_raised
    if e is None:
        return None
    headline, *fixes = m.compile_raised
    return {
        "message": headline,
        "error": e.error,
        "location": e.location,
        "inside": e.inside,
        "gb_id": e.gb_id,
        "link": gb_catalogue.link(e.gb_id),
        "fixes": fixes,
    }


def _ddp_dict(d: DdpBlock | None) -> dict[str, Any] | None:
    """Null unless the process is a rank or DDP split its graph (figures/job/ddp.py):
    the settings read at its first compile and each split with its piece count."""
    if d is None:
        return None
    s = d.settings
    return {
        "optimize_ddp": s.optimize_ddp if s else None,
        "compiled_autograd": s.compiled_autograd if s else None,
        "settings_unavailable": s.unavailable if s else "not read: the process never compiled",
        "inductor_graphs": d.graphs,
        "splits": [
            {
                "compile_id": sp.event.compile_id,
                "pieces": sp.pieces,
                "piece_names": list(sp.event.pieces),
                "forward_graphs": sp.event.forward_graphs,
                "backward_graphs": sp.backward_graphs,
                "bucket_cap_bytes": sp.event.bucket_cap_bytes,
                "bucket_bytes": list(sp.event.bucket_bytes),
                "line": sp.line,
            }
            for sp in d.splits
        ],
        "lines": d.lines,
    }


def _run_dict(m: RunModel) -> dict[str, Any]:
    run = m.run
    origin = m.origin_t
    s = run.settings
    limit = run.recompile_limit
    return {
        "run_id": run.run_id,
        "label": m.label,
        "status": run.status,
        "compile_raised": _compile_raised(m),
        "nothing_compiled": _nothing_compiled(m),
        "process_notes": list(m.process_notes),
        "ddp": _ddp_dict(m.ddp),
        # The first compile's time includes building it: null when no compile did.
        "precompiled_header_built": run.header_built.path if run.header_built else None,
        "workload": run.workload,
        "target": run.target,
        "description": run.description,
        "settings": _settings(s),
        "process": _process_dict(run.process),
        "mode": fprog.compile_setting(run, "mode"),
        "dynamic": fprog.compile_setting(run, "dynamic"),
        "backend": fprog.compile_setting(run, "backend"),
        "compile_calls": [_event_fields(c) for c in run.compile_calls],
        "started": _iso(run.started_t),
        "wall_s": run.wall_s,
        "compile_wall_s": run.compile_wall_s,
        "compiles": [_compile_dict(c, origin, m.kernel_table.timings) for c in m.compiles],
        "recompiles": [
            {
                "compile_id": r.row.compile_id,
                "reason": r.row.reason,
                "newest_reason": r.reason.newest,
                "cost_s": r.row.cost_s,
                "cumulative_s": r.row.cumulative_s,
            }
            for r in m.recompiles
        ],
        "graph_breaks": [
            {
                "compile_id": g.compile_id,
                "gb_id": g.gb_id or None,
                "link": g.link or None,
                "reason": g.reason,
                "location": g.location,
                "detail": g.detail,
            }
            for g in run.graph_breaks
        ],
        "graph_break_kinds": [_kind_dict(k) for k in fgb.kinds([run])],
        # Each compile attempt re-announces its symbols: list each once.
        "dynamic_dims": list(m.dims),
        "dynamic_scalars": list(m.scalars),
        "benchmark": _profiled(
            m,
            {**benchmark_dict(m.benchmark), **_allocator_dict(m.benchmark, run.steady)}
            if m.benchmark
            else None,
        ),
        "shape_sweep": [
            {k: v for k, v in dataclasses.asdict(st).items() if k not in ("t", "run_id")}
            | {"step": step.flag}
            for st, step in zip(run.sweep, m.sweep.steps if m.sweep else [], strict=True)
        ],
        "sweep_total_s": m.sweep_total_s,
        "recompile_limit_hit": (
            {
                "function": limit.function,
                "location": limit.location,
                "limit": limit.limit,
                "message": limit.message,
                "line": m.limit.line if m.limit else "",
                "eager_calls": run.eager_calls,
                "eager": m.limit.eager if m.limit else "",
            }
            if limit
            else None
        ),
        "errors": [
            {"stage": e.stage, "message": e.message, "traceback": e.traceback} for e in run.errors
        ],
        "warnings": [
            {"level": lg.level, "source": lg.source, "message": lg.message} for lg in m.warnings
        ],
        "unavailable": dict(run.unavailable),
        "device": _device_dict(m.device),
        "hotspots": _hotspots_dict(m.hotspots),
        "autotune": _autotune_dict(m.autotune),
        "cudagraphs": _cudagraphs_dict(m.cudagraphs),
        "observer": _observer_dict(m.observer),
        "compile_cost": _compile_cost_dict(m.compile_cost),
        "compile_cost_why": m.compile_cost_why,
    }


def _compile_cost_dict(section: CompileCostSection | None) -> dict[str, Any] | None:
    """Compile seconds by the user's functions and modules (figures/compile_cost.py)."""
    if section is None:
        return None
    cost = section.cost
    return {
        "dynamo_s": cost.dynamo_s,
        "traced_s": cost.traced_s,
        "guards_s": cost.guards_s,
        "lowering_s": cost.lowering_s,
        "lowered_s": cost.lowered_s,
        "probe_s": cost.own_s,
        "functions": [dataclasses.asdict(f) for f in cost.functions],
        "libraries": [dataclasses.asdict(lib) for lib in cost.libraries],
        "modules": [dataclasses.asdict(m) for m in cost.modules],
    }


def _advice_dict(a: AdviceSection | None) -> dict[str, Any] | None:
    """The advice for the latest advised run, and every `dlcprof try` of it (figures/advice/)."""
    if a is None:
        return None
    return {
        "run_id": a.run_id,
        "items": [{**dataclasses.asdict(i.advice), "predicted_text": i.predicted} for i in a.items],
        "nothing": a.advice.nothing,
        "hidden": a.advice.hidden,
        "tried": [
            {**ev.to_dict(t.event), "text": t.text, "prediction_error": t.prediction_error}
            for t in a.tried
        ],
    }


def _device_dict(d: DeviceSummary) -> dict[str, Any]:
    return {
        "by_span": d.by_span,
        "samples": len(d.samples),
        "sources": d.sources,
        "duration_s": d.duration_s,
        "metrics": {m.key: dataclasses.asdict(m.stats) for m in d.metrics},
        "monitors": {
            name: {"available": m.available, "message": m.message} for name, m in d.monitors.items()
        },
    }


def _count(share: float | None, samples: int) -> int | None:
    return None if share is None else round(share * samples)


def _hotspots_dict(h: Hotspots, run_id: str | None = None) -> dict[str, Any]:
    rows = []
    for r in h.rows:
        f = r.row
        n = h.threads.get(f.thread, h.samples)
        rows.append(
            {
                "function": f.function,
                "file": f.file,
                "line": f.line,
                "thread": f.thread,
                "own": _count(f.own, n),
                "total": _count(f.total, n),
                "own_share": f.own,
                "total_share": f.total,
                "phase": f.phase,
            }
        )
    out: dict[str, Any] = {"samples": h.samples, "rows": rows, "threads": h.threads}
    if run_id is not None:
        out["run_id"] = run_id
    return out


def _observer_dict(o: Observer) -> dict[str, Any]:
    return {"line": o.line, **dataclasses.asdict(o.figures)}


def _sweep_contrast_dict(c: rm.SweepContrast) -> dict[str, Any]:
    p = c.pair
    return {
        "target": p.target,
        "workload": p.workload,
        "static_run_id": p.static.run_id if p.static else None,
        "dynamic_run_id": p.dynamic.run_id if p.dynamic else None,
        "static_s": p.static_s,
        "dynamic_s": p.dynamic_s,
        "reduction": p.reduction,
        "steady": list(p.steady) if p.steady else None,
        "verdict": c.verdict,
    }


def _workload_dict(w: fpa.WorkloadFigures) -> dict[str, Any]:
    """One workload's figures as numbers (None where not measured)."""
    a, fresh = w.contrast, w.fresh
    return {
        "workload": w.name,
        "run_id": w.run.run_id if w.run else None,
        "fresh_run_id": w.fresh_run.run_id if w.fresh_run else None,
        "graph": w.character.kind if w.character else None,
        "evidence": w.character.evidence if w.character else None,
        "speedup": a.default.speedup if a else None,
        "verdict": a.default.verdict if a else None,
        "steady_speedup": a.steady.speedup if a and a.steady else None,
        "compile_s": a.default.compile_s if a else None,
        "fresh_compile_s": fresh.compile_s if fresh else None,
        "break_even_runs": a.default.break_even if a else None,
        "fresh_break_even_runs": fresh.break_even if fresh else None,
        "fusion_gain": w.times.fusion_gain if w.times else None,
        "why": w.why or None,
    }


def _paper_dict(p: rm.PaperSection) -> dict[str, Any]:
    f = p.findings
    plan = f.plan
    return {
        "plan": {
            "workloads": plan.workloads,
            "fresh": plan.fresh,
            "sweep": plan.sweep,
            "sizes": plan.sizes,
            "quick": plan.quick,
            "size": plan.size,
            "device": plan.device,
        },
        "findings": [
            dict(zip(("finding", "paper", "measured"), row, strict=True)) for row in p.summary
        ],
        "workloads": [_workload_dict(w) for w in f.workloads],
        "sweep": {
            "static_s": f.sweep.static_s,
            "dynamic_s": f.sweep.dynamic_s,
            "reduction": f.sweep.reduction,
            "steady": list(f.sweep.steady) if f.sweep.steady else None,
        },
    }


def build_report(model: rm.Report, extra: dict[str, Any] | None = None) -> dict[str, Any]:
    """The JSON-ready report of a session's model (see docs/report-schema.md)."""
    session = model.session
    latest = session.latest_run
    origin = session.provenance or {}
    merged_extra = {**(origin.get("extra") or {}), **(extra or {})}
    hot = next((r for r in reversed(model.runs) if r.hotspots.rows), None)
    return {
        "schema": REPORT_SCHEMA,
        "dlcprof_version": dlcprof.__version__,
        "created": _dt.datetime.now().astimezone().isoformat(timespec="seconds"),
        "recorded": model.recorded,
        "environment": model.environment.values,
        "workload": {
            "name": latest.workload if latest else "",
            "target": latest.target if latest else "",
        },
        "runs": [_run_dict(r) for r in model.runs],
        "program": _program_dict(model.program),
        # Only a job with ranks has the key: every other report stays as it was.
        **({"ranks": _ranks_dict(model.ranks)} if model.ranks is not None else {}),
        **({"imported": model.imported} if model.imported else {}),
        "sweeps": [_sweep_contrast_dict(c) for c in model.sweeps],
        "modes": [_modes_dict(t) for t in model.modes],
        "paper": _paper_dict(model.paper) if model.paper else None,
        "advice": _advice_dict(model.advice),
        "device": _device_dict(model.device),
        # The latest run's hot frames (each run carries its own under runs[].hotspots).
        "hotspots": _hotspots_dict(hot.hotspots, hot.run_id)
        if hot
        else {"samples": 0, "rows": [], "run_id": None},
        "errors": [
            {"stage": e.stage, "message": e.message, "traceback": e.traceback}
            for e in session.errors
        ],
        "worker_exits": [
            {"returncode": x.returncode, "signal": x.signal, "message": x.message}
            for x in session.worker_exits
        ],
        "extra": merged_extra,
        "events": shared_parts.share([ev.to_dict(e) for e in session.events]),
    }


def dumps_report(report: dict[str, Any]) -> str:
    """The summary indented for reading, then the events (most of a session's
    bytes) one to a line. Every line is written by json's C encoder: an indent
    runs its pure-Python one, four times slower on a summary of kernel tables."""
    # default=str: torch metrics may hold odd values; a report must always write.
    encode = json.JSONEncoder(default=str, ensure_ascii=False).encode
    head = {k: v for k, v in report.items() if k != "events"}
    text = _indented(head, "", encode)
    events = ",\n  ".join(map(encode, report.get("events", [])))
    body = f"[\n  {events}\n ]" if events else "[]"
    return f'{text.removesuffix("}").rstrip()},\n "events": {body}\n}}\n'


_NESTS = (dict, list, tuple)


def _indented(value: Any, pad: str, encode: Callable[[Any], str]) -> str:
    """``value`` as JSON, a level of indent a level of nesting, an array of
    objects one to a line, down to the objects that hold no nested ones (a
    kernel, a phase): each of those on one line."""
    inner = pad + " "
    if isinstance(value, list | tuple) and _nested(value):
        return "[\n" + ",\n".join(inner + _indented(v, inner, encode) for v in value) + f"\n{pad}]"
    # An object with keys json converts (not str) is left to its encoder whole.
    if (
        isinstance(value, dict)
        and any(_nested(v) for v in value.values())
        and all(isinstance(k, str) for k in value)
    ):
        lines = [f"{inner}{encode(k)}: {_indented(v, inner, encode)}" for k, v in value.items()]
        return "{\n" + ",\n".join(lines) + f"\n{pad}}}"
    return encode(value)


def _nested(value: Any) -> bool:
    """Whether ``value`` is an object or array that holds one."""
    if isinstance(value, dict):
        return any(isinstance(v, _NESTS) for v in value.values())
    return isinstance(value, list | tuple) and any(isinstance(v, _NESTS) for v in value)
