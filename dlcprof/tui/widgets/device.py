"""Device pane: utilization and memory over time, from the monitors' samples."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof.tui.view import NA, View, sparkline

# Known keys in display order, with a label; other keys follow as named.
_LABELS: dict[str, str] = {
    "gpu_util_pct": "GPU util",
    "proc_util_pct": "worker GPU util",
    "mem_util_pct": "GPU mem busy",
    "mem_used_mb": "GPU memory",
    "proc_mem_mb": "worker GPU mem",
    "power_w": "GPU power",
    "temp_c": "GPU temp",
    "sm_clock_mhz": "SM clock",
    "worker_cpu_pct": "worker CPU",
    "worker_rss_mb": "worker RSS",
    "cxx_compilers": "compilers running",
    "children_cpu_pct": "compilers CPU",
    "system_cpu_pct": "system CPU",
}
_TOTALS = {"mem_used_mb": "mem_total_mb"}
_LABEL_W = 18
_VALUE_W = 12


def _fmt(key: str, v: float | None) -> str:
    if v is None:
        return NA
    if key.endswith("_pct"):
        return f"{v:.0f}%"
    if key.endswith("_mb"):
        return f"{v / 1024:.2f} GB" if v >= 10240 else f"{v:.0f} MB"
    if key.endswith("_w"):
        return f"{v:.0f} W"
    if key.endswith("_c"):
        return f"{v:.0f} °C"
    if key.endswith("_mhz"):
        return f"{v:.0f} MHz"
    return f"{v:g}"


class DeviceCharts:
    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        session = self.view.session
        for name in ("nvml", "cpu"):
            status = session.monitors.get(name)
            if status is not None:
                style = "" if status.available else "yellow"
                yield Text(f"{name}: {status.message}", style=style)
        samples = session.device_samples
        run = self.view.run
        if run is not None and run.started_t is not None:
            # The samples taken while the selected run ran (monitors sample per run).
            end = run.finished_t if run.finished_t is not None else float("inf")
            samples = [s for s in samples if run.started_t - 2 <= s.t <= end + 2]
        if not samples:
            if not session.monitors:
                why = (
                    "this session holds no device samples"
                    if self.view.replay
                    else "no device samples yet (the monitors start with a run)"
                )
                yield Text(f"{NA}: {why}", style="dim")
            return
        by_source: dict[str, list[ev.DeviceSampled]] = {}
        for s in samples:
            by_source.setdefault(s.source, []).append(s)
        width = max(8, options.max_width - _LABEL_W - _VALUE_W - 12)
        for source, rows in by_source.items():
            span = rows[-1].t - rows[0].t
            shown = min(width, len(rows))
            yield Text(
                f"{source}: {len(rows)} samples over {span:.1f} s (last {shown} shown)",
                style="bold",
            )
            keys = [k for k in _LABELS if any(k in r.values for r in rows)]
            keys += sorted(
                {
                    k
                    for r in rows
                    for k in r.values
                    if k not in _LABELS and k not in _TOTALS.values()
                }
            )
            for key in keys:
                series = [r.values.get(key) for r in rows]
                yield self._line(key, series, rows, width)

    def _line(
        self, key: str, series: list[float | None], rows: list[ev.DeviceSampled], width: int
    ) -> Text:
        latest = series[-1]
        known = [v for v in series if v is not None]
        top: float | None = None
        if key.endswith("_pct"):
            top = max([100.0, *known])  # per-process CPU can pass 100% on many cores
        elif key in _TOTALS:
            total = rows[-1].values.get(_TOTALS[key])
            top = total if total else None
        line = Text(no_wrap=True, overflow="crop")
        line.append(f"{_LABELS.get(key, key):<{_LABEL_W}}", style="bold")
        value = _fmt(key, latest)
        if key in _TOTALS and rows[-1].values.get(_TOTALS[key]):
            value += f" / {_fmt(key, rows[-1].values.get(_TOTALS[key]))}"
        line.append(f"{value:>{_VALUE_W}} ")
        spark = sparkline(series, width, top=top)
        spark.stylize("green")
        line.append_text(spark)
        peak = _fmt(key, max(known)) if known else NA
        line.append(f" max {peak}", style="dim")
        return line


class DevicePane(VerticalScroll):
    def compose(self):  # type: ignore[override]
        yield Static(id="device-body")

    def show(self, view: View) -> None:
        self.query_one("#device-body", Static).update(DeviceCharts(view))
