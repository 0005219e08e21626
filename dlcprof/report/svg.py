"""Inline SVG charts for the HTML reports: no scripts, no external assets.

Charts are strings of SVG sized by ``viewBox`` (they scale with the page);
hover text comes from ``<title>`` elements, which browsers show natively.
Every string from the session is escaped here; a finished chart is returned
as ``Markup`` so the templates embed it as is (and only what this module
built). Phase colours are the compiler stages of ``dlcprof.figures.phases``.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from html import escape

from markupsafe import Markup

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import cache as fc
from dlcprof.figures import phases as fp
from dlcprof.figures.runs import run_label, run_origin
from dlcprof.session import Run

FONT = "font-family=\"ui-sans-serif,system-ui,'Segoe UI',Roboto,'Helvetica Neue',Arial,sans-serif\""
MONO = "font-family=\"'Fira Code',ui-monospace,'SFMono-Regular',Menlo,Consolas,monospace\""
AXIS = "#8a93a6"
GRID = "#e6e9ef"
INK = "#1d2330"
MUTED = "#5b6478"


def nice_ticks(lo: float, hi: float, n: int = 5) -> list[float]:
    """Round tick values covering [lo, hi]."""
    if not math.isfinite(lo) or not math.isfinite(hi) or hi <= lo:
        hi = lo + 1.0
    raw = (hi - lo) / max(n, 1)
    mag = 10 ** math.floor(math.log10(raw))
    step = next(m * mag for m in (1, 2, 2.5, 5, 10) if m * mag >= raw)
    start = math.floor(lo / step) * step
    ticks, t = [], start
    while t <= hi + step * 1e-6:
        ticks.append(round(t, 10))
        t += step
    if ticks[-1] < hi:
        ticks.append(round(t, 10))
    return ticks


def tick_label(v: float, unit: str = "") -> str:
    if unit == "s":
        return text.secs(v) if v else "0"
    if abs(v) >= 1000:
        return f"{v:,.0f}"
    return f"{v:g}"


def el(tag: str, body: str = "", **attrs: object) -> str:
    """An SVG element; ``stroke_width=2`` becomes ``stroke-width="2"``, floats
    get one decimal. ``body`` is inserted as is (escape text before)."""
    parts = []
    for k, v in attrs.items():
        if v is None:
            continue
        val = f"{v:.1f}" if isinstance(v, float) else str(v)
        parts.append(f'{k.rstrip("_").replace("_", "-")}="{escape(val)}"')
    head = f"<{tag} {' '.join(parts)}"
    return f"{head}>{body}</{tag}>" if body else f"{head}/>"


def svg_title(text: str) -> str:
    return f"<title>{escape(text)}</title>"


def _text(
    x: float,
    y: float,
    s: str,
    size: int = 11,
    anchor: str = "start",
    fill: str = MUTED,
    extra: str = "",
) -> str:
    return (
        f'<text x="{x:.1f}" y="{y:.1f}" font-size="{size}" text-anchor="{anchor}" '
        f'fill="{fill}" {extra}>'
        f"{escape(s)}</text>"
    )


def _svg(width: int, height: int, body: list[str], label: str) -> Markup:
    return Markup(
        f'<svg class="chart" viewBox="0 0 {width} {height}" width="100%" role="img" '
        f'aria-label="{escape(label)}" xmlns="http://www.w3.org/2000/svg" {FONT}>'
        + "".join(body)
        + "</svg>"
    )


def empty_chart(message: str, width: int = 1100, height: int = 90) -> Markup:
    body = [
        el(
            "rect",
            x=0.5,
            y=0.5,
            width=width - 1,
            height=height - 1,
            rx=6,
            fill="#fafbfc",
            stroke=GRID,
            stroke_dasharray="4 3",
        ),
        _text(width / 2, height / 2 + 4, message, 13, "middle", MUTED),
    ]
    return _svg(width, height, body, message)


# --- phase timeline ------------------------------------------------------------------


LANE_H = 13
LANE_GAP = 2


def _lanes(phases: list[ev.PhaseEnded]) -> list[tuple[ev.PhaseEnded, int]]:
    """Each phase with its lane: compiling thread's depths first, then one
    lane per pool thread depth."""
    main = fp.main_thread(phases)
    nested = fp.nest_phases(phases)
    threads = [main] + sorted(
        {p.thread for p, _ in nested if p.thread != main},
        key=lambda t: min(p.start_t for p in phases if p.thread == t),
    )
    base, offset = {}, 0
    for t in threads:
        base[t] = offset
        offset += 1 + max((d for p, d in nested if p.thread == t), default=0)
    return [(p, base[p.thread] + d) for p, d in nested]


def phase_timeline(run: Run, width: int = 1100, max_compiles: int = 30) -> Markup:
    """One band per compile id, phases as bars nested by depth, on a shared
    scale aligned at each compile's start (so compiles compare by length)."""
    compiles = [c for c in run.compiles.values() if c.phases]
    if not compiles:
        return empty_chart("no compile phases recorded for this run")
    shown = compiles[:max_compiles]
    origin = run_origin(run) or 0.0
    span = max(fp.phase_span(c.phases) for c in shown) or 1e-3
    left, right, top = 150, 20, 26
    plot_w = width - left - right
    ticks = nice_ticks(0, span, 6)
    scale = plot_w / ticks[-1]
    body: list[str] = []
    y = top
    bands = []
    for c in shown:
        lanes = _lanes(c.phases)
        n_lanes = 1 + max(lane for _, lane in lanes)
        h = n_lanes * (LANE_H + LANE_GAP) + 10
        bands.append((c, lanes, y, h))
        y += h + 8
    height = y + 24
    # Grid and axis.
    for t in ticks:
        x = left + t * scale
        body.append(
            f'<line x1="{x:.1f}" y1="{top - 6}" x2="{x:.1f}" y2="{y - 4}" stroke="{GRID}"/>'
        )
        body.append(_text(x, y + 10, tick_label(t, "s"), 10, "middle", AXIS))
    body.append(_text(left, 14, "time since the compile started →", 11, "start", MUTED))
    for i, (c, lanes, by, h) in enumerate(bands):
        if i % 2 == 0:
            body.append(f'<rect x="0" y="{by - 4}" width="{width}" height="{h}" fill="#f7f8fb"/>')
        start = min(p.start_t for p in c.phases)
        body.append(_text(10, by + 12, c.compile_id, 12, "start", INK, f'font-weight="600" {MONO}'))
        wall = text.secs(c.wall_s if c.wall_s is not None else fp.phase_span(c.phases))
        at = text.offset_secs(start - origin)
        body.append(_text(10, by + 27, f"{wall} · at {at}", 10, "start", MUTED))
        if c.record is not None and c.record.recompile_reason:
            body.append(_text(10, by + 40, "recompile", 10, "start", "#b4441c"))
        main = fp.main_thread(c.phases)
        pool_lanes = sorted({lane for p, lane in lanes if p.thread != main})
        for lane in pool_lanes[:1]:
            # Pool threads (g++ builds) get their own lanes below the compiling thread.
            ly = by + lane * (LANE_H + LANE_GAP)
            body.append(_text(left - 8, ly + 10, "pool threads", 9, "end", AXIS))
        for p, lane in lanes:
            x = left + (p.start_t - start) * scale
            w = max(p.duration_s * scale, 1.0)
            ly = by + lane * (LANE_H + LANE_GAP)
            stage = fp.stage_of(p.name)
            color = stage.color
            tip = (
                f"{p.name}\n{text.secs(p.duration_s)} ({stage.name}), "
                f"starts +{p.start_t - start:.3f} s"
            )
            if p.cache_state:
                tip += f"\ncache: {fc.state_word(run, p.cache_state)}"
            opacity = f"{0.95 - min(lane, 6) * 0.08:.2f}"
            body.append(
                "<g>"
                + svg_title(tip)
                + el(
                    "rect",
                    x=x,
                    y=ly,
                    width=w,
                    height=LANE_H,
                    rx=2,
                    fill=color,
                    fill_opacity=opacity,
                )
            )
            label = f"{p.name} {text.secs(p.duration_s)}"
            if w > 6.3 * len(label) + 8:
                body.append(_text(x + 4, ly + 11, label, 10, "start", "#fff"))
            elif w > 6.3 * len(p.name) + 8:
                body.append(_text(x + 4, ly + 11, p.name, 10, "start", "#fff"))
            body.append("</g>")
    # Legend: the compiler stages, as every view colours them.
    lx: float = left + plot_w
    for st in reversed(fp.STAGES):
        lx -= 9 * len(st.name) * 0.75 + 26
        body.append(el("rect", x=lx, y=5, width=10, height=10, rx=2, fill=st.color))
        body.append(_text(lx + 14, 14, st.name, 11, "start", MUTED))
    if len(compiles) > len(shown):
        body.append(
            _text(
                left,
                height - 2,
                f"… {len(compiles) - len(shown)} more compiles in session.json",
                11,
                "start",
                MUTED,
            )
        )
        height += 6
    return _svg(width, height, body, f"compile phase timeline of {run_label(run)}")


