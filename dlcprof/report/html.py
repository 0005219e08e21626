"""The session as one self-contained HTML page.

No network: inline CSS, inline SVG charts, no scripts, no web fonts (a
monospace stack that uses Fira Code when installed). Every string from the
session goes through ``escape``: kernel sources are full of ``<``.
"""

from __future__ import annotations

from html import escape
from typing import Any

import dlcprof
from dlcprof.report import fmt, svg
from dlcprof.report import summary as sm
from dlcprof.report.markdown import no_benchmark_reason, repro_command
from dlcprof.report.schema import _iso, environment
from dlcprof.session import Run, Session

CSS = """
:root{--bg:#f4f5f8;--card:#fff;--ink:#1d2330;--muted:#5b6478;--line:#e3e6ec;--accent:#3b6fd8;
--good:#18864b;--bad:#b4441c;--warn:#9a6700;--code:#f6f8fa;
--mono:'Fira Code',ui-monospace,'SFMono-Regular',Menlo,Consolas,'Liberation Mono',monospace}
*{box-sizing:border-box}
html{background:var(--bg)}
body{margin:0;color:var(--ink);
font:14px/1.5 ui-sans-serif,system-ui,-apple-system,'Segoe UI',Roboto,
'Helvetica Neue',Arial,sans-serif;-webkit-font-smoothing:antialiased}
main{max-width:1180px;margin:0 auto;padding:0 24px 48px}
header.top{background:#1d2330;color:#e9ecf3;padding:22px 0 20px;margin-bottom:22px}
header.top .in{max-width:1180px;margin:0 auto;padding:0 24px}
header.top h1{margin:0;font-size:22px;font-weight:650;letter-spacing:-.01em}
header.top h1 .brand{color:#8fb0ff;font-family:var(--mono);font-weight:600;margin-right:10px}
header.top .meta{color:#aab3c5;font-size:13px;margin-top:4px}
h2{font-size:18px;margin:0 0 12px;font-weight:650;letter-spacing:-.01em}
h3{font-size:14px;margin:22px 0 8px;font-weight:650;color:#2a3142;text-transform:uppercase;
letter-spacing:.04em}
section.card{background:var(--card);border:1px solid var(--line);border-radius:10px;
padding:20px 22px;margin:0 0 18px;box-shadow:0 1px 2px rgba(20,30,50,.04)}
.run-head{display:flex;align-items:baseline;gap:12px;flex-wrap:wrap}
.run-head h2{margin:0}
.sub{color:var(--muted);font-size:13px}
.pill{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12px;font-weight:600;
background:#e8edf7;color:#33415c}
.pill.ok{background:#e3f4ea;color:var(--good)}
.pill.error,.pill.crashed{background:#fbe9e4;color:var(--bad)}
.pill.cancelled,.pill.running,.pill.pending{background:#fdf3d8;color:var(--warn)}
.chips{display:flex;flex-wrap:wrap;gap:6px;margin:12px 0 4px}
.chip{font-family:var(--mono);font-size:12px;background:#f1f3f7;border:1px solid var(--line);
border-radius:6px;padding:1px 7px;color:#2a3142}
.chip b{font-weight:500;color:var(--muted)}
.kpis{display:grid;grid-template-columns:repeat(auto-fit,minmax(150px,1fr));gap:10px;
margin:16px 0 4px}
.kpi{border:1px solid var(--line);border-radius:8px;padding:10px 12px;background:#fbfcfd}
.kpi .v{font-size:20px;font-weight:650;font-variant-numeric:tabular-nums;letter-spacing:-.01em}
.kpi .l{font-size:12px;color:var(--muted)}
.kpi.good .v{color:var(--good)} .kpi.bad .v{color:var(--bad)}
table{border-collapse:collapse;width:100%;font-size:13px;font-variant-numeric:tabular-nums}
th{text-align:left;font-weight:600;color:var(--muted);font-size:12px;
border-bottom:1px solid var(--line);padding:6px 10px 6px 0;white-space:nowrap}
td{border-bottom:1px solid #f0f2f5;padding:6px 10px 6px 0;vertical-align:top}
td.n,th.n{text-align:right}
tr:last-child td{border-bottom:0}
table.kv td:first-child{color:var(--muted);width:210px}
code,.mono{font-family:var(--mono);font-size:12.5px}
code{background:#f1f3f7;border-radius:4px;padding:0 4px}
pre{font-family:var(--mono);font-size:12px;line-height:1.45;background:var(--code);
border:1px solid var(--line);border-radius:6px;padding:10px 12px;overflow:auto;
max-height:480px;margin:6px 0 4px;tab-size:4}
details>summary{cursor:pointer;color:var(--accent);font-size:12.5px;user-select:none}
details[open]>summary{margin-bottom:2px}
.alert{border-radius:8px;padding:10px 14px;margin:12px 0;border:1px solid}
.alert.bad{background:#fdf0ec;border-color:#f2c4b6;color:#7a2a10}
.alert.warn{background:#fdf7e6;border-color:#efd9a0;color:#6b4a00}
.alert.info{background:#eef3fd;border-color:#c9d7f5;color:#23396b}
.na{color:var(--muted);font-style:italic}
.muted{color:var(--muted)}
.grid2{display:grid;grid-template-columns:1fr 1fr;gap:18px}
@media (max-width:900px){.grid2{grid-template-columns:1fr}}
svg.chart{display:block;margin:6px 0 2px;max-width:100%;height:auto}
svg.sharebar{vertical-align:middle;margin-left:8px}
.ops{font-family:var(--mono);font-size:12px;color:#2a3142}
.kname{font-family:var(--mono);font-size:12.5px;word-break:break-all;min-width:240px}
.src{font-size:12px;line-height:1.35;margin-bottom:3px}
.src .loc{color:var(--muted);font-family:var(--mono);font-size:11.5px;white-space:nowrap}
.src code{background:none;padding:0;font-size:11.5px}
table.kernels td:nth-child(3){white-space:nowrap}
table.kernels td:nth-child(4){min-width:180px}
a{color:var(--accent);text-decoration:none} a:hover{text-decoration:underline}
nav.toc{font-size:13px;margin:-8px 0 16px;color:var(--muted)}
nav.toc a{margin-right:14px}
footer{color:var(--muted);font-size:12px;text-align:center;margin-top:26px}
.headline{font-size:15px;margin:4px 0 8px}
.headline b{font-size:18px}
"""


