"""Device time per launch from a torch.profiler Chrome trace (kineto's JSON).

The profiling stage wraps each launch of the compiled code in a
``record_function`` range named ``<prefix><graph>:<launch>``. In the exported
trace (``prof.export_chrome_trace``) every event is ``{"ph": "X", "cat", "name",
"pid", "tid", "ts", "dur", "args"}`` with ``ts``/``dur`` in µs:

- the ranges are ``cat: "user_annotation"`` on the launching CPU thread;
- each launch is a ``cat: "cuda_runtime"`` (``cudaLaunchKernel``) or
  ``"cuda_driver"`` (``cuLaunchKernel``, Triton's) event with
  ``args.correlation``;
- each device activity (``cat: "kernel"``, ``"gpu_memcpy"``, ``"gpu_memset"``)
  carries the same ``args.correlation``; a Triton kernel is named as Inductor
  named it (``triton_poi_fused_add_0``), an extern call by its library
  (cuBLAS, cuDNN, flash attention).

A device activity belongs to the innermost range around its launch on the same
thread. Under CUDA graphs a replay is one ``cudaGraphLaunch`` (runtime) or
``cuGraphLaunch`` (driver) event, correlated with every kernel of the graph:
those belong to no launch of the compiled code, so they are kept apart, by
kernel name (a Triton kernel keeps Inductor's name in a graph; a library
kernel's name does not say which call made it). Pure: no torch, so it is
tested on constructed and recorded traces.
"""

from __future__ import annotations

import bisect
from dataclasses import field
from typing import Any

from dlcprof.data import data

LAUNCH_CATS = ("cuda_runtime", "cuda_driver")
DEVICE_CATS = ("kernel", "gpu_memcpy", "gpu_memset")
GRAPH_LAUNCHES = ("cudaGraphLaunch", "cuGraphLaunch")


@data
class DeviceTimes:
    by_label: dict[str, float] = field(default_factory=dict)  # µs per range label
    names: dict[str, list[str]] = field(default_factory=dict)  # device activities per label
    total_us: float = 0.0  # every device activity in the trace
    unattributed_us: float = 0.0  # launched outside every range, not by a graph replay
    replayed_us: dict[str, float] = field(default_factory=dict)  # CUDA-graph replays, by name
    replayed_n: dict[str, int] = field(default_factory=dict)  # ... how many of each

    @property
    def replay_total_us(self) -> float:
        return sum(self.replayed_us.values())


def _events(trace: dict[str, Any] | list[Any]) -> list[dict[str, Any]]:
    events = trace.get("traceEvents", []) if isinstance(trace, dict) else trace
    return [e for e in events if isinstance(e, dict) and e.get("ph") == "X"]


def _correlation(e: dict[str, Any]) -> Any:
    args = e.get("args")
    return args.get("correlation") if isinstance(args, dict) else None


def device_times(trace: dict[str, Any] | list[Any], prefix: str) -> DeviceTimes:
    events = _events(trace)
    ranges: dict[tuple[Any, Any], list[tuple[float, float, str]]] = {}
    for e in events:
        name = str(e.get("name", ""))
        if e.get("cat") == "user_annotation" and name.startswith(prefix):
            start = float(e.get("ts", 0.0))
            ranges.setdefault((e.get("pid"), e.get("tid")), []).append(
                (start, start + float(e.get("dur", 0.0)), name)
            )
    for spans in ranges.values():
        spans.sort()
    starts = {key: [s[0] for s in spans] for key, spans in ranges.items()}
    launches = {
        _correlation(e): e
        for e in events
        if e.get("cat") in LAUNCH_CATS and _correlation(e) is not None
    }
    out = DeviceTimes()
    for e in events:
        if e.get("cat") not in DEVICE_CATS:
            continue
        dur = float(e.get("dur", 0.0))
        out.total_us += dur
        launch = launches.get(_correlation(e))
        if launch is not None and str(launch.get("name", "")).startswith(GRAPH_LAUNCHES):
            name = str(e.get("name"))
            out.replayed_us[name] = out.replayed_us.get(name, 0.0) + dur
            out.replayed_n[name] = out.replayed_n.get(name, 0) + 1
            continue
        label = _enclosing(launch, ranges, starts) if launch is not None else None
        if label is None:
            out.unattributed_us += dur
            continue
        out.by_label[label] = out.by_label.get(label, 0.0) + dur
        names = out.names.setdefault(label, [])
        if str(e.get("name")) not in names:
            names.append(str(e.get("name")))
    return out


def _enclosing(
    launch: dict[str, Any],
    ranges: dict[tuple[Any, Any], list[tuple[float, float, str]]],
    starts: dict[tuple[Any, Any], list[float]],
) -> str | None:
    """The innermost range on the launch's thread that holds its start."""
    key = (launch.get("pid"), launch.get("tid"))
    spans = ranges.get(key)
    if not spans:
        return None
    ts = float(launch.get("ts", 0.0))
    i = bisect.bisect_right(starts[key], ts)
    # Ranges do not nest here (one per launch): the last one starting before ts.
    for start, end, name in reversed(spans[max(0, i - 4) : i]):
        if start <= ts <= end:
            return name
    return None
