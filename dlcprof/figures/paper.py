"""The findings of arXiv 2611.04273 (TorchInductor on an RTX A6000), measured
from the runs ``dlcprof paper`` made (``Session.paper`` names them).

1. Graph optimization: the speedup of each workload (both allocator figures,
   with the noise verdict), the best, and which gained little and why, judged
   from the kernels each compiled: library GEMMs/convolutions holding the time
   (GEMM-bound), many ops of microseconds each (overhead-bound), else
   fusion-friendly.
2. Compilation overhead: compile seconds on the warm cache and on a fresh one,
   and the runs each takes to pay for itself (break-even).
3. Dynamic shapes: the cumulative cost of shape transitions, static vs dynamic
   (``figures.recompiles.SweepPair``), and dynamic's steady-state cost.

Per-kernel times (a profiling stage's ``KernelsProfiled``) sharpen finding 1
where a run has them: the library kernels' share of the time instead of their
count, and the fusion gain; without them those read n/a with the reason.
"""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import kernels as fk
from dlcprof.figures import recompiles as fr
from dlcprof.session import Run, Session

FUSION_FRIENDLY, GEMM_BOUND, OVERHEAD_BOUND = (
    text.FUSION_FRIENDLY, text.GEMM_BOUND, text.OVERHEAD_BOUND
)
# Eager time per graph op under which the fixed cost of dispatching it (5-10 µs
# on a CPU, a kernel launch on a GPU) is a large part of it: tiny-ops measured
# 9-17 µs per op on 2 cores (quiet and loaded), the other bundled workloads
# 250 µs and more at their default sizes.
OVERHEAD_US_PER_OP = 30.0
# Library kernels (GEMMs, convolutions: extern calls and GEMM templates) holding
# half the kernel time make a graph GEMM-bound: Inductor calls the library eager
# calls, so there is little left to fuse. Without per-kernel times, a third of
# the kernels: one GEMM or convolution does far more arithmetic than a fused
# pointwise kernel beside it.
LIBRARY_TIME_SHARE = 0.5
LIBRARY_COUNT_SHARE = 1 / 3
LIBRARY_KINDS = ("extern", "template")
# A speedup under this "gained little".
LITTLE = 1.5
NO_KERNEL_TIMES = "not profiled"
NO_FUSED_KERNEL = "no fused kernel"


@dataclass(frozen=True)
class Character:
    """What kind of graph a workload is, and the evidence."""

    kind: str  # FUSION_FRIENDLY | GEMM_BOUND | OVERHEAD_BOUND
    evidence: str


@dataclass(frozen=True)
class KernelTimes:
    """Per-kernel times of a run, summed by kind of kernel (ms per compiled call)."""

    library_ms: float
    fused_ms: float
    fused_eager_ms: float | None  # the eager ops the fused kernels replaced
    eager_why: str | None = None  # why fused_eager_ms is None

    @property
    def library_share(self) -> float | None:
        total = self.library_ms + self.fused_ms
        return self.library_ms / total if total > 0 else None

    @property
    def fusion_gain(self) -> float | None:
        """Eager time of the fused ops over the time of the kernels that fused them."""
        if self.fused_eager_ms is None or self.fused_ms <= 0:
            return None
        return self.fused_eager_ms / self.fused_ms

    @property
    def gain_why(self) -> str | None:
        """Why ``fusion_gain`` is None."""
        if self.fused_ms <= 0:
            return NO_FUSED_KERNEL
        return self.eager_why if self.fused_eager_ms is None else None


def is_library(k: ev.KernelGenerated) -> bool:
    return k.kind in LIBRARY_KINDS


def kernel_times(run: Run) -> KernelTimes | None:
    """The run's kernel time by kind; None without per-kernel times."""
    if run.kernel_profile is None:
        return None
    timings = fk.kernel_timings(run)
    library = fused = 0.0
    eager: float | None = 0.0
    why: str | None = None
    for k in run.kernels:
        t = timings[fk.kernel_key(k)]
        if t.time_ms is None:
            continue
        if is_library(k):
            library += t.time_ms
            continue
        fused += t.time_ms
        if t.eager_ms is None:
            why = why or t.reason("eager_ms")
        eager = None if eager is None or t.eager_ms is None else eager + t.eager_ms
    if library + fused <= 0:
        return None
    return KernelTimes(library, fused, eager, why)


def _graph_ops(run: Run) -> int:
    """Ops in the graphs the first call compiled (torch's graph_op_count)."""
    return sum(
        c.record.graph_op_count or 0
        for c in run.compiles.values()
        if c.record is not None and not c.record.is_backward
    )