# No network, ever: a policy that forbids every external load (and scripts).
CSP = "default-src 'none'; style-src 'unsafe-inline'; img-src data:"


def reason_html(reason: str | None, limit: int) -> str:
    """The newest failed guard; every guard in the hover text."""
    if not reason:
        return "—"
    shown = e(fmt.short_reason(sm.first_reason(reason), limit))
    return f'<span title="{e(reason)}">{shown}</span>'


def pool_count(threads: int) -> str:
    return f"s ×{threads}" if threads > 1 else ""


def e(x: Any) -> str:
    return escape(str(x), quote=True)


def na(why: str) -> str:
    return f'<span class="na">n/a ({e(why)})</span>'


def table(
    header: list[str], rows: list[list[str]], numeric: set[int] | None = None, cls: str = ""
) -> str:
    """Cells are HTML already: callers escape what they put in."""
    numeric = numeric or set()
    th = "".join(
        f'<th class="n">{h}</th>' if i in numeric else f"<th>{h}</th>" for i, h in enumerate(header)
    )
    body = "".join(
        "<tr>"
        + "".join(
            f'<td class="n">{c}</td>' if i in numeric else f"<td>{c}</td>" for i, c in enumerate(r)
        )
        + "</tr>"
        for r in rows
    )
    return f'<table class="{cls}"><thead><tr>{th}</tr></thead><tbody>{body}</tbody></table>'


def kv_table(rows: list[tuple[str, str]]) -> str:
    return (
        '<table class="kv"><tbody>'
        + "".join(f"<tr><td>{e(k)}</td><td>{v}</td></tr>" for k, v in rows)
        + "</tbody></table>"
    )


