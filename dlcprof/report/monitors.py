"""What the monitors saw, as the reports state it: the device samples over a
run or the session, py-spy's hot frames, and what watching cost."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import device as fd
from dlcprof.figures import hotspots as fh
from dlcprof.figures import observer as fo
from dlcprof.session import Run

HOTSPOT_LIMIT = 20


@data
class MetricRow:
    key: str
    label: str
    stats: fd.MetricStats
    min: str
    mean: str
    max: str


@data
class DeviceSummary:
    """What the device monitor saw, over a run or the whole session."""

    samples: list[ev.DeviceSampled]
    sources: list[str]
    duration_s: float
    series: dict[str, list[tuple[float, float]]]
    metrics: list[MetricRow]
    by_span: dict[str, dict[str, float | None]]  # figures.device.summarize
    monitors: dict[str, ev.MonitorStatus]

    @property
    def duration(self) -> str:
        return text.secs(self.duration_s)

    @property
    def spans(self) -> fd.SpanTable:
        """Mean / max per span, the table the console shows too."""
        return fd.spans_of(self.samples, self.by_span)


def device_summary(
    samples: list[ev.DeviceSampled],
    spans: list[tuple[str, float, float]],
    monitors: dict[str, ev.MonitorStatus],
) -> DeviceSummary:
    series = fd.series(samples)
    metrics = []
    for key, pts in series.items():
        st = fd.stats(pts)
        metrics.append(
            MetricRow(
                key,
                text.metric_label(key),
                st,
                text.metric(key, st.min),
                text.metric(key, st.mean),
                text.metric(key, st.max),
            )
        )
    return DeviceSummary(
        samples=samples,
        sources=sorted({s.source for s in samples}),
        duration_s=(samples[-1].t - samples[0].t) if len(samples) > 1 else 0.0,
        series=series,
        metrics=metrics,
        # Samples share the event clock with the compile phases: "compile"
        # vs "after compile" (benchmark, sweep), pooled over runs.
        by_span=fd.summarize(samples, spans) if samples and spans else {},
        monitors=monitors,
    )


@data
class HotspotRow:
    row: fh.HotRow
    own: str
    total: str

    @property
    def location(self) -> str:
        return f"{self.row.file}:{self.row.line}"

    @property
    def phase(self) -> str:
        return self.row.phase or "(not compiling)"


@data
class Hotspots:
    samples: int  # of the thread shown (every tick when all are)
    rows: list[HotspotRow]
    why: str  # why there are none
    scope: str  # what the table covers (fh.hot_scope)
    threads: dict[str, int]  # samples per thread
    others: str | None  # the threads left out (fh.threads_not_shown)


def hotspot_table(run: Run) -> Hotspots:
    rows = [
        HotspotRow(r, text.pct(r.own), text.pct(r.total)) for r in fh.hot_rows(run, HOTSPOT_LIMIT)
    ]
    status = run.monitors.get("py-spy")
    why = fh.why_none(run) or (
        status.message if status and not status.available else "no py-spy samples in this run"
    )
    others = fh.other_threads(run)
    return Hotspots(
        samples=fh.samples_shown(run),
        rows=rows,
        why=why,
        scope=fh.hot_scope(fh.shown_thread(run), fh.samples_shown(run)),
        threads=fh.thread_samples(run),
        others=fh.threads_not_shown(others) if others else None,
    )


@data
class Observer:
    """What watched the run and what it cost (figures/observer.py)."""

    line: str
    figures: fo.Observer
