"""The speedup twice: as the worker's process ran (the headline) and with the
allocator held steady, the page faults that tell them apart, and whether the
workload is allocator-sensitive.

Eager code allocates a fresh buffer per op; with glibc's default allocator
those buffers may be fresh pages every call (faults, zeroing), depending on
the process's history. Fused code allocates far less. So part of a CPU
speedup can be the allocations fusion saves, which a process with a steady
allocator never pays: both figures are true, for different deployments.
"""

from __future__ import annotations

import statistics

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.benchmark import (
    Speed,
    Timed,
    break_even_text,
    clearly_more_faults,
    run_speed,
    speed,
    speedup_text,
    split_notes,
    within_spread,
)
from dlcprof.session import Run

SENSITIVE = "allocator-sensitive"
NOT_SENSITIVE = "not allocator-sensitive"
NOT_ALLOCATOR = "the speedups differ, but not by the allocator"


@data(frozen=True)
class Faults:
    """Minor page faults per call over the timed repetitions (None: not counted)."""

    eager: float | None
    compiled: float | None


def faults_per_call(b: Timed) -> Faults:
    def mean(xs: list[float]) -> float | None:
        return statistics.fmean(xs) if xs else None

    return Faults(mean(b.eager_faults), mean(b.compiled_faults))


@data(frozen=True)
class AllocatorContrast:
    default: Speed  # the headline: the allocator the worker's process ran with
    steady: Speed | None  # the allocator held steady; None with ``steady_why``
    allocator: str  # what the default measurement ran with ("" when not recorded)
    how: str  # what was pinned for the steady one ("" when none)
    steady_why: str  # why there is no steady figure ("" when there is)
    faults: Faults
    steady_faults: Faults
    verdict: str | None  # SENSITIVE | NOT_SENSITIVE | NOT_ALLOCATOR; None without steady
    cost_s: float | None  # what the steady measurement added to the run

    @property
    def sensitive(self) -> bool | None:
        return None if self.verdict is None else self.verdict == SENSITIVE

    @property
    def break_evens(self) -> tuple[float | None, float | None]:
        """Break-even runs from each figure (None where compiled is not measurably faster)."""
        return self.default.break_even, self.steady.break_even if self.steady else None

    @property
    def sentence(self) -> str:
        """The two speedups and what tells them apart, in one sentence for every view."""
        if self.steady is None:
            return f"{text.STEADY_ALLOC}: {text.na(self.steady_why)}"
        return allocator_verdict(
            self.verdict or "",
            speedup_text(self.default),
            speedup_text(self.steady),
            self.faults.eager,
            self.steady_faults.eager,
        )


def band(s: Speed) -> tuple[float, float, float] | None:
    """(lowest, highest, spread) of a speedup: one figure, or one per cluster."""
    parts = s.modes or (s,)
    values = [p.speedup for p in parts if p.speedup is not None]
    if not values:
        return None
    return min(values), max(values), max(p.speedup_spread for p in parts)


def verdict(d: Speed, s: Speed, df: Faults, sf: Faults) -> str:
    """Allocator-sensitive: the two speedups (each one figure, or one per
    cluster) are further apart than the measured spread, and the default run
    page-faulted clearly more: the allocator's signature (without fault counts,
    the difference alone decides)."""
    bd, bs = band(d), band(s)
    if bd is None or bs is None:
        return NOT_SENSITIVE
    gap = max(bs[0] - bd[1], bd[0] - bs[1], 0.0)
    if within_spread(gap, 0.0, bd[2], bs[2]):
        return NOT_SENSITIVE
    if df.eager is None or sf.eager is None:
        return SENSITIVE
    moved = clearly_more_faults(df.eager, sf.eager) or clearly_more_faults(df.compiled, sf.compiled)
    return SENSITIVE if moved else NOT_ALLOCATOR


def why_no_steady(run: Run) -> str:
    """Why a benchmarked run has no steady-allocator figure, in one wording."""
    if "steady_allocator" in run.unavailable:
        return run.unavailable["steady_allocator"]
    if run.live:
        return text.NOT_MEASURED_YET
    if run.status in ("cancelled", "crashed", "error"):
        return f"the run ended ({run.status}) before it"
    return "not measured in this recording"