def kpi(value: str, label: str, tone: str = "") -> str:
    return (
        f'<div class="kpi {tone}"><div class="v">{value}</div><div class="l">{e(label)}</div></div>'
    )


def page(title: str, subtitle: str, body: list[str]) -> str:
    return (
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">'
        f"<title>{e(title)}</title><style>{CSS}</style></head><body>"
        f'<header class="top"><div class="in"><h1><span class="brand">dlcprof</span>{e(title)}</h1>'
        f'<div class="meta">{subtitle}</div></div></header><main>'
        + "\n".join(body)
        + f"<footer>dlcprof {e(dlcprof.__version__)} · self-contained report: "
        "no scripts, no network</footer>"
        "</main></body></html>\n"
    )


# --- sections ------------------------------------------------------------------------


def _environment(session: Session) -> str:
    env = environment(session)
    la = env.get("load_avg")
    left = [
        ("torch", e(fmt.value(env.get("torch")))),
        ("python", e(env["python"]) if env.get("python") else na("no WorkerReady event")),
        ("device", f"{e(fmt.value(env.get('device')))} · {e(fmt.value(env.get('device_name')))}"),
        ("threads", e(fmt.value(env.get("threads")))),
    ]
    right = [
        ("cpu count", e(fmt.value(env.get("cpu_count")))),
        (
            "load avg (1/5/15 min)",
            e(", ".join(f"{x:.2f}" for x in la)) if la else na("no benchmark ran"),
        ),
        ("platform", f'<span class="mono">{e(fmt.value(env.get("platform")))}</span>'),
        ("recorded", e(_iso(sm.session_origin(session)) or fmt.NA)),
    ]
    return (
        '<section class="card" id="environment"><h2>Environment</h2>'
        f'<div class="grid2">{kv_table(left)}{kv_table(right)}</div></section>'
    )


def _summary(session: Session) -> str:
    rows = []
    for i, r in enumerate(session.runs.values(), 1):
        b = r.benchmark
        rows.append(
            [
                f'<a href="#run-{i}">{i}</a>',
                e(r.workload or r.run_id),
                f"<code>{e(r.settings.get('mode', fmt.NA))}</code>",
                f"<code>{e(r.settings.get('dynamic', fmt.NA))}</code>",
                f'<span class="pill {e(r.status)}">{e(r.status)}</span>',
                e(fmt.secs(r.compile_wall_s)) if r.compiles else "—",
                str(len(r.kernels)),
                str(len(r.recompiles))
                + (' <span class="pill error">limit hit</span>' if r.recompile_limit else ""),
                str(len(r.graph_breaks)),
                e(fmt.speedup(b.speedup)) if b else '<span class="na">—</span>',
                e(fmt.break_even(b.break_even_iters)) if b else '<span class="na">—</span>',
            ]
        )
    body = table(list(sm.SUMMARY_COLUMNS), rows, numeric={5, 6, 7, 8, 9, 10})
    return f'<section class="card" id="summary"><h2>Runs</h2>{body}</section>'


def _sweep_series(run: Run, color: str, label: str) -> svg.Series:
    return svg.Series(
        label, color, [(float(i), c) for i, c in enumerate(run.cumulative_transition_s)]
    )