# --- line charts ----------------------------------------------------------------------


@data
class Series:
    label: str
    color: str
    points: list[tuple[float, float | None]]  # None breaks the line
    dashed: bool = False


PALETTE = ("#3b6fd8", "#e0641e", "#1f9e89", "#8a5cd0", "#c43d6b", "#7a8599")


def line_chart(
    series: Sequence[Series],
    *,
    width: int = 1100,
    height: int = 260,
    x_label: str = "",
    y_label: str = "",
    y_unit: str = "",
    y_max: float | None = None,
    x_ticks: list[tuple[float, str]] | None = None,
    bands: list[tuple[float, float, str]] | None = None,
    markers: bool = True,
    title: str = "chart",
) -> Markup:
    pts = [(x, y) for s in series for x, y in s.points if y is not None]
    if not pts:
        return empty_chart("no data", width)
    left, right, top, bottom = 64, 20, 28, 38
    xs = [x for x, _ in pts]
    x0, x1 = min(xs), max(xs)
    if x1 <= x0:
        x1 = x0 + 1.0
    ymax = y_max if y_max is not None else max(y for _, y in pts)
    yt = nice_ticks(0.0, ymax if ymax > 0 else 1.0, 4)
    pw, ph = width - left - right, height - top - bottom

    def sx(x: float) -> float:
        return left + (x - x0) / (x1 - x0) * pw

    def sy(y: float) -> float:
        return top + ph - y / yt[-1] * ph

    body: list[str] = []
    for b0, b1, blabel in bands or []:
        bx0, bx1 = sx(max(b0, x0)), sx(min(b1, x1))
        if bx1 > bx0:
            rect = el("rect", x=bx0, y=top, width=bx1 - bx0, height=ph, fill="#eef2fb")
            body.append(f"<g>{svg_title(blabel)}{rect}</g>")
            body.append(_text(bx0 + 3, top + 11, blabel, 10, "start", "#6b7895"))
    for t in yt:
        ty = sy(t)
        body.append(
            f'<line x1="{left}" y1="{ty:.1f}" x2="{left + pw}" y2="{ty:.1f}" stroke="{GRID}"/>'
        )
        body.append(_text(left - 6, ty + 4, tick_label(t, y_unit), 10, "end", AXIS))
    if x_ticks is None:
        x_ticks = [(t, tick_label(t)) for t in nice_ticks(x0, x1, 8) if x0 <= t <= x1]
    for xv, xl in x_ticks:
        body.append(el("line", x1=sx(xv), y1=top + ph, x2=sx(xv), y2=top + ph + 4, stroke=AXIS))
        body.append(_text(sx(xv), top + ph + 16, xl, 10, "middle", AXIS))
    body.append(
        f'<line x1="{left}" y1="{top + ph}" x2="{left + pw}" y2="{top + ph}" stroke="{AXIS}"/>'
    )
    if x_label:
        body.append(_text(left + pw / 2, height - 4, x_label, 11, "middle", MUTED))
    if y_label:
        body.append(_text(left - 52, top - 12, y_label, 11, "start", MUTED))
    for s in series:
        segs: list[list[tuple[float, float]]] = [[]]
        for x, y in s.points:
            if y is None:
                segs.append([])
            else:
                segs[-1].append((sx(x), sy(y)))
        dash = "6 4" if s.dashed else None
        for seg in segs:
            if len(seg) > 1:
                d = " ".join(f"{x:.1f},{y:.1f}" for x, y in seg)
                body.append(
                    el(
                        "polyline",
                        points=d,
                        fill="none",
                        stroke=s.color,
                        stroke_width=2,
                        stroke_linejoin="round",
                        stroke_dasharray=dash,
                    )
                )
        if markers:
            for x, y in s.points:
                if y is not None:
                    shown = tick_label(y, y_unit) if y_unit == "s" else f"{y:.4g}"
                    tip = svg_title(f"{s.label}: {shown}")
                    body.append(
                        el(
                            "circle",
                            tip,
                            cx=sx(x),
                            cy=sy(y),
                            r=3.2,
                            fill="#fff",
                            stroke=s.color,
                            stroke_width=2,
                        )
                    )
    # Legend, top right.
    lx = left + pw
    for s in reversed(series):
        lx -= 7 * len(s.label) + 30
        body.append(el("line", x1=lx, y1=10, x2=lx + 16, y2=10, stroke=s.color, stroke_width=3))
        body.append(_text(lx + 21, 14, s.label, 11, "start", INK))
    return _svg(width, height, body, title)


