"""What kind of graph a workload is, judged from the kernels it compiled:
GEMM-bound (library GEMMs and convolutions hold the time), overhead-bound
(many ops of microseconds each) or fusion-friendly; and a run's kernel time
by kind (``KernelTimes``) where it was profiled. The paper's finding 1 reads
it (``figures.paper``).
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import kernels as fk
from dlcprof.session import Run

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
NO_KERNEL_TIMES = "not profiled"
NO_FUSED_KERNEL = "no fused kernel"


@data(frozen=True)
class Character:
    """What kind of graph a workload is, and the evidence."""

    kind: str  # FUSION_FRIENDLY | GEMM_BOUND | OVERHEAD_BOUND
    evidence: str


@data(frozen=True)
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