def character(run: Run) -> Character | None:
    """GEMM-bound, overhead-bound or fusion-friendly, from the kernels the run
    compiled and its eager time per graph op; None before it has kernels."""
    kernels = run.kernels
    if not kernels:
        return None
    ops, b = _graph_ops(run), run.benchmark
    if ops and b is not None and b.eager_ms * 1e3 / ops < OVERHEAD_US_PER_OP:
        us = b.eager_ms * 1e3 / ops
        return Character(OVERHEAD_BOUND, text.overhead_evidence(ops, us, OVERHEAD_US_PER_OP))
    library = [k for k in kernels if is_library(k)]
    # "extern_kernels.addmm" -> "addmm", "torch.ops.aten.x.default" -> "x"
    names = text.kernels_count([k.name.removesuffix(".default").rsplit(".", 1)[-1]
                                for k in library])  # fmt: skip
    times = kernel_times(run)
    time_share = times.library_share if times is not None else None
    if time_share is not None:
        gemm_bound = time_share >= LIBRARY_TIME_SHARE
    else:
        gemm_bound = len(library) >= LIBRARY_COUNT_SHARE * len(kernels)
    if library and gemm_bound:
        return Character(
            GEMM_BOUND, text.library_evidence(len(library), len(kernels), names, time_share)
        )
    fused = len(kernels) - len(library)
    return Character(FUSION_FRIENDLY, text.fusion_evidence(ops, fused, len(library)))


# --- the runs of a paper session ---------------------------------------------------


def _after(plan: ev.PaperPlanned, runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.started_t is not None and r.started_t >= plan.t]


def paper_runs(session: Session) -> list[Run]:
    """The runs made for the session's latest paper plan, in order."""
    plan = session.paper
    return _after(plan, list(session.runs.values())) if plan is not None else []


BENCHMARK, FRESH, SWEEP = "benchmark", "fresh", "sweep"


def role(run: Run) -> str | None:
    """What a paper run is for: the warm benchmark (findings 1 and 2), the
    compile on a fresh cache (finding 2), or a shape sweep (finding 3)."""
    s = run.settings
    if s is None:
        return None
    if s.sweep:
        return SWEEP
    return FRESH if s.cache == "fresh" else BENCHMARK


def _benchmarked(run: Run) -> bool:
    return role(run) == BENCHMARK


def _fresh(run: Run) -> bool:
    return role(run) == FRESH


def planned_runs(plan: ev.PaperPlanned) -> int:
    return len(plan.workloads) + len(plan.fresh) + 2


def step(run: Run) -> str:
    """What a paper run does, as its progress line says when it starts."""
    s = run.settings
    assert s is not None
    return text.paper_step(role(run) or "", run.name, s.dynamic, len(s.shapes) or None)


def outcome(run: Run) -> str:
    """What a paper run found, in its progress line when it finishes."""
    r = role(run)
    if r == SWEEP:
        done = run.sweep_done
        compiles = done.compiles if done else sum(st.recompiled for st in run.sweep)
        dynamic = run.settings.dynamic if run.settings else ""
        return text.sweep_outcome(run.name, dynamic, compiles, fr.sweep_total(run))
    a = fa.contrast(run)
    if a is None:
        return f"{run.name}: {text.na(fb.why_none(run))}"
    if r == FRESH:
        return text.fresh_outcome(run.name, a.default.compile_text)
    steady = _speedup_or_why(a.steady, a.steady_why)
    return text.benchmark_outcome(
        run.name, fb.speedup_text(a.default), steady, a.default.compile_text
    )


def _latest(runs: list[Run], target: str, role: Any) -> Run | None:
    return next((r for r in reversed(runs) if r.target == target and role(r)), None)


def _not_run(runs: list[Run]) -> str:
    """Why a planned run has no run in the session."""
    if any(r.live for r in runs):
        return "waiting its turn"
    ended = [r for r in runs if r.status in ("cancelled", "crashed")]
    return f"not run: the paper run {ended[-1].status}" if ended else "not run"


@dataclass(frozen=True)
class WorkloadFigures:
    """One workload's row: its warm benchmark and its compile on a fresh cache."""

    target: str
    run: Run | None  # benchmarked on the warm cache
    fresh_run: Run | None  # compiled on a fresh Inductor cache
    planned_fresh: bool
    why: str  # why the warm figures are n/a ("" when there are some)
    fresh_why: str
    contrast: fa.AllocatorContrast | None
    fresh: fb.Speed | None  # the warm benchmark, with the fresh compile's seconds
    character: Character | None
    times: KernelTimes | None

    @property
    def name(self) -> str:
        return self.run.name if self.run is not None else self.target

    @property
    def speed(self) -> fb.Speed | None:
        return self.contrast.default if self.contrast is not None else None


