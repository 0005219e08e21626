"""The session as one self-contained HTML page, and a comparison of two runs.

No network: inline CSS, inline SVG charts, no scripts, no web fonts (a
monospace stack that uses Fira Code when installed). The page is a Jinja2
template (``templates/report.html.j2``) with auto-escaping on, placing the
figures of ``dlcprof.report.model``; every string from the session is escaped
by the engine (kernel sources are full of ``<``). The SVG charts are built by
``svg``, which escapes what it draws and hands the template ``Markup``.
"""

from __future__ import annotations

import os
import re
from importlib import resources
from typing import TYPE_CHECKING, Any

from jinja2 import Environment, FileSystemBytecodeCache, PackageLoader, StrictUndefined
from markupsafe import Markup

import dlcprof
from dlcprof import text
from dlcprof.figures import device as fd
from dlcprof.figures import paper_tables as fpt
from dlcprof.figures import recompiles as fr
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import ranks as franks
from dlcprof.report import model as rm
from dlcprof.report import svg
from dlcprof.report.benchmark import BenchmarkBlock
from dlcprof.report.run import RunModel
from dlcprof.session import Run

if TYPE_CHECKING:  # a comparison's module: only `dlcprof compare` needs it
    from dlcprof.figures import compare as fc

__all__ = ["CSP", "page", "render", "render_compare_html", "render_html"]

# No network, ever: a policy that forbids every external load (and scripts).
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def _css() -> Markup:
    # Our own file, inlined as is: it must not be escaped (quotes in font names).
    return Markup(resources.files("dlcprof.report").joinpath("templates/report.css").read_text())


# A figure's number and its unit never part at a line's end ("15.52 s").
_UNIT_GAP = re.compile(r"(?<=\d) (?=(?:[mµn]?s|min|h|[KMGT]i?B(?:/s)?|B)(?!\w))")


def _unbroken_units(value: Any) -> Any:
    """Every placed string (not the SVG, already Markup): a no-break space
    between a number and its unit."""
    if isinstance(value, str) and not isinstance(value, Markup):
        return _UNIT_GAP.sub("\u00a0", value)
    return value


def _bytecode_cache() -> FileSystemBytecodeCache | None:
    """The templates compiled once per user, in the user's cache folder
    (``$XDG_CACHE_HOME`` or ``~/.cache``, then ``dlcprof/jinja``; keyed by each
    template's source): compiling them is most of a small session's render
    (benchmarks/RESULTS.md §15). Not the temporary folder, which a run leaves as
    it found it. None where that folder cannot be made."""
    home = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    folder = os.path.join(home, "dlcprof", "jinja")
    try:
        os.makedirs(folder, exist_ok=True)
    except OSError:
        return None
    return FileSystemBytecodeCache(folder)