# --- bars -----------------------------------------------------------------------------


EAGER, COMPILED = "#7a8599", "#3b6fd8"
EAGER_STEADY, COMPILED_STEADY = "#b3bac8", "#93b0ea"  # the same, with the allocator held steady


def benchmark_bars(rows: list[tuple[str, float, float, str]], width: int = 1100) -> Markup:
    """One bar per (label, ms per call, spread, colour), the spread drawn around it."""
    left, right = 130, 130
    hi = max(v + spread / 2 for _, v, spread, _ in rows) or 1.0
    scale = (width - left - right) / hi
    body: list[str] = []
    for i, (label, v, spread, color) in enumerate(rows):
        y = 8 + i * 34
        body.append(_text(left - 10, y + 17, label, 12, "end", INK))
        tip = svg_title(f"{label}: {text.ms(v)} {text.spread(spread)} (IQR)")
        body.append(
            el("rect", tip, x=left, y=y, width=max(v * scale, 1.0), height=24, rx=3, fill=color)
        )
        if spread > 0:
            # The IQR drawn as its width around the median, clipped at zero.
            a, b = left + max(v - spread / 2, 0.0) * scale, left + (v + spread / 2) * scale
            d = f"M{a:.1f},{y + 12} H{b:.1f} M{a:.1f},{y + 6} V{y + 18} M{b:.1f},{y + 6} V{y + 18}"
            body.append(el("path", d=d, stroke=INK, stroke_width=1.2, fill="none"))
        body.append(
            _text(
                left + max(v + spread / 2, v) * scale + 8,
                y + 17,
                f"{text.ms(v)}/call",
                12,
                "start",
                INK,
                f"{MONO}",
            )
        )
    return _svg(width, 10 + 34 * len(rows), body, "eager vs compiled time per call")