def _sweep_contrast(session: Session) -> str:
    """The cumulative transition cost, every swept run on one chart."""
    runs = sm.sweep_runs(session)
    if len(runs) < 2:
        return ""
    series = []
    for i, r in enumerate(runs):
        n = list(session.runs).index(r.run_id) + 1
        label = f"run {n}: {r.workload} dynamic={r.settings.get('dynamic')}"
        s = _sweep_series(r, svg.PALETTE[i % len(svg.PALETTE)], label)
        s.dashed = str(r.settings.get("dynamic")) != "false"
        series.append(s)
    longest = max(runs, key=lambda r: len(r.sweep))
    ticks = [(float(i), str(st.size)) for i, st in enumerate(longest.sweep)]
    lines = []
    for c in sm.sweep_contrasts(session):
        red = c.reduction
        verdict = (
            f"dynamic shapes cut it by <b>{e(fmt.pct(red))}</b>"
            if red is not None and red > 0
            else "dynamic shapes did not reduce it"
        )
        lines.append(
            f'<p class="headline">{e(c.workload)}: cumulative transition cost '
            f"<b>{e(fmt.secs(c.static_s))}</b> static vs <b>{e(fmt.secs(c.dynamic_s))}</b> with "
            f"dynamic={e(c.dynamic.settings.get('dynamic'))}: {verdict}.</p>"
        )
    chart = svg.line_chart(
        series,
        x_label="input size (sweep step)",
        y_label="cumulative transition cost",
        y_unit="s",
        x_ticks=ticks,
        title="cumulative shape-transition cost, static vs dynamic",
    )
    return (
        '<section class="card" id="sweeps"><h2>Shape transitions: static vs dynamic</h2>'
        + "".join(lines)
        + chart
        + '<p class="sub">Each step is the first call at a new input size minus a steady call: the '
        "recompile (or guard check) a new shape costs. Solid: dynamic=false; "
        "dashed: dynamic shapes.</p></section>"
    )


def _settings_chips(run: Run) -> str:
    return (
        '<div class="chips">'
        + "".join(
            f'<span class="chip"><b>{e(k)}</b> {e(v)}</span>'
            for k, v in fmt.settings_items(run.settings)
        )
        + "</div>"
    )


def _phase_table(run: Run) -> str:
    tree = sm.phase_tree(run)
    total = sm.share_base(run, tree)
    major, minor = sm.split_totals(tree, total)
    head = ["phase", "calls", "total", "share of compile"]
    html = table(head, _phase_rows(major, total), {1, 2, 3})
    if minor:
        html += (
            f"<details><summary>{len(minor)} shorter phases (each under 1% of the compile)"
            f"</summary>{table(head, _phase_rows(minor, total), {1, 2, 3})}</details>"
        )
    return html


def _phase_rows(totals: list[sm.PhaseTotal], total: float) -> list[list[str]]:
    rows = []
    for t in totals:
        share = t.total_s / total if total > 0 else None
        indent = 14 * t.depth if not t.pool else 0
        name = e(t.name) + (
            f' <span class="muted">(pool thread{pool_count(t.threads)})</span>' if t.pool else ""
        )
        _, color = svg.stage_of(t.name)
        rows.append(
            [
                f'<span class="mono" style="padding-left:{indent}px">{name}</span>',
                str(t.count),
                e(fmt.secs(t.total_s)),
                (e(fmt.pct(share)) if share is not None else fmt.NA) + svg.share_bar(share, color),
            ]
        )
    return rows


def _compiles_table(run: Run) -> str:
    rows = []
    for c in run.compiles.values():
        rows.append(
            [
                f"<code>{e(c.compile_id)}</code>",
                e(fmt.secs(c.wall_s)) if c.wall_s is not None else na("not finished"),
                e(c.cache or fmt.NA),
                e(fmt.value(c.graph_op_count)),
                e(fmt.value(c.guard_count)),
                str(len(c.kernels)),
                reason_html(c.recompile_reason, 120),
                (
                    f'<span style="color:var(--bad)">{e(c.fail_type)}: '
                    f"{e(fmt.short_reason(c.fail_reason, 100))}</span>"
                    if c.fail_type
                    else "—"
                ),
            ]
        )
    return table(
        ["compile", "wall", "cache", "ops", "guards", "kernels", "recompile reason", "failure"],
        rows,
        {1, 3, 4, 5},
    )


def _source_lines(lines: list[str], limit: int = 4) -> str:
    out = []
    for text in lines[:limit]:
        loc, code = sm.source_line(text)
        out.append(
            f'<div class="src" title="{e(text)}"><span class="loc">{e(loc)}</span> '
            f"<code>{e(code)}</code></div>"
        )
    if len(lines) > limit:
        out.append(f'<div class="muted">… {len(lines) - limit} more</div>')
    return "".join(out) or "—"