ENV = Environment(
    loader=PackageLoader("dlcprof.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    trim_blocks=True,
    lstrip_blocks=True,
    keep_trailing_newline=True,
    finalize=_unbroken_units,
)
ENV.filters["short"] = text.short
ENV.globals.update(
    text=text,
    paper_figures=fpt,
    ranks_figures=franks,
    group_figures=fgroups,
    dims_made_dynamic=fr.DIMS_MADE_DYNAMIC,
    share_bar=svg.share_bar,
    csp=CSP,
    version=dlcprof.__version__,
    css=_css(),
)


def render(template: str, **context: Any) -> str:
    """Render one of the report templates (auto-escaped)."""
    ENV.bytecode_cache = ENV.bytecode_cache or _bytecode_cache()  # made at the first page
    return ENV.get_template(template).render(**context)


def page(title: str, subtitle: str, body: list[str]) -> str:
    """The page chrome around ``body``, HTML that the caller built and
    escaped itself (the checker's tests use it to plant bad markup)."""
    return render("base.html.j2", title=title, subtitle=subtitle, body=Markup("\n".join(body)))


# --- charts: SVG built by svg.py from the model's figures ---------------------------------


def _sweep_series(r: RunModel, color: str, label: str) -> svg.Series:
    steps = r.sweep.steps if r.sweep else []
    return svg.Series(label, color, [(float(i), st.cumulative_s) for i, st in enumerate(steps)])


def _sweep_ticks(runs: list[RunModel]) -> list[tuple[float, str]]:
    longest = max(runs, key=lambda r: len(r.sweep.steps) if r.sweep else 0)
    steps = longest.sweep.steps if longest.sweep else []
    return [(float(i), str(st.size)) for i, st in enumerate(steps)]


class Charts:
    """What the template calls for a chart; each returns finished SVG."""

    @staticmethod
    def empty(message: str) -> Markup:
        return svg.empty_chart(message)

    @staticmethod
    def timeline(r: RunModel) -> Markup:
        return svg.phase_timeline(r.run)

    @staticmethod
    def benchmark(b: BenchmarkBlock) -> Markup:
        s, st = b.speed, b.allocator.steady
        bars = [
            ("eager", s.eager_ms, s.eager_spread_ms, svg.EAGER),
            ("compiled", s.compiled_ms, s.compiled_spread_ms, svg.COMPILED),
        ]
        if st is not None:
            bars += [
                ("eager, steady", st.eager_ms, st.eager_spread_ms, svg.EAGER_STEADY),
                ("compiled, steady", st.compiled_ms, st.compiled_spread_ms, svg.COMPILED_STEADY),
            ]
        return svg.benchmark_bars(bars)

    @staticmethod
    def run_sweep(r: RunModel) -> Markup:
        dynamic = r.sweep.dynamic if r.sweep else text.NA
        series = _sweep_series(r, svg.PALETTE[0], f"cumulative transition cost (dynamic={dynamic})")
        return svg.line_chart(
            [series],
            x_ticks=_sweep_ticks([r]),
            x_label="input size",
            y_unit="s",
            y_label="seconds",
            height=220,
            title="cumulative transition cost",
        )

    @staticmethod
    def sweep_contrast(report: rm.Report) -> Markup:
        """The cumulative transition cost, every swept run on one chart."""
        series = []
        for i, r in enumerate(report.sweep_runs):
            dynamic = r.sweep.dynamic if r.sweep else text.NA
            label = f"run {r.number}: {r.name} dynamic={dynamic}"
            s = _sweep_series(r, svg.PALETTE[i % len(svg.PALETTE)], label)
            s.dashed = dynamic != "false"
            series.append(s)
        return svg.line_chart(
            series,
            x_label="input size (sweep step)",
            y_label="cumulative transition cost",
            y_unit="s",
            x_ticks=_sweep_ticks(report.sweep_runs),
            title="cumulative shape-transition cost, static vs dynamic",
        )

    @staticmethod
    def device(report: rm.Report) -> tuple[list[tuple[str, Markup]], list[tuple[str, Markup]]]:
        """(full-width charts, half-width charts): one per group of metrics sharing a unit."""
        series = report.device.series
        origin = report.origin_t or 0.0
        bands = []
        for r in report.runs:
            start = r.run.started_t
            if start is not None:
                end = r.run.finished_t if r.run.finished_t is not None else start
                bands.append((start - origin, end - origin, f"run {r.number}"))
        wide: list[tuple[str, Markup]] = []
        narrow: list[tuple[str, Markup]] = []
        color = 0
        for title, metrics in fd.groups(series):
            have = [m for m in metrics if series[m]]
            if not have:
                continue
            lines = []
            for m in have:
                pts: list[tuple[float, float | None]] = [(t - origin, v) for t, v in series[m]]
                lines.append(svg.Series(m, svg.PALETTE[color % len(svg.PALETTE)], pts))
                color += 1
            top = max(v for m in have for _, v in series[m])
            first = not wide  # the first group (utilization) gets the full width
            chart = svg.line_chart(
                lines,
                width=1100 if first else 540,
                height=240 if first else 200,
                y_max=max(100.0, top) if title.endswith("(%)") else None,
                x_label="seconds since session start",
                bands=bands,
                markers=sum(len(series[m]) for m in have) <= 60,
                title=f"{title} over time",
            )
            (wide if first else narrow).append((title, chart))
        return wide, narrow


def render_html(report: rm.Report) -> str:
    """A session's model as one self-contained HTML page."""
    return render(
        "report.html.j2",
        title=report.title,
        subtitle=report.subtitle,
        report=report,
        columns=rm.SUMMARY_COLUMNS,
        charts=Charts,
    )


# --- two runs side by side (dlcprof compare) ------------------------------------------------

# A phase's delta, coloured by its verdict.
_DELTA_COLORS = {"worse": "#b4441c", "better": "#18864b", "same": svg.MUTED}


def _phase_pairs(phases: list[fc.PhaseDelta]) -> Markup:
    rows = [(p.label, p.a_s, p.b_s, p.delta_text, p.verdict) for p in phases]
    return svg.paired_bars(rows, _DELTA_COLORS)


def _compare_sweep(cmp: fc.Comparison) -> Markup | None:
    a, b = cmp.a_run, cmp.b_run
    if not (a.sweep and b.sweep):
        return None

    def dynamic(r: Run) -> str:
        return r.settings.dynamic if r.settings else text.NA

    series = [
        svg.Series(
            f"A: dynamic={dynamic(a)}",
            svg.PALETTE[0],
            [(float(i), c) for i, c in enumerate(fr.cumulative(a))],
        ),
        svg.Series(
            f"B: dynamic={dynamic(b)}",
            svg.PALETTE[1],
            [(float(i), c) for i, c in enumerate(fr.cumulative(b))],
            dashed=True,
        ),
    ]
    longest = a if len(a.sweep) >= len(b.sweep) else b
    ticks = [(float(i), str(s.size)) for i, s in enumerate(longest.sweep)]
    return svg.line_chart(
        series,
        x_ticks=ticks,
        x_label="input size (sweep step)",
        y_unit="s",
        y_label="seconds",
        title="cumulative transition cost",
    )


def render_compare_html(cmp: fc.Comparison) -> str:
    """The comparison as one self-contained HTML page."""
    major, minor = cmp.split_phases()
    top = sorted(cmp.phases, key=lambda p: -max(p.a_s or 0.0, p.b_s or 0.0))[:14]
    return render(
        "compare.html.j2",
        title=f"compare: {cmp.a_run.workload or 'A'} vs {cmp.b_run.workload or 'B'}",
        subtitle=f"A {cmp.a_label}  ·  B {cmp.b_label}",
        cmp=cmp,
        major=major,
        minor=minor,
        phase_chart=_phase_pairs(top) if top else None,
        sweep_chart=_compare_sweep(cmp),
    )