def _workload(target: str, runs: list[Run], planned_fresh: bool) -> WorkloadFigures:
    run = _latest(runs, target, _benchmarked)
    fresh_run = _latest(runs, target, _fresh)
    contrast = fa.contrast(run) if run is not None else None
    why = "" if contrast is not None else (
        fb.why_none(run, short=True) if run is not None else _not_run(runs)
    )
    fresh, fresh_why = None, ""
    fresh_b = fresh_run.benchmark if fresh_run is not None else None
    if not planned_fresh:
        fresh_why = "--quick"
    elif fresh_b is None:
        fresh_why = fb.why_none(fresh_run, short=True) if fresh_run else _not_run(runs)
    elif run is None or run.benchmark is None:
        fresh_why = why
    else:
        fresh = fb.speed(run.benchmark, fresh_b.compile_s, fb.compile_cache(fresh_run))
    return WorkloadFigures(
        target, run, fresh_run, planned_fresh, why, fresh_why, contrast, fresh,
        character(run) if run is not None else None,
        kernel_times(run) if run is not None else None,
    )  # fmt: skip


@dataclass(frozen=True)
class Findings:
    plan: ev.PaperPlanned
    workloads: list[WorkloadFigures]
    sweep: fr.SweepPair
    sweep_why: str  # why finding 3 is n/a ("" once both sweeps finished)

    @property
    def measured(self) -> list[WorkloadFigures]:
        return [w for w in self.workloads if w.speed is not None]

    @property
    def best(self) -> WorkloadFigures | None:
        """The largest speedup that is measurably one."""
        faster = [w for w in self.measured if w.speed and w.speed.verdict == fb.FASTER]
        return max(faster, key=lambda w: w.speed.speedup or 0.0, default=None)  # type: ignore[union-attr]

    @property
    def little(self) -> list[WorkloadFigures]:
        """Those that gained little: under LITTLE, or no measurable gain at all."""
        out = []
        for w in self.measured:
            s = w.speed
            assert s is not None
            if s.verdict != fb.FASTER or (s.speedup or 0.0) < LITTLE:
                out.append(w)
        return out


def findings(session: Session) -> Findings | None:
    """The paper's findings as the session measured them; None without a paper plan."""
    plan = session.paper
    if plan is None:
        return None
    runs = paper_runs(session)
    rows = [_workload(t, runs, t in plan.fresh) for t in plan.workloads]
    swept = [r for r in runs if r.target == plan.sweep and r.settings and r.settings.sweep]
    pair = fr.SweepPair(
        plan.sweep,
        next((r for r in reversed(swept) if fr.is_static(r)), None),
        next((r for r in reversed(swept) if fr.is_dynamic(r)), None),
    )
    return Findings(plan, rows, pair, _sweep_why(pair, runs))


def _sweep_why(pair: fr.SweepPair, runs: list[Run]) -> str:
    """Why finding 3 has no figure yet ("" once both sweeps finished)."""
    if pair.complete:
        return ""
    swept = [r for r in (pair.static, pair.dynamic) if r is not None]
    ended = [r for r in swept if not r.live and r.sweep_done is None]
    if ended:
        return text.sweep_ended(ended[0].settings.dynamic if ended[0].settings else "",
                                ended[0].status)  # fmt: skip
    return "sweeping" if any(r.live for r in swept) else _not_run(runs)


# --- the tables every view places ---------------------------------------------------


def _speedup_or_why(s: fb.Speed | None, why: str) -> str:
    return fb.speedup_text(s) if s is not None else text.na(why)


def _best(f: Findings) -> str:
    best = f.best
    if best is None:
        if f.measured:
            return text.NONE_FASTER
        return text.na(next((w.why for w in f.workloads if w.why), "no workload measured"))
    a = best.contrast
    assert a is not None
    return text.best_speedup(
        best.name, fb.speedup_text(a.default), _speedup_or_why(a.steady, a.steady_why)
    )


def _little(f: Findings) -> str:
    if not f.measured:
        return text.na("no workload measured")
    little = f.little
    if not little:
        return text.none_little(LITTLE)
    return "; ".join(
        text.gained_little(w.name, fb.speedup_text(w.speed), w.character.kind if w.character
                           else None)  # type: ignore[arg-type]
        for w in little
    )  # fmt: skip


