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

import math
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

# What kind of graph a workload is, judged from the kernels it compiled.
FUSION_FRIENDLY, GEMM_BOUND, OVERHEAD_BOUND = "fusion-friendly", "GEMM-bound", "overhead-bound"
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
        return Character(OVERHEAD_BOUND, overhead_evidence(ops, us, OVERHEAD_US_PER_OP))
    library = [k for k in kernels if is_library(k)]
    # "extern_kernels.addmm" -> "addmm", "torch.ops.aten.x.default" -> "x"
    names = kernels_count([k.name.removesuffix(".default").rsplit(".", 1)[-1] for k in library])
    times = kernel_times(run)
    time_share = times.library_share if times is not None else None
    if time_share is not None:
        gemm_bound = time_share >= LIBRARY_TIME_SHARE
    else:
        gemm_bound = len(library) >= LIBRARY_COUNT_SHARE * len(kernels)
    if library and gemm_bound:
        return Character(
            GEMM_BOUND, library_evidence(len(library), len(kernels), names, time_share)
        )
    fused = len(kernels) - len(library)
    return Character(FUSION_FRIENDLY, fusion_evidence(ops, fused, len(library)))


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
    return paper_step(role(run) or "", run.name, s.dynamic, len(s.shapes) or None)


def outcome(run: Run) -> str:
    """What a paper run found, in its progress line when it finishes."""
    r = role(run)
    if r == SWEEP:
        done = run.sweep_done
        compiles = done.compiles if done else sum(st.recompiled for st in run.sweep)
        dynamic = run.settings.dynamic if run.settings else ""
        return sweep_outcome(run.name, dynamic, compiles, fr.sweep_total(run))
    a = fa.contrast(run)
    if a is None:
        return f"{run.name}: {text.na(fb.why_none(run))}"
    if r == FRESH:
        return fresh_outcome(run.name, a.default.compile_text)
    steady = _speedup_or_why(a.steady, a.steady_why)
    return benchmark_outcome(run.name, fb.speedup_text(a.default), steady, a.default.compile_text)


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
    why = (
        ""
        if contrast is not None
        else (fb.why_none(run, short=True) if run is not None else _not_run(runs))
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
        target,
        run,
        fresh_run,
        planned_fresh,
        why,
        fresh_why,
        contrast,
        fresh,
        character(run) if run is not None else None,
        kernel_times(run) if run is not None else None,
    )


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
        return sweep_ended(ended[0].settings.dynamic if ended[0].settings else "", ended[0].status)
    return "sweeping" if any(r.live for r in swept) else _not_run(runs)


# --- the tables every view places ---------------------------------------------------


def _speedup_or_why(s: fb.Speed | None, why: str) -> str:
    return fb.speedup_text(s) if s is not None else text.na(why)


def _best(f: Findings) -> str:
    best = f.best
    if best is None:
        if f.measured:
            return NONE_FASTER
        return text.na(next((w.why for w in f.workloads if w.why), "no workload measured"))
    a = best.contrast
    assert a is not None
    return best_speedup(
        best.name, fb.speedup_text(a.default), _speedup_or_why(a.steady, a.steady_why)
    )


def _little(f: Findings) -> str:
    if not f.measured:
        return text.na("no workload measured")
    little = f.little
    if not little:
        return none_little(LITTLE)
    return "; ".join(
        gained_little(w.name, fb.speedup_text(w.speed), w.character.kind if w.character else None)  # type: ignore[arg-type]
        for w in little
    )


def _break_evens(speeds: list[fb.Speed]) -> str:
    """The break-even runs of several workloads, as a span and a median."""
    # Repetitions in two clusters: each cluster's break-even is a true one.
    values = [m.break_even for s in speeds for m in s.modes or (s,) if m.break_even is not None]
    slower = sum(s.verdict == fb.SLOWER for s in speeds)
    if not values:
        return text.na("no workload measurably faster") if speeds else text.na("none measured")
    return break_even_span(min(values), statistics.median(values), max(values), slower, len(speeds))


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
        return fresh_compile(w.name, w.fresh.compile_text, w.speed.compile_text, words)
    return words


def _transitions(f: Findings) -> str:
    p = f.sweep
    if p.reduction is None:
        return text.na(f.sweep_why or "static transitions cost nothing")
    return transitions_change(
        change(-p.reduction), p.static_s, p.dynamic_s, len(p.sizes()), p.workload
    )


def _steady(f: Findings) -> str:
    p = f.sweep
    steady = p.steady
    if steady is None:
        return text.na(f.sweep_why or "no size swept both ways")
    size, s_ms, d_ms = steady
    ratio = d_ms / s_ms if s_ms > 0 else None
    return steady_cost(text.speedup(ratio), size, p.steady_differs)


