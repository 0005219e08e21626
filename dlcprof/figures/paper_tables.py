"""The paper's findings as every view states them: one row per finding (the
paper's figure beside the one measured here), one row per workload, the notes
beside them, and the words of each.
"""

from __future__ import annotations

import math
import statistics

from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures.graph_kind import GEMM_BOUND, NO_KERNEL_TIMES, OVERHEAD_BOUND
from dlcprof.figures.paper import (
    LITTLE,
    PAPER,
    PAPER_MACHINE,
    Findings,
    speedup_or_why,
)

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


def _best(f: Findings) -> str:
    best = f.best
    if best is None:
        if f.measured:
            return NONE_FASTER
        return text.na(next((w.why for w in f.workloads if w.why), "no workload measured"))
    a = best.contrast
    assert a is not None
    return best_speedup(
        best.name, fb.speedup_text(a.default), speedup_or_why(a.steady, a.steady_why)
    )


def _little(f: Findings) -> str:
    if not f.measured:
        return text.na("no workload measured")
    little = f.little
    if not little:
        return none_little(LITTLE)
    return "; ".join(
        gained_little(w.name, fb.speedup_text(w.speed), w.character.kind if w.character else None)
        for w in little
        if w.speed is not None  # as every one is (measured)
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
                speedup_or_why(a.steady, a.steady_why),
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


# --- their words ------------------------------------------------------------------


def change(x: float | None) -> str:
    """A relative change with its sign, as the paper writes it: "−85%", "+12%"."""
    if x is None or not math.isfinite(x):
        return text.NA
    return f"{'−' if x < 0 else '+'}{abs(x) * 100:.0f}%"


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


def measured_on(device: str, device_name: str, threads: int, torch_version: str) -> str:
    """Where the paper's findings were measured this time, beside where the paper did."""
    return (
        f"measured on {device} ({device_name}), {text.plural(threads, 'thread')}, torch "
        f"{torch_version}; the paper measured {PAPER_MACHINE}"
    )