def _kernels(run: Run) -> str:
    groups = sm.kernel_groups(run)
    if not groups:
        why = run.unavailable.get("kernels") or "none generated, or the kernel probe did not run"
        return f"<p>{na(why)}</p>"
    rows = []
    for i, g in enumerate(groups, 1):
        k = g.kernel
        src = ""
        if k.source.strip():
            n = len(k.source.splitlines())
            src = (
                f"<details><summary>source ({n} lines)</summary>"
                f"<pre><code>{e(k.source)}</code></pre></details>"
            )
        compiles = " ".join(f"<code>{e(c)}</code>" for c in g.compile_ids[:6])
        if len(g.compile_ids) > 6:
            compiles += f' <span class="muted">+{len(g.compile_ids) - 6}</span>'
        rows.append(
            [
                str(i),
                f'<div class="kname">{e(k.name)}</div>{src}',
                e(k.kind),
                f'<span class="ops">{e(", ".join(k.fused_ops)) or "—"}</span>',
                _source_lines(k.source_lines),
                compiles,
            ]
        )
    head = ["#", "kernel", "kind", "fused ops", "from (user source)", "compiles"]
    return table(head, rows, {0}, cls="kernels")


def _recompiles(run: Run) -> str:
    out = []
    limit = run.recompile_limit
    if not run.recompiles and not run.sweep:
        out.append('<p class="muted">No recompiles.</p>')
    if run.recompiles:
        rows = [
            [
                str(i),
                f"<code>{e(r['compile_id'] or fmt.NA)}</code>",
                reason_html(r["reason"], 200),
                e(fmt.secs(r["cost_s"])) if r["cost_s"] is not None else na("compile not finished"),
                e(fmt.secs(r["cumulative_s"])) if r["cumulative_s"] is not None else "—",
            ]
            for i, r in enumerate(sm.recompile_rows(run), 1)
        ]
        out.append(table(["#", "compile", "reason", "cost", "cumulative"], rows, {0, 3, 4}))
    if run.dynamic_dims:
        out.append(
            '<p class="sub">Dims made dynamic: '
            + ", ".join(f"<code>{e(d)}</code>" for d in sm.unique(run.dynamic_dims))
            + "</p>"
        )
    if run.sweep:
        cum = run.cumulative_transition_s
        out.append("<h3>Shape sweep</h3>")
        out.append(
            svg.line_chart(
                [
                    _sweep_series(
                        run,
                        svg.PALETTE[0],
                        f"cumulative transition cost (dynamic={run.settings.get('dynamic')})",
                    )
                ],
                x_ticks=[(float(i), str(st.size)) for i, st in enumerate(run.sweep)],
                x_label="input size",
                y_unit="s",
                y_label="seconds",
                height=220,
                title="cumulative transition cost",
            )
        )
        rows = [
            [
                str(st.size),
                ("yes" if st.recompiled else "no")
                + (' <span class="pill error">ran EAGER</span>' if st.ran_eager else ""),
                e(fmt.secs(st.transition_s)),
                e(fmt.secs(c)),
                e(fmt.ms(st.latency_ms)),
                reason_html(st.reason, 120),
            ]
            for st, c in zip(run.sweep, cum, strict=True)
        ]
        out.append(
            table(
                ["size", "recompiled", "transition", "cumulative", "latency", "reason"],
                rows,
                {0, 2, 3, 4},
            )
        )
        out.append(
            '<p class="sub">Cumulative transition cost: '
            f"<b>{e(fmt.secs(sm.sweep_total(run)))}</b> over {len(run.sweep)} shapes.</p>"
        )
    _ = limit
    return "".join(out)


def _graph_breaks(run: Run) -> str:
    if not run.graph_breaks:
        return '<p class="muted">No graph breaks.</p>'
    rows = [
        [
            str(i),
            e(g.reason),
            f"<code>{e(g.location)}</code>" if g.location else na("no user frame"),
            f"<code>{e(g.compile_id or fmt.NA)}</code>",
            "<br>".join(e(h) for h in g.hints) or "—",
        ]
        for i, g in enumerate(run.graph_breaks, 1)
    ]
    return table(["#", "reason", "location", "compile", "hints"], rows, {0})


