"""Device pane: utilization and memory over time, from the selected run's samples."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import device as fd
from dlcprof.figures import runs as fruns
from dlcprof.tui.view import View, sparkline

_LABEL_W = 18
_VALUE_W = 12


class DeviceCharts:
    def __init__(self, view: View) -> None:
        self.view = view

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        run = self.view.run
        statuses = fd.monitors(self.view.session, run)
        for name in ("nvml", "cpu"):
            status = statuses.get(name)
            if status is not None:
                style = "" if status.available else "yellow"
                yield Text(f"{name}: {status.message}", style=style)
        samples = run.device_samples if run is not None else []
        if not samples:
            if run is not None and fruns.is_imported(run):
                why = fd.NONE_IN_LOG
            elif self.view.replay:
                why = "this run holds no device samples"
            elif run is None:
                why = "no device samples yet (the monitors start with a run)"
            else:
                why = "no device samples for this run (yet)"
            yield Text(text.na(why), style="dim")
            return
        by_source: dict[str, list[ev.DeviceSampled]] = {}
        for s in samples:
            by_source.setdefault(s.source, []).append(s)
        width = max(8, options.max_width - _LABEL_W - _VALUE_W - 12)
        for source, rows in by_source.items():
            span = rows[-1].t - rows[0].t
            shown = min(width, len(rows))
            yield Text(
                f"{source}: {len(rows)} samples over {text.secs(span)} (last {shown} shown)",
                style="bold",
            )
            seen = {k for r in rows for k in r.values if k not in fd.TOTALS.values()}
            keys = [k for k in text.METRIC_LABELS if k in seen]
            keys += sorted(seen - set(keys))
            for key in keys:
                yield self._line(key, [r.values.get(key) for r in rows], rows, width)

    def _line(
        self, key: str, series: list[float | None], rows: list[ev.DeviceSampled], width: int
    ) -> Text:
        known = [v for v in series if v is not None]
        total = rows[-1].values.get(fd.TOTALS[key]) if key in fd.TOTALS else None
        top: float | None = None
        if text.metric_unit(key) == "%":
            top = max([100.0, *known])  # per-process CPU can pass 100% on many cores
        elif total:
            top = total
        line = Text(no_wrap=True, overflow="crop")
        line.append(f"{text.metric_label(key):<{_LABEL_W}}", style="bold")
        value = text.metric(key, series[-1])
        if total:
            value += f" / {text.metric(key, total)}"
        line.append(f"{value:>{_VALUE_W}} ")
        spark = sparkline(series, width, top=top)
        spark.stylize("green")
        line.append_text(spark)
        peak = text.metric(key, max(known)) if known else text.NA
        line.append(f" max {peak}", style="dim")
        return line


class DevicePane(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="device-body")

    def show(self, view: View) -> None:
        self.query_one("#device-body", Static).update(DeviceCharts(view))