def share_bar(fraction: float | None, color: str = "#3b6fd8") -> Markup:
    """A small inline bar for a table cell."""
    if fraction is None:
        return Markup("")
    w = max(0.0, min(fraction, 1.0)) * 100
    return Markup(
        '<svg class="sharebar" viewBox="0 0 100 8" width="100" height="8" aria-hidden="true">'
        + el("rect", width=100, height=8, rx=2, fill=GRID)
        + el("rect", width=w, height=8, rx=2, fill=color)
        + "</svg>"
    )


def paired_bars(
    rows: list[tuple[str, float | None, float | None, str, str]],
    colors: dict[str, str],
    width: int = 1100,
) -> Markup:
    """Paired bars on one scale, A grey and B blue: (label, A seconds, B seconds,
    delta words, delta verdict) per row; None where a side has no bar."""
    left, right, row_h = 300, 150, 30
    hi = max(max(a or 0.0, b or 0.0) for _, a, b, _, _ in rows) or 1.0
    scale = (width - left - right) / hi
    body = []
    for i, (label, a_s, b_s, delta, verdict) in enumerate(rows):
        y = 24 + i * row_h
        body.append(_text(left - 10, y + 13, label, 11, "end", INK, MONO))
        for j, (v, color, side) in enumerate(((a_s, "#9aa3b5", "A"), (b_s, "#3b6fd8", "B"))):
            if v is None:
                continue
            tip = svg_title(f"{side}: {text.secs(v)}")
            body.append(
                el(
                    "rect",
                    tip,
                    x=left,
                    y=y + j * 11,
                    width=max(v * scale, 1.0),
                    height=10,
                    rx=2,
                    fill=color,
                )
            )
        end = max(a_s or 0.0, b_s or 0.0) * scale + left + 8
        body.append(_text(end, y + 14, delta, 11, "start", colors[verdict]))
    body.append(el("rect", x=left, y=6, width=10, height=10, rx=2, fill="#9aa3b5"))
    body.append(_text(left + 14, 15, "A (before)", 11))
    body.append(el("rect", x=left + 100, y=6, width=10, height=10, rx=2, fill="#3b6fd8"))
    body.append(_text(left + 114, 15, "B (after)", 11))
    return _svg(width, 30 + len(rows) * row_h, body, "compile time by phase, A vs B")