def _benchmark(run: Run) -> str:
    b = run.benchmark
    if b is None:
        return f"<p>{na(no_benchmark_reason(run))}</p>"
    be = b.break_even_iters
    if be is None:
        verdict = (
            '<div class="alert warn">Compiled is <b>not faster</b> here '
            f"({e(fmt.ms(b.compiled_ms))} vs "
            f"{e(fmt.ms(b.eager_ms))} eager): the {e(fmt.secs(b.compile_s))} compile "
            "never pays for itself.</div>"
        )
    else:
        verdict = (
            f'<div class="alert info">The {e(fmt.secs(b.compile_s))} compile pays for itself after '
            f"<b>{e(fmt.count(max(be, 1)))} calls</b> (compile seconds ÷ time saved per call, "
            f"{e(fmt.ms(b.eager_ms - b.compiled_ms))}).</div>"
        )
    if sm.within_noise(b):
        verdict += f'<div class="alert warn">Careful: {e(sm.NOISE_NOTE)}.</div>'
    chart = svg.benchmark_bars(b.eager_ms, b.compiled_ms, b.eager_spread_ms, b.compiled_spread_ms)
    details = (
        f'<p class="sub">Median of {b.reps} repetitions × {b.iters} calls '
        f"after {b.warmup} warm-up calls; "
        f"spread is the interquartile range; {b.threads} thread(s); "
        f"timer <code>{e(b.timer)}</code>; "
        f"load average {e(', '.join(f'{x:.2f}' for x in b.load_avg))}.</p>"
    )
    return chart + verdict + details


def _kpis(run: Run) -> str:
    b = run.benchmark
    items = [
        kpi(
            e(fmt.secs(run.compile_wall_s)) if run.compiles else "—",
            f"compile wall, {len(run.compiles)} compile(s)",
        ),
        kpi(str(len(run.kernels)), "fused kernels"),
        kpi(str(len(run.recompiles)), "recompiles", "bad" if run.recompile_limit else ""),
        kpi(str(len(run.graph_breaks)), "graph breaks", "bad" if run.graph_breaks else ""),
    ]
    if b is not None:
        sp = b.speedup
        items.append(
            kpi(
                e(fmt.speedup(sp)),
                "speedup (eager ÷ compiled)",
                "good" if sp and sp > 1.05 else "bad" if sp and sp < 0.95 else "",
            )
        )
        be = b.break_even_iters
        items.append(
            kpi(
                e(fmt.count(max(be, 1))) if be is not None else "never",
                "break-even (calls)" + (", within noise" if sm.within_noise(b) else ""),
                "" if be is not None else "bad",
            )
        )
    elif run.sweep:
        items.append(
            kpi(e(fmt.secs(sm.sweep_total(run))), f"transition cost, {len(run.sweep)} shapes")
        )
    return '<div class="kpis">' + "".join(items) + "</div>"


