"""What watched a run while it compiled and while it was timed, and what that cost.

The probes run inside the worker for the whole run; the monitors (device
sampler, py-spy) watch it from outside and pause while the benchmark is timed
(dlcprof/worker/quiet.py), except the device sampler on a GPU: NVML goes on.
Each monitor reports the CPU it used itself (``MonitorCostMeasured``): on a
machine with fewer free cores than the compile uses, that CPU is taken from the
compile.
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import runs as fruns
from dlcprof.session import Run

PROBES = ("trace", "kernels")  # the worker's probes (worker/probes/), by ProbeUnavailable name
_NAMES = {"device": "device sampler", "py-spy": "py-spy"}
# MonitorStatus.monitor -> the monitor whose cost it reports
_STATUS_OF = {"cpu": "device", "nvml": "device", "py-spy": "py-spy"}


@data(frozen=True)
class Watcher:
    name: str  # "py-spy", "device sampler"
    how: str  # "25 Hz, non-blocking"
    cpu_share: float | None  # of one core while it watched; None until measured


@data(frozen=True)
class Observer:
    probes: list[str]  # worker probes that ran
    watchers: list[Watcher]  # monitors that ran
    quiet: bool | None  # every timed window ran with the monitors paused; None: none timed
    timing_now: bool  # a window is being timed now
    swept: bool  # a shape sweep ran: its latencies are timed with the monitors running
    timed: list[str]  # what was timed in a window: "benchmark", "kernel profile", ...


def watchers(run: Run) -> list[Watcher]:
    """The monitors that sampled this run, with the CPU each used."""
    seen: dict[str, str] = {}
    for status in run.monitors.values():
        key = _STATUS_OF.get(status.monitor)
        # The device sampler samples the CPU even where NVML is unavailable.
        if key is not None and (status.available or (key == "device" and status.how)):
            seen[key] = status.how or text.na("rate not recorded")
    if run.device_samples and "device" not in seen:
        seen["device"] = text.na("rate not recorded")
    out = []
    for key, how in seen.items():
        cost = run.monitor_costs.get(key)
        out.append(Watcher(_NAMES[key], how, cpu_share(cost)))
    return sorted(out, key=lambda w: w.name)


def cpu_share(cost: ev.MonitorCostMeasured | None) -> float | None:
    if cost is None or cost.active_s <= 0:
        return None
    return cost.cpu_s / cost.active_s


def observer(run: Run) -> Observer:
    probes = [p for p in PROBES if p not in run.unavailable]
    if run.timed:
        quiet: bool | None = all(t.quiet for t in run.timed)
    else:  # a benchmark without a window was recorded before the monitors paused
        quiet = False if run.benchmark is not None else None
    return Observer(
        probes=probes,
        watchers=watchers(run),
        quiet=quiet,
        timing_now=run.timing is not None,
        swept=bool(run.sweep),
        timed=list(dict.fromkeys(t.what for t in run.timed)),
    )


# The device sampler does not pause on a GPU (monitors/device.py): the timed
# windows are when the GPU is busy.
NVML_KEPT = "NVML sampled through them from dlcprof's own process (no worker core)"


def nvml_sampled(run: Run) -> bool:
    status = run.monitors.get("nvml")
    return status is not None and status.available


# An attached program's process (monitors/program.py): nothing is timed there.
ATTACHED_WATCH = (
    "the monitors watched the process from its first compile to its end, never "
    "paused: their CPU is taken from the program where it has no core to spare"
)


def line(run: Run) -> str:
    """What watched the run and what it cost, for the reports and the headless summary:
    "observer: worker probes (...), py-spy ...; the monitors were paused while ..."."""
    if fruns.is_imported(run):
        return "observer: none (read from its TORCH_TRACE log after the run)"
    o = observer(run)
    where = "worker" if run.process is None else "program"
    parts = [f"{where} probes ({', '.join(o.probes)})"] if o.probes else []
    if not o.watchers:
        return f"observer: {', '.join(parts) or 'nothing'} only"
    shown = [f"{w.name} {w.how} ({text.core_share(w.cpu_share)})" for w in o.watchers]
    if run.process is not None:
        return f"observer: {', '.join([*parts, *shown])}; {ATTACHED_WATCH}"
    timing = _timing(o)
    if o.quiet and nvml_sampled(run):
        timing = f"{timing}, except that {NVML_KEPT}"
    return f"observer: {', '.join([*parts, *shown])}; {timing}"


def _timing(o: Observer) -> str:
    """What the monitors did while the repetitions were timed (``o.timed``: what was,
    e.g. ["benchmark", "kernel profile"]; the benchmark when not said)."""
    what = " and ".join(f"the {w}" for w in o.timed) if o.timed else "the benchmark"
    verb = "were" if len(o.timed) > 1 else "was"
    if o.timing_now:
        parts = ["monitors paused: timing now"]
    elif o.quiet is None:
        parts = [] if o.swept else ["the monitors pause while the benchmark is timed"]
    elif o.quiet:
        parts = [f"the monitors were paused while {what} {verb} timed"]
    else:
        parts = [f"the monitors RAN while {what} {verb} timed: its latencies include their cost"]
    if o.swept:
        parts.append("the monitors ran through the shape sweep, its latencies included")
    return "; ".join(parts)


def short(run: Run) -> str | None:
    """The same for the status bar, None when no monitor watched the run: "py-spy 7.2% ·
    device sampler 0.4% of a core, paused while timing"."""
    o = observer(run)
    if not o.watchers:
        return None
    costs = " · ".join(f"{w.name} {text.share_of_core(w.cpu_share)}" for w in o.watchers)
    if run.process is not None:
        when = "never paused"
    elif o.timing_now:
        when = "paused now: timing"
    elif o.quiet is False:
        when = "RAN while timing"
    else:
        when = "paused while timing"
    return f"observer: {costs} of a core, {when}"
