"""Two sessions side by side: what changed between two runs.

``compare`` diffs the latest run of each session (or runs chosen by index or
run id): compile time per phase, kernels added / removed / changed, graph
breaks and recompiles added or gone, and the headline numbers. Renderers turn
the Comparison into Rich tables for the terminal and a self-contained page.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from html import escape
from typing import Any

from rich.console import Group
from rich.table import Table
from rich.text import Text

from dlcprof.report import fmt, svg
from dlcprof.report import summary as sm
from dlcprof.report.errors import ReportError
from dlcprof.session import Kernel, Run, Session

__all__ = [
    "Comparison",
    "KernelChange",
    "MetricDelta",
    "PhaseDelta",
    "compare",
    "render_compare_html",
    "render_compare_table",
]


@dataclass
class PhaseDelta:
    name: str
    a_s: float | None  # None: the phase did not run on that side
    b_s: float | None
    pool: bool = False

    @property
    def delta(self) -> float:
        return (self.b_s or 0.0) - (self.a_s or 0.0)


@dataclass
class KernelChange:
    a: Kernel
    b: Kernel
    how: str  # "fused ops changed" | "renamed"


@dataclass
class MetricDelta:
    name: str
    a: float | None
    b: float | None
    unit: str  # "s" | "ms" | "x" | "calls" | "count"
    lower_is_better: bool = True
    note: str = ""  # why a side is missing
    neutral: bool = False  # a change, but neither better nor worse (kernel count)

    @property
    def delta(self) -> float | None:
        if self.a is None or self.b is None:
            return None
        return self.b - self.a

    @property
    def verdict(self) -> str:
        """ "better" | "worse" | "same" | "" (not comparable)."""
        d = self.delta
        if d is None and self.unit == "calls" and not self.note:
            # Break-even: None is "never", so a side turning to never is worse.
            if (self.a is None) != (self.b is None):
                return "worse" if self.b is None else "better"
        if d is None or self.neutral:
            return "" if d is None or d else "same"
        base = max(abs(self.a or 0.0), abs(self.b or 0.0), 1e-12)
        if abs(d) / base < 0.02:  # within 2%: noise for timings
            return "same"
        return "better" if (d < 0) == self.lower_is_better else "worse"


@dataclass
class Comparison:
    a_label: str
    b_label: str
    a_run: Run
    b_run: Run
    settings: list[tuple[str, Any, Any]]  # only the keys that differ
    metrics: list[MetricDelta]
    phases: list[PhaseDelta]
    kernels_added: list[Kernel] = field(default_factory=list)
    kernels_removed: list[Kernel] = field(default_factory=list)
    kernels_changed: list[KernelChange] = field(default_factory=list)
    kernels_same: int = 0
    # Same kernel, compiled a different number of times (e.g. once per shape).
    kernels_recompiled: list[tuple[str, int, int]] = field(default_factory=list)
    graph_breaks_added: list[tuple[str, str]] = field(default_factory=list)  # (reason, location)
    graph_breaks_gone: list[tuple[str, str]] = field(default_factory=list)
    recompiles_added: list[str] = field(default_factory=list)  # reasons, compile id stripped
    recompiles_gone: list[str] = field(default_factory=list)

    def metric(self, name: str) -> MetricDelta:
        return next(m for m in self.metrics if m.name == name)


# --- comparing ----------------------------------------------------------------------


def pick_run(session: Session, which: int | str | None, side: str) -> Run:
    runs = list(session.runs.values())
    if not runs:
        raise ReportError(f"session {side} has no runs to compare")
    if which is None:
        return runs[-1]
    if isinstance(which, str) and which in session.runs:
        return session.runs[which]
    try:
        index = int(which)
    except (TypeError, ValueError):
        raise ReportError(f"session {side} has no run {which!r}") from None
    # 1-based like the reports' "Run N"; negative counts from the end.
    if index >= 1 and index <= len(runs):
        return runs[index - 1]
    if -len(runs) <= index < 0:
        return runs[index]
    raise ReportError(f"session {side} has no run {which!r} (it has {len(runs)})")


def _multiset_diff(a: list[Any], b: list[Any]) -> tuple[list[Any], list[Any]]:
    ca, cb = Counter(a), Counter(b)
    added = list((cb - ca).elements())
    gone = list((ca - cb).elements())
    return added, gone


def _unique(kernels: list[Kernel]) -> tuple[list[Kernel], Counter[tuple[str, tuple[str, ...]]]]:
    """One kernel per (name, fused ops), with how many compiles generated it:
    a recompile per shape regenerates the same kernel, which is not a change."""
    seen: dict[tuple[str, tuple[str, ...]], Kernel] = {}
    counts: Counter[tuple[str, tuple[str, ...]]] = Counter()
    for k in kernels:
        key = (k.name, tuple(sorted(k.fused_ops)))
        seen.setdefault(key, k)
        counts[key] += 1
    return list(seen.values()), counts


def _diff_kernels(cmp: Comparison, a_all: list[Kernel], b_all: list[Kernel]) -> None:
    a, count_a = _unique(a_all)
    b, count_b = _unique(b_all)
    for key in count_a.keys() & count_b.keys():
        if count_a[key] != count_b[key]:
            cmp.kernels_recompiled.append((key[0], count_a[key], count_b[key]))
    unmatched_a, unmatched_b = list(a), list(b)
    # 1. Same name: the same kernel; changed when it fuses different ops.
    for kb in list(unmatched_b):
        ka = next((k for k in unmatched_a if k.name == kb.name), None)
        if ka is None:
            continue
        unmatched_a.remove(ka)
        unmatched_b.remove(kb)
        if Counter(ka.fused_ops) == Counter(kb.fused_ops):
            cmp.kernels_same += 1
        else:
            cmp.kernels_changed.append(KernelChange(ka, kb, "fused ops changed"))
    # 2. Different names, same fused-op set: the same fusion under a new name.
    for kb in list(unmatched_b):
        if not kb.fused_ops:
            continue
        ka = next((k for k in unmatched_a if set(k.fused_ops) == set(kb.fused_ops)), None)
        if ka is None:
            continue
        unmatched_a.remove(ka)
        unmatched_b.remove(kb)
        cmp.kernels_changed.append(KernelChange(ka, kb, "renamed"))
    cmp.kernels_added = unmatched_b
    cmp.kernels_removed = unmatched_a


def _metrics(a: Run, b: Run) -> list[MetricDelta]:
    def bench(r: Run, attr: str) -> float | None:
        return getattr(r.benchmark, attr) if r.benchmark is not None else None

    def why(r: Run) -> str:
        return "" if r.benchmark is not None else "no benchmark"

    note = " / ".join(x for x in (why(a) and f"A: {why(a)}", why(b) and f"B: {why(b)}") if x)
    out = [
        MetricDelta(
            "compile wall",
            a.compile_wall_s if a.compiles else None,
            b.compile_wall_s if b.compiles else None,
            "s",
        ),
        MetricDelta("compiles", len(a.compiles), len(b.compiles), "count"),
        MetricDelta("fused kernels", len(a.kernels), len(b.kernels), "count", neutral=True),
        MetricDelta("recompiles", len(a.recompiles), len(b.recompiles), "count"),
        MetricDelta("graph breaks", len(a.graph_breaks), len(b.graph_breaks), "count"),
    ]
    if a.benchmark is not None or b.benchmark is not None:
        out += [
            MetricDelta(
                "eager", bench(a, "eager_ms"), bench(b, "eager_ms"), "ms", note=note, neutral=True
            ),
            MetricDelta(
                "compiled", bench(a, "compiled_ms"), bench(b, "compiled_ms"), "ms", note=note
            ),
            MetricDelta(
                "speedup",
                bench(a, "speedup"),
                bench(b, "speedup"),
                "x",
                lower_is_better=False,
                note=note,
            ),
            MetricDelta(
                "compile_s (benchmark)",
                bench(a, "compile_s"),
                bench(b, "compile_s"),
                "s",
                note=note,
            ),
            MetricDelta(
                "break-even",
                bench(a, "break_even_iters"),
                bench(b, "break_even_iters"),
                "calls",
                note=note,
            ),
        ]
    if a.sweep or b.sweep:

        def mean_latency(r: Run) -> float | None:
            return sum(s.latency_ms for s in r.sweep) / len(r.sweep) if r.sweep else None

        out += [
            MetricDelta(
                "sweep transition cost",
                sm.sweep_total(a),
                sm.sweep_total(b),
                "s",
                note="no sweep" if not (a.sweep and b.sweep) else "",
            ),
            MetricDelta("sweep mean latency", mean_latency(a), mean_latency(b), "ms"),
        ]
    return out


def compare(
    a: Session, b: Session, run_a: int | str | None = None, run_b: int | str | None = None
) -> Comparison:
    """Diff run ``run_a`` of ``a`` against run ``run_b`` of ``b`` (default: the
    latest of each; an int is 1-based as in the reports, negative from the end,
    a str is a run id). B is "after": deltas are B - A."""
    ra, rb = pick_run(a, run_a, "A"), pick_run(b, run_b, "B")
    keys = list(dict.fromkeys([*ra.settings, *rb.settings]))
    settings = [
        (k, ra.settings.get(k), rb.settings.get(k))
        for k in keys
        if ra.settings.get(k) != rb.settings.get(k)
    ]
    ta = {(t.pool, t.name): t.total_s for t in sm.phase_totals(ra)}
    tb = {(t.pool, t.name): t.total_s for t in sm.phase_totals(rb)}
    phases = [
        PhaseDelta(name, ta.get((pool, name)), tb.get((pool, name)), pool)
        for pool, name in dict.fromkeys([*ta, *tb])
    ]
    cmp = Comparison(
        a_label=ra.label,
        b_label=rb.label,
        a_run=ra,
        b_run=rb,
        settings=settings,
        metrics=_metrics(ra, rb),
        phases=phases,
    )
    _diff_kernels(cmp, ra.kernels, rb.kernels)
    gb_a = [(g.reason, g.location) for g in ra.graph_breaks]
    gb_b = [(g.reason, g.location) for g in rb.graph_breaks]
    cmp.graph_breaks_added, cmp.graph_breaks_gone = _multiset_diff(gb_a, gb_b)
    rc_a = [sm.normalize_reason(r.reason) for r in ra.recompiles]
    rc_b = [sm.normalize_reason(r.reason) for r in rb.recompiles]
    cmp.recompiles_added, cmp.recompiles_gone = _multiset_diff(rc_a, rc_b)
    return cmp


# --- formatting -----------------------------------------------------------------------


def metric_text(value: float | None, unit: str, note: str = "") -> str:
    if value is None:
        if unit == "calls" and not note:
            return "never"
        return fmt.na(note) if note else fmt.NA
    if unit == "s":
        return fmt.secs(value)
    if unit == "ms":
        return fmt.ms(value)
    if unit == "x":
        return fmt.speedup(value)
    if unit == "calls":
        return f"{fmt.count(max(value, 1.0))} calls"
    return f"{value:g}"


def _side_note(m: MetricDelta, side: str) -> str:
    for part in m.note.split(" / "):
        if part.startswith(f"{side}: "):
            return part[3:]
    return "" if m.unit == "calls" else m.note


def delta_text(m: MetricDelta) -> str:
    d = m.delta
    if d is None and m.verdict in ("better", "worse"):
        return "now pays off" if m.verdict == "better" else "now never"
    if d is None:
        return "—"
    if m.unit == "count":
        return f"{d:+g}"
    rel = f" ({d / m.a * 100:+.0f}%)" if m.a else ""
    if m.unit == "s":
        return fmt.signed_secs(d) + rel
    if m.unit == "ms":
        return ("+" if d > 0 else "-") + fmt.ms(abs(d)) + rel
    if m.unit == "x":
        return f"{d:+.2f}x"
    return f"{d:+,.0f}" + rel


VERDICT_STYLE = {"better": "green", "worse": "red", "same": "dim", "": ""}


def render_compare_table(cmp: Comparison) -> Group:
    """Rich renderables for the terminal: headline numbers, phases, kernels, changes."""
    parts: list[Any] = [
        Text.assemble(("A ", "bold"), cmp.a_label, "\n", ("B ", "bold"), cmp.b_label)
    ]
    if cmp.settings:
        t = Table(title="settings that differ", title_justify="left", expand=False)
        t.add_column("setting")
        t.add_column("A")
        t.add_column("B")
        for k, va, vb in cmp.settings:
            t.add_row(k, fmt.value(va), fmt.value(vb))
        parts.append(t)

    t = Table(title="headline (delta = B - A)", title_justify="left")
    t.add_column("metric")
    t.add_column("A", justify="right")
    t.add_column("B", justify="right")
    t.add_column("delta", justify="right")
    for m in cmp.metrics:
        style = VERDICT_STYLE[m.verdict]
        t.add_row(
            m.name,
            metric_text(m.a, m.unit, _side_note(m, "A")),
            metric_text(m.b, m.unit, _side_note(m, "B")),
            Text(delta_text(m), style=style),
        )
    parts.append(t)

    t = Table(title="compile time by phase", title_justify="left")
    t.add_column("phase")
    t.add_column("A", justify="right")
    t.add_column("B", justify="right")
    t.add_column("delta", justify="right")
    major, minor = split_phases(cmp.phases)
    for p in major:
        d = p.delta
        style = "red" if d > 0.005 else "green" if d < -0.005 else "dim"
        t.add_row(
            p.name + (" (pool)" if p.pool else ""),
            fmt.secs(p.a_s, "not run") if p.a_s is not None else "—",
            fmt.secs(p.b_s, "not run") if p.b_s is not None else "—",
            Text(fmt.signed_secs(d), style=style),
        )
    if minor:
        a_sum = sum(p.a_s or 0.0 for p in minor)
        b_sum = sum(p.b_s or 0.0 for p in minor)
        t.add_row(
            Text(f"… {len(minor)} shorter phases", style="dim"),
            Text(fmt.secs(a_sum), style="dim"),
            Text(fmt.secs(b_sum), style="dim"),
            Text(fmt.signed_secs(b_sum - a_sum), style="dim"),
        )
    parts.append(t)

    t = Table(title=f"kernels ({cmp.kernels_same} unchanged)", title_justify="left")
    t.add_column("change")
    t.add_column("kernel")
    t.add_column("fused ops")
    for k in cmp.kernels_added:
        t.add_row(Text("added", style="green"), k.name, ", ".join(k.fused_ops))
    for k in cmp.kernels_removed:
        t.add_row(Text("removed", style="red"), k.name, ", ".join(k.fused_ops))
    for c in cmp.kernels_changed:
        name = c.b.name if c.a.name == c.b.name else f"{c.a.name} → {c.b.name}"
        t.add_row(
            Text(c.how, style="yellow"),
            name,
            f"{', '.join(c.a.fused_ops)} → {', '.join(c.b.fused_ops)}",
        )
    for name, n_a, n_b in cmp.kernels_recompiled:
        t.add_row(
            Text("compiled", style="dim"),
            name,
            f"generated {n_a}× in A, {n_b}× in B (once a compile)",
        )
    if t.row_count:
        parts.append(t)
    else:
        parts.append(
            Text(f"kernels: {cmp.kernels_same} unchanged, none added or removed", style="dim")
        )

    t = Table(title="graph breaks and recompiles", title_justify="left")
    t.add_column("change")
    t.add_column("kind")
    t.add_column("reason")
    t.add_column("location")
    for reason, loc in cmp.graph_breaks_added:
        t.add_row(Text("added", style="red"), "graph break", reason, loc)
    for reason, loc in cmp.graph_breaks_gone:
        t.add_row(Text("gone", style="green"), "graph break", reason, loc)
    for reason in cmp.recompiles_added:
        t.add_row(
            Text("added", style="red"),
            "recompile",
            fmt.short_reason(_newest(reason), 100),
            "",
        )
    for reason in cmp.recompiles_gone:
        t.add_row(
            Text("gone", style="green"),
            "recompile",
            fmt.short_reason(_newest(reason), 100),
            "",
        )
    if t.row_count:
        parts.append(t)
    else:
        parts.append(Text("graph breaks and recompiles: no change", style="dim"))
    return Group(*parts)


def render_compare_html(cmp: Comparison) -> str:
    """The comparison as one self-contained HTML page."""
    from dlcprof.report.html import e, page, table  # the page chrome lives there

    body = []
    body.append(
        '<section class="card"><h2>Runs compared</h2><table class="kv"><tbody>'
        f"<tr><td>A (before)</td><td>{e(cmp.a_label)} <code>{e(cmp.a_run.run_id)}</code></td></tr>"
        f"<tr><td>B (after)</td><td>{e(cmp.b_label)} <code>{e(cmp.b_run.run_id)}</code></td></tr>"
        "</tbody></table>"
    )
    if cmp.settings:
        rows = [
            [f"<code>{e(k)}</code>", e(fmt.value(va)), e(fmt.value(vb))]
            for k, va, vb in cmp.settings
        ]
        body.append("<h3>Settings that differ</h3>" + table(["setting", "A", "B"], rows))
    body.append("</section>")

    colors = {
        "better": "var(--good)",
        "worse": "var(--bad)",
        "same": "var(--muted)",
        "": "var(--muted)",
    }
    rows = [
        [
            e(m.name),
            e(metric_text(m.a, m.unit, _side_note(m, "A"))),
            e(metric_text(m.b, m.unit, _side_note(m, "B"))),
            f'<span style="color:{colors[m.verdict]};font-weight:600">{e(delta_text(m))}</span>',
        ]
        for m in cmp.metrics
    ]
    body.append(
        '<section class="card"><h2>Headline</h2>'
        + table(["metric", "A", "B", "delta (B − A)"], rows, {1, 2, 3})
        + "</section>"
    )

    # Phases: paired bars, A grey and B blue, on one scale.
    out = ['<section class="card"><h2>Compile time by phase</h2>']
    top = sorted(cmp.phases, key=lambda p: -max(p.a_s or 0.0, p.b_s or 0.0))[:14]
    if top:
        out.append(_phase_pairs_svg(top))

    def phase_rows(phases: list[PhaseDelta]) -> list[list[str]]:
        return [
            [
                f'<span class="mono">{e(p.name)}</span>'
                + (' <span class="muted">(pool)</span>' if p.pool else ""),
                e(fmt.secs(p.a_s)) if p.a_s is not None else "—",
                e(fmt.secs(p.b_s)) if p.b_s is not None else "—",
                f'<span style="color:{_delta_color(p.delta)}">{e(fmt.signed_secs(p.delta))}</span>',
            ]
            for p in phases
        ]

    major, minor = split_phases(cmp.phases)
    if not cmp.phases:
        out.append('<p class="na">n/a (no compile phases on either side)</p>')
    else:
        out.append(table(["phase", "A", "B", "delta"], phase_rows(major), {1, 2, 3}))
    if minor:
        out.append(
            f"<details><summary>{len(minor)} shorter phases</summary>"
            + table(["phase", "A", "B", "delta"], phase_rows(minor), {1, 2, 3})
            + "</details>"
        )
    out.append("</section>")
    body.append("".join(out))

    a, b = cmp.a_run, cmp.b_run
    if a.sweep and b.sweep:
        series = [
            svg.Series(
                f"A: dynamic={a.settings.get('dynamic')}",
                svg.PALETTE[0],
                [(float(i), c) for i, c in enumerate(a.cumulative_transition_s)],
            ),
            svg.Series(
                f"B: dynamic={b.settings.get('dynamic')}",
                svg.PALETTE[1],
                [(float(i), c) for i, c in enumerate(b.cumulative_transition_s)],
                dashed=True,
            ),
        ]
        longest = a if len(a.sweep) >= len(b.sweep) else b
        ticks = [(float(i), str(s.size)) for i, s in enumerate(longest.sweep)]
        body.append(
            '<section class="card"><h2>Cumulative shape-transition cost</h2>'
            + svg.line_chart(
                series,
                x_ticks=ticks,
                x_label="input size (sweep step)",
                y_unit="s",
                y_label="seconds",
                title="cumulative transition cost",
            )
            + "</section>"
        )

    out = [
        '<section class="card"><h2>Kernels</h2>',
        f'<p class="sub">{cmp.kernels_same} unchanged.</p>',
    ]
    rows = []
    for k in cmp.kernels_added:
        rows.append(
            [
                '<span class="pill ok">added</span>',
                f'<span class="kname">{e(k.name)}</span>',
                f'<span class="ops">{e(", ".join(k.fused_ops))}</span>',
            ]
        )
    for k in cmp.kernels_removed:
        rows.append(
            [
                '<span class="pill error">removed</span>',
                f'<span class="kname">{e(k.name)}</span>',
                f'<span class="ops">{e(", ".join(k.fused_ops))}</span>',
            ]
        )
    for c in cmp.kernels_changed:
        name = e(c.b.name) if c.a.name == c.b.name else f"{e(c.a.name)} → {e(c.b.name)}"
        rows.append(
            [
                f'<span class="pill cancelled">{e(c.how)}</span>',
                f'<span class="kname">{name}</span>',
                f'<span class="ops">{e(", ".join(c.a.fused_ops))} → '
                f"{e(', '.join(c.b.fused_ops))}</span>",
            ]
        )
    for name, n_a, n_b in cmp.kernels_recompiled:
        rows.append(
            [
                '<span class="pill">compiled</span>',
                f'<span class="kname">{e(name)}</span>',
                f"generated {n_a}× in A, {n_b}× in B (once a compile)",
            ]
        )
    out.append(
        table(["change", "kernel", "fused ops"], rows)
        if rows
        else '<p class="muted">No kernel added, removed or changed.</p>'
    )
    out.append("</section>")
    body.append("".join(out))

    rows = []
    for reason, loc in cmp.graph_breaks_added:
        rows.append(
            [
                '<span class="pill error">added</span>',
                "graph break",
                e(reason),
                f"<code>{e(loc)}</code>",
            ]
        )
    for reason, loc in cmp.graph_breaks_gone:
        rows.append(
            [
                '<span class="pill ok">gone</span>',
                "graph break",
                e(reason),
                f"<code>{e(loc)}</code>",
            ]
        )
    for reason in cmp.recompiles_added:
        rows.append(
            [
                '<span class="pill error">added</span>',
                "recompile",
                e(fmt.short_reason(_newest(reason), 200)),
                "",
            ]
        )
    for reason in cmp.recompiles_gone:
        rows.append(
            [
                '<span class="pill ok">gone</span>',
                "recompile",
                e(fmt.short_reason(_newest(reason), 200)),
                "",
            ]
        )
    body.append(
        '<section class="card"><h2>Graph breaks and recompiles</h2>'
        + (
            table(["change", "kind", "reason", "location"], rows)
            if rows
            else '<p class="muted">No change.</p>'
        )
        + "</section>"
    )
    title = f"compare: {cmp.a_run.workload or 'A'} vs {cmp.b_run.workload or 'B'}"
    subtitle = escape(f"A {cmp.a_label}  ·  B {cmp.b_label}")
    return page(title, subtitle, body)


def split_phases(
    phases: list[PhaseDelta], min_s: float = 0.01, min_share: float = 0.005
) -> tuple[list[PhaseDelta], list[PhaseDelta]]:
    """(phases worth a row, the many short passes): a real compile has ~60
    phases, most of them a millisecond."""
    top = max((max(p.a_s or 0.0, p.b_s or 0.0) for p in phases), default=0.0)
    cut = max(min_s, top * min_share)
    major = [p for p in phases if max(p.a_s or 0.0, p.b_s or 0.0) >= cut]
    minor = [p for p in phases if p not in major]
    return major, minor


def _newest(reason: str) -> str:
    """The first (newest) failed guard of a normalized reason, plus a count."""
    parts = reason.split("; ")
    return parts[0] + (f" (+{len(parts) - 1} older entries)" if len(parts) > 1 else "")


def _delta_color(d: float) -> str:
    return "var(--bad)" if d > 0.005 else "var(--good)" if d < -0.005 else "var(--muted)"


def _phase_pairs_svg(phases: list[PhaseDelta], width: int = 1100) -> str:
    left, right, row_h = 300, 150, 30
    hi = max(max(p.a_s or 0.0, p.b_s or 0.0) for p in phases) or 1.0
    scale = (width - left - right) / hi
    body = []
    for i, p in enumerate(phases):
        y = 24 + i * row_h
        body.append(
            svg._text(
                left - 10,
                y + 13,
                p.name + (" (pool)" if p.pool else ""),
                11,
                "end",
                svg.INK,
                svg.MONO,
            )
        )
        for j, (v, color, side) in enumerate(((p.a_s, "#9aa3b5", "A"), (p.b_s, "#3b6fd8", "B"))):
            if v is None:
                continue
            w = max(v * scale, 1.0)
            body.append(
                f'<rect x="{left}" y="{y + j * 11}" width="{w:.1f}" height="10" rx="2" '
                f'fill="{color}"><title>{side}: {escape(fmt.secs(v))}</title></rect>'
            )
        end = max(p.a_s or 0.0, p.b_s or 0.0) * scale + left + 8
        body.append(
            svg._text(
                end,
                y + 14,
                fmt.signed_secs(p.delta),
                11,
                "start",
                "#b4441c" if p.delta > 0.005 else "#18864b" if p.delta < -0.005 else svg.MUTED,
            )
        )
    body.append(f'<rect x="{left}" y="6" width="10" height="10" rx="2" fill="#9aa3b5"/>')
    body.append(svg._text(left + 14, 15, "A (before)", 11))
    body.append(f'<rect x="{left + 100}" y="6" width="10" height="10" rx="2" fill="#3b6fd8"/>')
    body.append(svg._text(left + 114, 15, "B (after)", 11))
    return svg._svg(width, 30 + len(phases) * row_h, body, "compile time by phase, A vs B")
