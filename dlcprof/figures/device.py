"""Device utilization from the monitors' samples: per run, per span, per metric."""

from __future__ import annotations

import math
from collections.abc import Iterable
from typing import TypeGuard

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.session import Run, Session

# What the headless summary and the reports show of each source, in order.
HEADLINE_KEYS = {
    "nvml": ("gpu_util_pct", "mem_used_mb", "proc_mem_mb", "power_w"),
    "cpu": ("worker_cpu_pct", "children_cpu_pct", "cxx_compilers", "worker_rss_mb"),
}
# A capacity shown beside its value ("3.1 GB / 80 GB"), not as a series of its own.
TOTALS = {"mem_used_mb": "mem_total_mb"}
# An imported session's: the logs were written by torch, no monitor ran.
NONE_IN_LOG = "no device samples: a TORCH_TRACE log holds none"


def finite(x: object) -> TypeGuard[float]:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def activity_spans(run: Run) -> list[tuple[str, float, float]]:
    """(name, start, end) on the event clock: each compile, then everything
    after the last compile (benchmark, sweep) until the run finished."""
    spans = [
        ("compile", c.start_t, c.start_t + c.wall_s)
        for c in run.compiles.values()
        if c.start_t is not None and c.wall_s is not None
    ]
    if spans and run.finished_t is not None:
        spans.append(("after compile", max(end for _, _, end in spans), run.finished_t))
    return spans


def summarize(
    samples: Iterable[ev.DeviceSampled], spans: Iterable[tuple[str, float, float]]
) -> dict[str, dict[str, float | None]]:
    """Mean and max of every value per named span, e.g. "compile" vs "after compile".

    Spans sharing a name are pooled (a compile, then recompiles later). A
    sample counts in a span when ``start <= t <= end``. Keys are
    ``"<value>.mean"`` and ``"<value>.max"`` (None when the span has no value),
    plus ``"samples"`` and ``"duration_s"``.
    """
    samples = list(samples)
    keys: dict[str, None] = {}  # every value name seen, in first-seen order
    for s in samples:
        keys.update(dict.fromkeys(s.values))
    grouped: dict[str, list[tuple[float, float]]] = {}
    for name, start, end in spans:
        grouped.setdefault(name, []).append((start, end))
    out: dict[str, dict[str, float | None]] = {}
    for name, ranges in grouped.items():
        inside = [s for s in samples if any(a <= s.t <= b for a, b in ranges)]
        row: dict[str, float | None] = {
            "samples": float(len(inside)),
            "duration_s": float(sum(max(0.0, b - a) for a, b in ranges)),
        }
        for key in keys:
            vals = [float(v) for s in inside if finite(v := s.values.get(key))]
            row[f"{key}.mean"] = sum(vals) / len(vals) if vals else None
            row[f"{key}.max"] = max(vals) if vals else None
        out[name] = row
    return out


@data
class SpanTable:
    """Mean / max of the headline metrics during the compiles vs after them: the
    one table the console, the TUI's report and both reports place."""

    source: str
    spans: dict[str, dict[str, float | None]]  # summarize()
    keys: list[str]

    def columns(self) -> list[str]:
        """ "metric", then each span with its sample count."""
        return [
            "metric",
            *(f"{name} ({row['samples']:.0f} samples)" for name, row in self.spans.items()),
        ]

    def rows(self) -> list[tuple[str, list[str]]]:
        """(metric label, "mean / max" per span), each with its unit."""
        out = []
        for key in self.keys:
            cells = []
            for row in self.spans.values():
                mean, peak = row.get(f"{key}.mean"), row.get(f"{key}.max")
                cells.append(
                    text.NA
                    if mean is None
                    else f"{text.metric(key, mean)} / {text.metric(key, peak)}"
                )
            out.append((text.metric_label(key), cells))
        return out


def spans_of(
    samples: list[ev.DeviceSampled], by_span: dict[str, dict[str, float | None]]
) -> SpanTable:
    """The table of ``summarize``'s result: the source's headline metrics that
    were sampled (every sampled one when the source has none)."""
    source = samples[-1].source if samples else ""
    named = dict.fromkeys(k for s in samples for k in s.values)
    seen = [k for k in named if k not in TOTALS.values()]
    keys = [k for k in HEADLINE_KEYS.get(source, ()) if k in seen] or seen
    return SpanTable(source, by_span, keys)


def span_table(run: Run) -> SpanTable | None:
    samples, spans = run.device_samples, activity_spans(run)
    if not samples or not spans:
        return None
    return spans_of(samples, summarize(samples, spans))


def series(samples: list[ev.DeviceSampled]) -> dict[str, list[tuple[float, float]]]:
    """metric -> [(t, value)], skipping samples where the probe had no value."""
    out: dict[str, list[tuple[float, float]]] = {}
    for s in samples:
        for k, v in s.values.items():
            if k in TOTALS.values():
                continue
            pts = out.setdefault(k, [])
            if finite(v):
                pts.append((s.t, float(v)))
    return out


def groups(metrics: Iterable[str]) -> list[tuple[str, list[str]]]:
    """Metrics that share a unit share a chart: (title, metric names)."""
    out: dict[str, list[str]] = {}
    for m in metrics:
        unit = text.metric_unit(m)
        key = {"%": "utilization (%)", "MB": "memory (MB)"}.get(unit) or text.metric_label(m)
        out.setdefault(key, []).append(m)
    return list(out.items())


@data
class MetricStats:
    count: int
    min: float | None
    mean: float | None
    max: float | None
    last: float | None


def stats(points: list[tuple[float, float]]) -> MetricStats:
    vals = [v for _, v in points]
    if not vals:
        return MetricStats(0, None, None, None, None)
    return MetricStats(len(vals), min(vals), sum(vals) / len(vals), max(vals), vals[-1])


def monitors(session: Session, run: Run | None = None) -> dict[str, ev.MonitorStatus]:
    """The monitors' latest word: of ``run``, or of every run of the session."""
    if run is not None:
        return dict(run.monitors)
    out = dict(session.monitors)
    for r in session.runs.values():
        out.update(r.monitors)
    return out