def _run_section(i: int, run: Run) -> str:
    out = [f'<section class="card" id="run-{i}">']
    out.append(
        f'<div class="run-head"><h2>Run {i}: {e(run.workload or run.run_id)}</h2>'
        f'<span class="pill {e(run.status)}">{e(run.status)}</span>'
        f'<span class="sub">id <code>{e(run.run_id)}</code> · target <code>{e(run.target)}</code>'
        + (f" · wall {e(fmt.secs(run.wall_s))}" if run.wall_s is not None else "")
        + "</span></div>"
    )
    if run.description:
        out.append(f'<div class="sub">{e(run.description)}</div>')
    out.append(_settings_chips(run))
    if run.settings:
        out.append(
            "<details><summary>command to reproduce</summary>"
            f"<pre><code>{e(repro_command(run))}</code></pre></details>"
        )
    limit = run.recompile_limit
    if limit is not None:
        out.append(
            f'<div class="alert bad"><b>Recompile limit hit</b> ({e(fmt.value(limit.limit))}) in '
            f"<code>{e(limit.function)}</code>: new shapes now run <b>EAGER</b>, "
            "uncompiled, silently. "
            f'<span class="mono">{e(fmt.short_reason(limit.message, 240))}</span></div>'
        )
    for err in run.errors:
        out.append(f'<div class="alert bad"><b>Error ({e(err.stage)})</b>: {e(err.message)}')
        if err.traceback.strip():
            out.append(
                f"<details><summary>traceback</summary><pre>{e(err.traceback)}</pre></details>"
            )
        out.append("</div>")
    out.append(_kpis(run))
    out.append("<h3>Compile phase timeline</h3>")
    out.append(svg.phase_timeline(run))
    if run.compiles:
        out.append("<h3>Compile time by phase</h3>")
        out.append(_phase_table(run))
        out.append(
            '<p class="sub">Phases nest (indented); pool-thread phases such as g++ builds '
            "overlap the compiling thread and are summed over threads.</p>"
        )
        out.append("<h3>Compiles</h3>")
        out.append(_compiles_table(run))
    out.append("<h3>Fused kernels</h3>")
    out.append(_kernels(run))
    out.append("<h3>Recompiles</h3>")
    out.append(_recompiles(run))
    out.append("<h3>Graph breaks</h3>")
    out.append(_graph_breaks(run))
    out.append("<h3>Benchmark</h3>")
    out.append(_benchmark(run))
    warnings = [lg for lg in run.logs if lg.level in ("warning", "error")]
    if warnings or run.unavailable:
        out.append("<h3>Notes</h3>")
        if run.unavailable:
            items = [
                f"<li>probe <code>{e(p)}</code> unavailable: {e(r)}</li>"
                for p, r in run.unavailable.items()
            ]
            out.append("<ul>" + "".join(items) + "</ul>")
        if warnings:
            # Torch warnings arrive a line at a time: show them as the log they are.
            log = "\n".join(f"[{lg.level} · {lg.source}] {lg.message}" for lg in warnings[:200])
            more = f" (first 200 of {len(warnings)})" if len(warnings) > 200 else ""
            out.append(
                f"<details><summary>{len(warnings)} warning line(s) from the worker{more}"
                f"</summary><pre>{e(log)}</pre></details>"
            )
    out.append("</section>")
    return "".join(out)


def _device(session: Session) -> str:
    out = ['<section class="card" id="device"><h2>Device utilization</h2>']
    dev = sm.device_summary(session)
    series = sm.device_series(session)
    origin = sm.session_origin(session) or 0.0
    if not dev["samples"]:
        out.append(svg.empty_chart("no samples: the device monitor did not run in this session"))
    else:
        out.append(
            f'<p class="sub">{dev["samples"]} samples over {e(fmt.secs(dev["duration_s"]))} '
            f"from {e(', '.join(dev['sources']))}; shaded: runs.</p>"
        )
        bands = []
        for i, r in enumerate(session.runs.values(), 1):
            if r.started_t is not None:
                end = r.finished_t if r.finished_t is not None else r.started_t
                bands.append((r.started_t - origin, end - origin, f"run {i}"))
        charts = []
        color = 0
        for title, metrics in sm.device_groups(series):
            have = [m for m in metrics if series[m]]
            if not have:
                continue
            lines = []
            for m in have:
                lines.append(
                    svg.Series(
                        m,
                        svg.PALETTE[color % len(svg.PALETTE)],
                        [(t - origin, v) for t, v in series[m]],
                    )
                )
                color += 1
            top = max(v for m in have for _, v in series[m])
            wide = len(charts) == 0  # the first group (utilization) gets the full width
            chart = svg.line_chart(
                lines,
                width=1100 if wide else 540,
                height=240 if wide else 200,
                y_max=max(100.0, top) if title.endswith("(%)") else None,
                x_label="seconds since session start",
                bands=bands,
                markers=sum(len(series[m]) for m in have) <= 60,
                title=f"{title} over time",
            )
            charts.append((wide, f"<div><h3>{e(title)}</h3>{chart}</div>"))
        out += [html for wide, html in charts if wide]
        narrow = [html for wide, html in charts if not wide]
        if narrow:
            out.append('<div class="grid2">' + "".join(narrow) + "</div>")
        rows = []
        for metric, m in dev["metrics"].items():
            unit = sm.metric_unit(metric)
            if m["count"]:
                cells = [
                    f"{m[k]:.4g}" + (f" {unit}" if unit else "") for k in ("min", "mean", "max")
                ]
                rows.append([f"<code>{e(metric)}</code>", *map(e, cells), str(m["count"])])
            else:
                rows.append(
                    [f"<code>{e(metric)}</code>", na("the probe gave no value"), "", "", "0"]
                )
        out.append(table(["metric", "min", "mean", "max", "samples"], rows, {1, 2, 3, 4}))
    if dev["monitors"]:
        rows = [
            [
                e(name),
                '<span class="pill ok">available</span>'
                if m["available"]
                else '<span class="pill cancelled">unavailable</span>',
                e(m["message"]),
            ]
            for name, m in dev["monitors"].items()
        ]
        out.append("<h3>Monitors</h3>" + table(["monitor", "status", "message"], rows))
    out.append("</section>")
    return "".join(out)