def contrast(run: Run) -> AllocatorContrast | None:
    """Both figures of a benchmarked run; None when it has no benchmark."""
    b = run.benchmark
    if b is None:
        return None
    d, df = run_speed(run), faults_per_call(b)
    assert d is not None
    st = run.steady
    if st is None:
        return AllocatorContrast(
            d, None, b.allocator, "", why_no_steady(run), df, Faults(None, None), None, None
        )
    s, sf = speed(st, b.compile_s), faults_per_call(st)
    v = verdict(d, s, df, sf)
    return AllocatorContrast(d, s, b.allocator, st.how, "", df, sf, v, st.wall_s)


def columns(narrow: bool = False) -> list[str]:
    """The two figures' column names: the headline first."""
    if narrow:
        return ["default", "held steady"]
    return [f"{text.DEFAULT_ALLOC} (headline)", text.STEADY_ALLOC]


def rows(a: AllocatorContrast, narrow: bool = False) -> list[tuple[str, list[str]]]:
    """(label, [default, steady]) in every view's order, worded once; ``narrow``
    for a pane a third of a terminal wide."""
    speeds = [a.default, a.steady]
    pair = faults_pair_narrow if narrow else faults_pair

    def cells(fn) -> list[str]:
        return [fn(s) if s is not None else text.NA for s in speeds]

    return [
        ("eager", cells(lambda s: text.ms_spread(s.eager_ms, s.eager_spread_ms, narrow))),
        ("compiled", cells(lambda s: text.ms_spread(s.compiled_ms, s.compiled_spread_ms, narrow))),
        ("speedup", cells(speedup_text)),
        ("break-even", cells(break_even_text)),
        (
            "faults/call" if narrow else "page faults/call",
            [
                pair(f.eager, f.compiled) if s is not None else text.NA
                for s, f in zip(speeds, [a.faults, a.steady_faults], strict=True)
            ],
        ),
    ]


def notes(a: AllocatorContrast, run: Run) -> list[str]:
    """What the table needs said beside it: the verdict on the two speedups,
    which is the headline and why, how the other was held steady, and any split
    repetitions."""
    out = [a.sentence, headline(a.allocator)]
    if a.steady is not None:
        out.append(f"{text.STEADY_ALLOC}: {a.how}, {text.secs(a.cost_s)} more run time")
    assert run.benchmark is not None
    out += split_notes(run.benchmark, a.default)
    if run.steady is not None and a.steady is not None:
        out += [f"{text.STEADY_ALLOC}: {n}" for n in split_notes(run.steady, a.steady)]
    return out


# --- the words of the two allocators (the units are text's) --------------------


def faults_pair(eager: float | None, compiled: float | None) -> str:
    """Page faults per call of both sides: "2,433 eager · 0 compiled"."""
    if eager is None and compiled is None:
        return text.na("not counted")
    return f"{text.faults(eager)} eager · {text.faults(compiled)} compiled"


def faults_pair_narrow(eager: float | None, compiled: float | None) -> str:
    """The same in a narrow cell: "2,433 · <1" (eager · compiled)."""
    if eager is None and compiled is None:
        return text.NA
    return f"{text.faults(eager)} · {text.faults(compiled)}"


def allocator_verdict(
    verdict: str, default: str, steady: str, faults_d: float | None, faults_s: float | None
) -> str:
    """The default and the steady-allocator speedup, and what tells them apart."""
    both = f"{default} with the {text.DEFAULT_ALLOC}, {steady} with the {text.STEADY_ALLOC}"
    pf = f"eager page faults per call {text.faults(faults_d)} vs {text.faults(faults_s)}"
    if verdict == SENSITIVE:
        return (
            f"{SENSITIVE}: {both}, further apart than the measured spread ({pf}): "
            "part of the default speedup is the allocations fusion saves, which a process "
            "with a steady allocator never pays"
        )
    if verdict == NOT_ALLOCATOR:
        return f"{NOT_ALLOCATOR}: {both}, yet {pf}: background load between the two measurements?"
    return f"{NOT_SENSITIVE}: {both}, within the measured spread"


# --- the headline (the units are text's) ----------------------------------------


def headline(allocator: str) -> str:
    """Which speedup is the headline, and why."""
    if not allocator:
        return "headline: as measured (this recording does not say which allocator)"
    if allocator.endswith("default thresholds"):
        return (
            f"headline: the speedup your process would see with glibc's default allocator "
            f"({allocator})"
        )
    return f"headline: the speedup with {allocator}, as the worker's process ran"
