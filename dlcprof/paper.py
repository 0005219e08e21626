"""``dlcprof paper``: the runs that reproduce arXiv 2611.04273 on this machine.

The plan (which runs, in which order, with which settings) is made here for
the CLI and the TUI alike; the CLI runs it one run after another, the TUI
queues the same settings on its RunController. Every
run is an ordinary run (its repro command repeats it); a ``PaperPlanned``
event ahead of them marks the session, and ``dlcprof.figures.paper`` reads
the findings back from it.
"""

from __future__ import annotations

from typing import Any

from dlcprof import events as ev
from dlcprof import workloads as wl
from dlcprof.data import data
from dlcprof.settings import RunSettings

SWEEP_WORKLOAD = "variable-length"
# One workload of each kind the paper contrasts: fusion-friendly, GEMM-bound, overhead-bound.
QUICK_WORKLOADS = ("pointwise-epilogue", "gelu-mlp", "tiny-ops")
QUICK_SWEEP_SIZES = 4
# The fresh-cache run is there for its compile seconds; its own timing is not
# used (the warm run's is), so it times few calls.
FRESH_REPS, FRESH_ITERS = 3, 5


class PlanError(Exception):
    """A plan that cannot be made (an unknown workload, one that cannot sweep): one line."""


@data(frozen=True)
class Plan:
    event: ev.PaperPlanned
    runs: list[RunSettings]


def quick_sizes(sizes: list[int], n: int = QUICK_SWEEP_SIZES) -> list[int]:
    """``n`` sizes spread over ``sizes``, the first and the last among them."""
    if len(sizes) <= n:
        return list(sizes)
    return [sizes[round(i * (len(sizes) - 1) / (n - 1))] for i in range(n)]


def _check(target: str) -> None:
    try:
        wl.resolve(target)
    except wl.WorkloadError as e:
        raise PlanError(str(e)) from None


def _sweep_sizes(target: str, size: str) -> list[int]:
    """The sweep's sizes, for a bundled workload ([] for another: the worker reads
    its SIZES)."""
    info = next((w for w in wl.list_bundled() if w.name == target), None)
    if info is None:
        return []
    if not info.has_inputs_for:
        raise PlanError(
            f"workload {target} has no inputs_for(size, device, dtype): it cannot sweep shapes "
            "(give --sweep-workload a workload that defines it)"
        )
    return info.small_sizes if size == "small" else info.sizes


def make_plan(
    *,
    quick: bool,
    device: str = "auto",
    size: str = "default",
    workloads: list[str] | None = None,
    sweep: str = SWEEP_WORKLOAD,
) -> Plan:
    """The runs of ``dlcprof paper``: each workload benchmarked on the warm cache,
    compiled again on a fresh cache (the first one only when ``quick``), then
    ``sweep`` swept static and dynamic, each on a fresh cache (a kernel built
    by an earlier run would make a recompile look cheap). SettingsError or
    PlanError (one line) on bad input."""
    if workloads is not None and not workloads:
        raise PlanError(
            "--workloads names no workload: give them comma-separated, e.g. gelu-mlp,tiny-ops"
        )
    names = list(dict.fromkeys(workloads or (QUICK_WORKLOADS if quick else wl.bundled_names())))
    for name in [*names, sweep]:
        _check(name)
    sizes = _sweep_sizes(sweep, size)
    if quick:
        sizes = quick_sizes(sizes)
    fresh = names[:1] if quick else names

    def settings(target: str, **kw: Any) -> RunSettings:
        return RunSettings(target=target, device=device, size=size, **kw).validate()

    runs = [settings(t) for t in names]
    runs += [settings(t, cache="fresh", reps=FRESH_REPS, iters=FRESH_ITERS) for t in fresh]
    runs += [
        settings(
            sweep, cache="fresh", dynamic=d, shapes=sizes or None, sweep=not sizes, benchmark=False
        )
        for d in ("false", "true")
    ]
    event = ev.PaperPlanned(
        workloads=names,
        fresh=fresh,
        sweep=sweep,
        sizes=sizes,
        quick=quick,
        size=size,
        device=device,
    )
    return Plan(event, runs)