def _hotspots(session: Session) -> str:
    out = ['<section class="card" id="hotspots"><h2>Compiler hotspots</h2>']
    rows = sm.hotspot_rows(session, 25)
    if not rows:
        why = session.monitors.get("py-spy")
        msg = why.message if why and not why.available else "no py-spy samples in this session"
        out.append(f"<p>{na(msg)}</p>")
    else:
        n = session.hot_frames.samples if session.hot_frames else 0
        out.append(
            '<p class="sub">Python frames of the compiling worker sampled by py-spy '
            f"({n} samples). Own: in the function itself; total: with callees.</p>"
        )
        trs = []
        for r in rows:
            own, tot = sm.hotspot_share(r["own"], n), sm.hotspot_share(r["total"], n)
            trs.append(
                [
                    f"<code>{e(r['function'])}</code>",
                    f'<span class="mono">{e(r["file"])}:{e(r["line"])}</span>',
                    e(fmt.pct(own)) + svg.share_bar(own, "#e0641e"),
                    e(fmt.pct(tot)) + svg.share_bar(tot),
                    e(r.get("phase") or "—"),
                ]
            )
        out.append(table(["function", "location", "own", "total", "phase"], trs, {2, 3}))
    out.append("</section>")
    return "".join(out)


def _errors(session: Session) -> str:
    bad_exits = [x for x in session.worker_exits if x.returncode not in (0, None) or x.signal]
    if not session.errors and not bad_exits:
        return ""
    items = [f"<li><b>{e(x.stage)}</b>: {e(x.message)}</li>" for x in session.errors]
    items += [f"<li><b>worker exited</b>: {e(x.message)}</li>" for x in bad_exits]
    return f'<section class="card" id="errors"><h2>Errors</h2><ul>{"".join(items)}</ul></section>'


def render_html(session: Session) -> str:
    """The whole session as one self-contained HTML page."""
    title = sm.workload_title(session)
    n = len(session.runs)
    subtitle = e(
        f"{n} run{'s' if n != 1 else ''} · recorded {_iso(sm.session_origin(session)) or fmt.NA}"
    )
    body = []
    toc = ['<a href="#environment">environment</a>', '<a href="#summary">runs</a>']
    if len(sm.sweep_runs(session)) >= 2:
        toc.append('<a href="#sweeps">shape transitions</a>')
    toc += [f'<a href="#run-{i}">run {i}</a>' for i in range(1, n + 1)]
    toc += ['<a href="#device">device</a>', '<a href="#hotspots">hotspots</a>']
    body.append('<nav class="toc">' + "".join(toc) + "</nav>")
    body.append(_environment(session))
    if session.runs:
        body.append(_summary(session))
    else:
        body.append(f'<section class="card"><p>{na("no runs in this session")}</p></section>')
    body.append(_sweep_contrast(session))
    body += [_run_section(i, r) for i, r in enumerate(session.runs.values(), 1)]
    body.append(_device(session))
    body.append(_hotspots(session))
    body.append(_errors(session))
    return page(title, subtitle, body)