def summary_rows(f: Findings) -> list[tuple[str, str, str]]:
    """(finding, the paper's figure, the figure measured here), for every view."""
    return [
        (FINDING_BEST, PAPER_BEST, _best(f)),
        (FINDING_LITTLE, PAPER_LITTLE, _little(f)),
        (FINDING_BREAK_EVEN, PAPER_BREAK_EVEN, _break_even_warm(f)),
        (FINDING_FRESH, PAPER_BREAK_EVEN, _break_even_fresh(f)),
        (FINDING_TRANSITIONS, PAPER_TRANSITIONS, _transitions(f)),
        (FINDING_STEADY, PAPER_STEADY, _steady(f)),
    ]


def workload_rows(f: Findings) -> list[list[str]]:
    """One row per planned workload, cells in WORKLOAD_COLUMNS order."""
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
        out.append(
            [
                w.name,
                kind,
                f"{text.ms(b.eager_ms)} → {text.ms(b.compiled_ms)}",
                fb.speedup_text(a.default),
                _speedup_or_why(a.steady, a.steady_why),
                a.default.compile_text,
                fresh.compile_text if fresh else text.na(w.fresh_why),
                fb.break_even_text(a.default),
                fb.break_even_text(fresh) if fresh else text.na(w.fresh_why),
                text.speedup(gain, w.times.gain_why if w.times else NO_KERNEL_TIMES),
            ]
        )
    return out


def notes(f: Findings) -> list[str]:
    """What the tables need said beside them: where it was measured, each
    workload's evidence, the sweep."""
    started = [r.settings for r in (w.run for w in f.workloads) if r and r.settings]
    out = (
        [
            measured_on(
                started[0].device,
                started[0].device_name,
                started[0].threads,
                started[0].torch_version,
            )
        ]
        if started
        else []
    )
    out += [
        f"{w.name}: {w.character.kind}: {w.character.evidence}"
        for w in f.workloads
        if w.character is not None
    ]
    if f.sweep.complete:
        out.append(f"{f.sweep.workload}: {f.sweep.verdict}")
    return out


# --- the paper's words: arXiv 2611.04273 (TorchInductor on an RTX A6000) --------


PAPER = "arXiv 2611.04273"
PAPER_MACHINE = "TorchInductor on an RTX A6000"
# The findings, as the tables name them, and the paper's figure for each.
FINDING_BEST = "1. fusion: the best speedup"
FINDING_LITTLE = "1. fusion: gained little"
FINDING_BREAK_EVEN = "2. compile cost: break-even, warm cache"
FINDING_FRESH = "2. compile cost: break-even, fresh cache"
FINDING_TRANSITIONS = "3. dynamic shapes: shape-transition cost"
FINDING_STEADY = "3. dynamic shapes: steady-state latency"
PAPER_BEST = "up to 8.21x (fusion-friendly graphs)"
PAPER_LITTLE = f"little ({GEMM_BOUND} and {OVERHEAD_BOUND} graphs)"
PAPER_BREAK_EVEN = "thousands of runs"
PAPER_TRANSITIONS = "about −70% (dynamic vs static)"
PAPER_STEADY = "a modest slowdown"
PAPER_TITLE = f"The findings of {PAPER}, measured here"
PAPER_WORKLOADS = "Per workload"
PAPER_COLUMNS = ("finding", f"paper ({PAPER_MACHINE})", "measured here")
WORKLOAD_COLUMNS = (
    "workload",
    "graph",
    "eager → compiled",
    "speedup",
    "steady alloc.",
    "compile (warm)",
    "compile (fresh)",
    "break-even (warm)",
    "break-even (fresh)",
    "fusion gain",
)
NONE_FASTER = "no workload was measurably faster compiled"


def change(x: float | None) -> str:
    """A relative change with its sign, as the paper writes it: "−85%", "+12%"."""
    if x is None or not math.isfinite(x):
        return text.NA
    return f"{'−' if x < 0 else '+'}{abs(x) * 100:.0f}%"


def overhead_evidence(ops: int, us_per_op: float, threshold_us: float) -> str:
    """Why a workload is overhead-bound: each eager op takes microseconds."""
    return (
        f"{text.plural(ops, 'graph op')} at {us_per_op:.1f} µs of eager time each (under "
        f"{threshold_us:.0f} µs): dispatching an op costs about as much as its arithmetic"
    )


def library_evidence(n: int, total: int, names: list[str], time_share: float | None) -> str:
    """Why a workload is GEMM-bound: library kernels (GEMMs, convolutions) hold its time."""
    what = ", ".join(names)
    if time_share is not None:
        return f"library kernels ({what}) take {text.pct(time_share)} of the kernel time"
    return (
        f"library calls ({what}) are {n} of {text.plural(total, 'kernel')}: compiling leaves "
        "them as they are"
    )


def fusion_evidence(ops: int, kernels: int, library: int) -> str:
    """What Inductor made of a fusion-friendly workload's graph."""
    out = f"{text.plural(ops, 'graph op')} compiled into {text.plural(kernels, 'fused kernel')}"
    return out + (f" and {text.plural(library, 'library call')}" if library else "")