def _break_evens(speeds: list[fb.Speed]) -> str:
    """The break-even runs of several workloads, as a span and a median."""
    # Repetitions in two clusters: each cluster's break-even is a true one.
    values = [m.break_even for s in speeds for m in s.modes or (s,) if m.break_even is not None]
    slower = sum(s.verdict == fb.SLOWER for s in speeds)
    if not values:
        return text.na("no workload measurably faster") if speeds else text.na("none measured")
    return text.break_even_span(min(values), statistics.median(values), max(values), slower,
                                len(speeds))  # fmt: skip


def _break_even_warm(f: Findings) -> str:
    return _break_evens([w.speed for w in f.measured if w.speed is not None])


def _break_even_fresh(f: Findings) -> str:
    fresh = [w for w in f.workloads if w.fresh is not None]
    if not fresh:
        planned = [w for w in f.workloads if w.planned_fresh]
        return text.na(planned[0].fresh_why if planned else "no fresh-cache compile planned")
    words = _break_evens([w.fresh for w in fresh if w.fresh is not None])
    if len(fresh) == 1:
        w = fresh[0]
        assert w.fresh is not None and w.speed is not None
        return text.fresh_compile(w.name, w.fresh.compile_text, w.speed.compile_text, words)
    return words


def _transitions(f: Findings) -> str:
    p = f.sweep
    if p.reduction is None:
        return text.na(f.sweep_why or "static transitions cost nothing")
    return text.transitions_change(
        text.change(-p.reduction), p.static_s, p.dynamic_s, len(p.sizes()), p.workload
    )


def _steady(f: Findings) -> str:
    p = f.sweep
    steady = p.steady
    if steady is None:
        return text.na(f.sweep_why or "no size swept both ways")
    size, s_ms, d_ms = steady
    ratio = d_ms / s_ms if s_ms > 0 else None
    return text.steady_cost(text.speedup(ratio), size, p.steady_differs)


def summary_rows(f: Findings) -> list[tuple[str, str, str]]:
    """(finding, the paper's figure, the figure measured here), for every view."""
    return [
        (text.FINDING_BEST, text.PAPER_BEST, _best(f)),
        (text.FINDING_LITTLE, text.PAPER_LITTLE, _little(f)),
        (text.FINDING_BREAK_EVEN, text.PAPER_BREAK_EVEN, _break_even_warm(f)),
        (text.FINDING_FRESH, text.PAPER_BREAK_EVEN, _break_even_fresh(f)),
        (text.FINDING_TRANSITIONS, text.PAPER_TRANSITIONS, _transitions(f)),
        (text.FINDING_STEADY, text.PAPER_STEADY, _steady(f)),
    ]


def workload_rows(f: Findings) -> list[list[str]]:
    """One row per planned workload, cells in text.WORKLOAD_COLUMNS order."""
    out = []
    for w in f.workloads:
        kind = w.character.kind if w.character else text.NA
        a = w.contrast
        if a is None:
            out.append([w.name, kind, text.na(w.why), *[text.NA] * 7])
            continue
        b = w.run.benchmark if w.run else None
        assert b is not None
        fresh = w.fresh
        gain = w.times.fusion_gain if w.times else None
        out.append([
            w.name, kind, f"{text.ms(b.eager_ms)} → {text.ms(b.compiled_ms)}",
            fb.speedup_text(a.default), _speedup_or_why(a.steady, a.steady_why),
            a.default.compile_text,
            fresh.compile_text if fresh else text.na(w.fresh_why),
            fb.break_even_text(a.default),
            fb.break_even_text(fresh) if fresh else text.na(w.fresh_why),
            text.speedup(gain, w.times.gain_why if w.times else NO_KERNEL_TIMES),
        ])  # fmt: skip
    return out


def notes(f: Findings) -> list[str]:
    """What the tables need said beside them: where it was measured, each
    workload's evidence, the sweep."""
    started = [r.settings for r in (w.run for w in f.workloads) if r and r.settings]
    out = [text.measured_on(started[0].device, started[0].device_name, started[0].threads,
                            started[0].torch_version)] if started else []  # fmt: skip
    out += [f"{w.name}: {w.character.kind}: {w.character.evidence}" for w in f.workloads
            if w.character is not None]  # fmt: skip
    if f.sweep.complete:
        out.append(f"{f.sweep.workload}: {f.sweep.verdict}")
    return out