def kernels_count(names: list[str]) -> list[str]:
    """ "addmm ×24": kernels by name, the most frequent first."""
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    ordered = sorted(counts.items(), key=lambda kv: -kv[1])
    return [f"{n} ×{c}" if c > 1 else n for n, c in ordered]


def best_speedup(name: str, default: str, steady: str) -> str:
    """ "pointwise-epilogue: 19.84x; 8.81x with the allocator held steady"."""
    return f"{name}: {default}; {steady} with the {text.STEADY_ALLOC}"


def gained_little(name: str, speedup_words: str, kind: str | None) -> str:
    """ "gelu-mlp 0.97x (no measurable difference): GEMM-bound"."""
    return f"{name} {speedup_words}" + (f": {kind}" if kind else "")


def none_little(little: float) -> str:
    return f"none: every workload gained {text.speedup(little)} or more"


def break_even_span(low: float, median: float, high: float, slower: int, n: int) -> str:
    """The break-evens of several workloads: "487 to 14,601 runs (median 1,200)"."""
    if round(low) == round(high):
        out = text.runs(low)
    else:
        out = f"{text.count(low)} to {text.runs(high)} (median {text.count(median)})"
    return out + (f"; {slower} of {n} never pay back (compiled is slower)" if slower else "")


def fresh_compile(name: str, fresh: str, warm: str, break_even_words: str) -> str:
    """One workload compiled on a fresh cache and on the warm one."""
    return f"{break_even_words}: {name} compiled in {fresh} on a fresh cache, {warm} warm"


def transitions_change(
    change_words: str, static_s: float | None, dynamic_s: float | None, sizes: int, workload: str
) -> str:
    """ "−85%: static 10.3 s vs dynamic 1.52 s over 4 sizes of variable-length"."""
    return (
        f"{change_words}: static {text.secs(static_s)} vs dynamic {text.secs(dynamic_s)} over "
        f"{text.plural(sizes, 'size')} of {workload}"
    )


def steady_cost(ratio_words: str, size: int, differs: bool | None) -> str:
    """Dynamic's steady-state latency against static's, at one size."""
    out = f"{ratio_words} static's latency at size {size}"
    if differs is False:
        return f"{out}: {text.NO_DIFFERENCE}"
    if differs is None:
        return f"{out} ({text.ROUGH})"
    return out


def paper_plan(
    runs: int, workloads: list[str], fresh: list[str], sweep: str, sizes: list[int]
) -> str:
    """What ``dlcprof paper`` is about to do, in one line."""
    swept = f"over {', '.join(map(str, sizes))}" if sizes else "over its SIZES"
    return (
        f"Reproducing {PAPER} ({PAPER_MACHINE}) here: {text.plural(runs, 'run')}: "
        f"{', '.join(workloads)} benchmarked on the warm cache; {', '.join(fresh)} compiled "
        f"again on a fresh cache; {sweep} swept {swept}, static then dynamic"
    )


def paper_step(role: str, name: str, dynamic: str, sizes: int | None) -> str:
    """What one paper run does."""
    if role == "sweep":
        what = text.plural(sizes, "size") if sizes else "its sizes"
        return f"{name}: shape sweep over {what}, dynamic={dynamic}, fresh cache"
    if role == "fresh":
        return f"{name}: compile on a fresh cache"
    return f"{name}: compile on the warm cache, then eager vs compiled"


def benchmark_outcome(name: str, default: str, steady: str, compile_words: str) -> str:
    return f"{name}: {default}; {steady} with the {text.STEADY_ALLOC}; compile {compile_words}"


def fresh_outcome(name: str, compile_words: str) -> str:
    return f"{name}: compiled in {compile_words} on a fresh cache"


def sweep_outcome(name: str, dynamic: str, compiles: int, total_s: float | None) -> str:
    return (
        f"{name}, dynamic={dynamic}: {text.plural(compiles, 'compile')}, {text.secs(total_s)} of "
        "shape transitions"
    )


def measured_on(device: str, device_name: str, threads: int, torch_version: str) -> str:
    """Where the paper's findings were measured this time, beside where the paper did."""
    return (
        f"measured on {device} ({device_name}), {text.plural(threads, 'thread')}, torch "
        f"{torch_version}; the paper measured {PAPER_MACHINE}"
    )


_AGAIN = " · r runs the quick set again"


def paper_none(replay: bool) -> str:
    if replay:
        return f"no paper run in this recording (dlcprof paper reproduces {PAPER})"
    return f"no paper run in this session: r runs the quick set of {PAPER}"


def paper_done(done: int, planned: int, replay: bool = False) -> str:
    return f"done: {done} of {text.plural(planned, 'run')}" + ("" if replay else _AGAIN)


def paper_stopped(done: int, planned: int, name: str, status: str, replay: bool = False) -> str:
    return (
        f"{done} of {text.plural(planned, 'run')} ran; {name} ended ({status}): the rows it "
        "leaves read n/a" + ("" if replay else _AGAIN)
    )


def sweep_ended(dynamic: str, status: str) -> str:
    return f"the dynamic={dynamic} sweep ended ({status}) before it finished"
