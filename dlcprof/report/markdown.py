"""The session as Markdown, to paste into an issue or a pull request."""

from __future__ import annotations

import shlex
from typing import Any

import dlcprof
from dlcprof.report import fmt
from dlcprof.report import summary as sm
from dlcprof.report.schema import _iso, environment
from dlcprof.session import Run, Session

KERNEL_SOURCE_LINES = 60  # per kernel; a paste must stay readable
# GitHub refuses issue and comment bodies over 65,536 characters.
PASTE_LIMIT = 60_000
FULL, NO_SOURCES, COMPACT = 2, 1, 0  # how much detail fits


def cell(x: Any) -> str:
    """Text safe inside a Markdown table cell."""
    s = " ".join(str(x).split())
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def code(x: Any) -> str:
    s = " ".join(str(x).split())
    tick = "``" if "`" in s else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{s}{pad}{tick}".replace("|", "\\|")


def table(header: list[str], rows: list[list[Any]], align: str = "") -> list[str]:
    aligns = align or "l" * len(header)
    sep = ["---:" if a == "r" else "---" for a in aligns]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += [
        "| " + " | ".join(cell(c) if not str(c).startswith("`") else str(c) for c in r) + " |"
        for r in rows
    ]
    return out


def repro_command(run: Run) -> str:
    """The CLI line that repeats this run (flags named as RunSettings fields)."""
    s = run.settings
    parts = ["dlcprof", "run", run.target or run.workload]
    for key in (
        "mode",
        "dynamic",
        "backend",
        "device",
        "dtype",
        "size",
        "cache",
        "threads",
        "iters",
        "reps",
    ):
        if s.get(key) not in (None, ""):
            parts += [f"--{key}", str(s[key])]
    if s.get("shapes"):
        parts += ["--shapes", ",".join(str(x) for x in s["shapes"])]
    elif s.get("sweep"):
        parts.append("--sweep")
    if s.get("benchmark") is False:
        parts.append("--no-benchmark")
    return shlex.join(parts)


def no_benchmark_reason(run: Run) -> str:
    if run.status in ("error", "crashed", "cancelled"):
        return f"the run ended ({run.status}) before a benchmark"
    if run.sweep:
        return "a shape-sweep run: see the sweep latencies"
    return "no benchmark in this run"


def _mean_max(row: dict[str, Any], key: str) -> str:
    mean, peak = row.get(f"{key}.mean"), row.get(f"{key}.max")
    return fmt.NA if mean is None else f"{fmt.value(mean)} / {fmt.value(peak)}"


def _summary_rows(session: Session) -> list[list[Any]]:
    rows = []
    for i, r in enumerate(session.runs.values(), 1):
        b = r.benchmark
        rows.append(
            [
                i,
                r.workload or r.run_id,
                r.settings.get("mode", fmt.NA),
                r.settings.get("dynamic", fmt.NA),
                r.status,
                fmt.secs(r.compile_wall_s) if r.compiles else "—",
                len(r.kernels),
                len(r.recompiles),
                len(r.graph_breaks),
                fmt.speedup(b.speedup) if b else fmt.NA,
                fmt.break_even(b.break_even_iters) if b else fmt.NA,
            ]
        )
    return rows


def _run_section(index: int, run: Run, detail: int = FULL) -> list[str]:
    sources = detail >= FULL
    out = [f"## Run {index}: {run.label}", ""]
    out.append(
        f"Run id `{run.run_id}` · status **{run.status}** · target `{run.target}`"
        + (f" · wall {fmt.secs(run.wall_s)}" if run.wall_s is not None else "")
    )
    if run.description:
        out += ["", f"> {cell(run.description)}"]
    out += [
        "",
        "**Settings**: " + " ".join(code(f"{k}={v}") for k, v in fmt.settings_items(run.settings)),
        "",
    ]
    if run.settings:
        out += ["Reproduce:", "", "```sh", repro_command(run), "```", ""]

    limit = run.recompile_limit
    if limit is not None:
        out += [
            f"> **Warning: recompile limit hit** ({fmt.value(limit.limit)}) in `{limit.function}`: "
            "new shapes now run EAGER, uncompiled.",
            f"> {cell(limit.message)}",
            "",
        ]
    for e in run.errors:
        out += [f"> **Error ({e.stage})**: {cell(e.message)}", ""]

    # Compile time by phase.
    out += ["### Compile time", ""]
    if not run.compiles:
        out += [fmt.na("no compile recorded in this run"), ""]
    else:
        finished = [c for c in run.compiles.values() if c.wall_s is not None]
        total = run.compile_wall_s
        wall = fmt.secs(total) if finished else fmt.na("no compile finished")
        out += [
            f"{len(run.compiles)} compile(s); total wall {wall} (torch's per-frame compile "
            "times). Phases nest; pool-thread phases are summed over threads.",
            "",
        ]
        rows = []
        tree = sm.phase_tree(run)
        base = sm.share_base(run, tree)
        major, minor = sm.split_totals(tree, base)
        if detail < NO_SOURCES:
            minor = minor + [t for t in major if t.depth > 2]
            major = [t for t in major if t.depth <= 2]
        for t in major:
            share = fmt.pct(t.total_s / base) if base > 0 else fmt.NA
            name = "· " * t.depth + t.name
            if t.pool:
                name = f"{t.name} (pool thread{f's ×{t.threads}' if t.threads > 1 else ''})"
            rows.append([name, t.count, fmt.secs(t.total_s), share])
        if minor:
            what = "shorter" if detail >= NO_SOURCES else "shorter or deeper"
            rows.append([f"… {len(minor)} {what} phases: see report.html", "", "", ""])
        out += table(["phase", "calls", "total", "share of compile"], rows, "lrrr") + [""]
        rows = []
        for c in run.compiles.values():
            rows.append(
                [
                    c.compile_id
                    + (" (backward)" if c.is_backward and "bwd" not in c.compile_id else ""),
                    fmt.secs(c.wall_s, "not finished"),
                    c.cache or fmt.NA,
                    fmt.value(c.graph_op_count),
                    fmt.value(c.guard_count),
                    len(c.kernels),
                    fmt.short_reason(sm.first_reason(c.recompile_reason)) or "—",
                    (
                        f"{c.fail_type}: {fmt.short_reason(c.fail_reason, 80)}"
                        if c.fail_type
                        else "—"
                    ),
                ]
            )
        out += table(
            ["compile", "wall", "cache", "ops", "guards", "kernels", "recompile reason", "failure"],
            rows,
            "lrlrrrll",
        ) + [""]

    # Kernels.
    groups = sm.kernel_groups(run)
    out += ["### Fused kernels", ""]
    if not groups:
        why = run.unavailable.get("kernels") or "none generated (or the kernel probe did not run)"
        out += [fmt.na(why), ""]
    else:
        rows = []
        for i, g in enumerate(groups, 1):
            k = g.kernel
            origin = "; ".join(" ".join(sm.source_line(x)).strip() for x in k.source_lines[:2])
            rows.append(
                [
                    i,
                    code(k.name),
                    k.kind,
                    ", ".join(k.fused_ops) or "—",
                    origin or "—",
                    sm.compile_list(g.compile_ids),
                ]
            )
        out += table(
            ["#", "kernel", "kind", "fused ops", "from (user source)", "compiles"], rows, "rlllll"
        ) + [""]
        if not sources:
            out += ["Kernel sources left out to fit a paste: see report.html.", ""]
        for g in groups if sources else []:
            k = g.kernel
            if not k.source.strip():
                continue
            lines = k.source.rstrip("\n").splitlines()
            more = len(lines) - KERNEL_SOURCE_LINES
            body = "\n".join(lines[:KERNEL_SOURCE_LINES])
            fence = "````" if "```" in body else "```"
            lang = "cpp" if 'extern "C"' in body or "#include" in body else "python"
            out += [
                f"<details><summary>{cell(k.name)} ({len(lines)} lines)</summary>",
                "",
                f"{fence}{lang}",
                body,
                fence,
            ]
            if more > 0:
                out += ["", f"… {more} more lines in report.html / session.json"]
            out += ["", "</details>", ""]

    # Recompiles.
    out += ["### Recompiles", ""]
    if not run.recompiles:
        out += ["None.", ""]
    else:
        rows = [
            [
                i,
                r["compile_id"] or fmt.NA,
                fmt.short_reason(sm.first_reason(r["reason"]), 160),
                fmt.secs(r["cost_s"], "compile not finished"),
                fmt.secs(r["cumulative_s"], "compile not finished"),
            ]
            for i, r in enumerate(sm.recompile_rows(run), 1)
        ]
        out += table(["#", "compile", "reason", "cost", "cumulative"], rows, "rllrr") + [""]
    if run.dynamic_dims:
        dims = sm.unique(run.dynamic_dims)
        out += ["Dims made dynamic: " + ", ".join(code(d) for d in dims), ""]

    # Sweep.
    if run.sweep:
        out += ["### Shape sweep", ""]
        cum = run.cumulative_transition_s
        rows = [
            [
                st.size,
                fmt.value(st.recompiled) + (" (ran EAGER)" if st.ran_eager else ""),
                fmt.secs(st.transition_s),
                fmt.secs(c),
                fmt.ms(st.latency_ms),
                fmt.short_reason(sm.first_reason(st.reason), 100) or "—",
            ]
            for st, c in zip(run.sweep, cum, strict=True)
        ]
        out += table(
            ["size", "recompiled", "transition", "cumulative", "latency", "reason"], rows, "rlrrrl"
        )
        out += [
            "",
            f"Cumulative transition cost: **{fmt.secs(sm.sweep_total(run))}** "
            f"over {len(run.sweep)} shapes.",
            "",
        ]

    # Graph breaks.
    out += ["### Graph breaks", ""]
    if not run.graph_breaks:
        out += ["None.", ""]
    else:
        rows = [
            [
                i,
                g.reason,
                code(g.location) if g.location else fmt.NA,
                g.compile_id or fmt.NA,
                "; ".join(g.hints) or "—",
            ]
            for i, g in enumerate(run.graph_breaks, 1)
        ]
        out += table(["#", "reason", "location", "compile", "hints"], rows, "rllll") + [""]

    # Benchmark.
    out += ["### Benchmark", ""]
    b = run.benchmark
    if b is None:
        out += [fmt.na(no_benchmark_reason(run)), ""]
    else:
        out += table(
            ["", "median per call", "spread (IQR)"],
            [
                ["eager", fmt.ms(b.eager_ms), fmt.ms(b.eager_spread_ms)],
                ["compiled", fmt.ms(b.compiled_ms), fmt.ms(b.compiled_spread_ms)],
            ],
            "lrr",
        )
        out += [
            "",
            f"- speedup: **{fmt.speedup(b.speedup)}**",
            f"- compile cost: {fmt.secs(b.compile_s)} (first compiled call minus a steady one)",
            f"- break-even: **{fmt.break_even(b.break_even_iters)}**"
            + (f" ({sm.NOISE_NOTE})" if sm.within_noise(b) else ""),
            f"- {b.reps} reps × {b.iters} calls, {b.warmup} warm-up; {b.threads} thread(s); "
            f"timer {b.timer}; "
            f"load avg {fmt.value([round(x, 2) for x in b.load_avg])}",
            "",
        ]
    warnings = [lg for lg in run.logs if lg.level in ("warning", "error")]
    if warnings or run.unavailable:
        out += ["### Notes", ""]
        out += [f"- probe `{p}` unavailable: {cell(r)}" for p, r in run.unavailable.items()]
        if run.unavailable:
            out += [""]
        if warnings and detail < NO_SOURCES:
            out += [f"{len(warnings)} warning line(s) from the worker: see report.html.", ""]
        elif warnings:
            # Torch warnings arrive a line at a time: quote them as the log they are.
            log = [f"[{lg.level} · {lg.source}] {lg.message}" for lg in warnings[:100]]
            fence = "````" if any("```" in x for x in log) else "```"
            more = f", first 100 of {len(warnings)}" if len(warnings) > 100 else ""
            out += [
                f"<details><summary>{len(warnings)} warning line(s) from the worker{more}"
                "</summary>",
                "",
                f"{fence}text",
                *log,
                fence,
                "",
                "</details>",
                "",
            ]
    return out


def render_markdown(session: Session) -> str:
    """The whole session as Markdown (GitHub flavour), short enough to paste:
    kernel sources are left out when they would push it past GitHub's limit."""
    for detail in (FULL, NO_SOURCES, COMPACT):
        text = _render(session, detail)
        if len(text) <= PASTE_LIMIT:
            break
    return text


def _render(session: Session, detail: int) -> str:
    env = environment(session)
    out = [f"# dlcprof report: {sm.workload_title(session)}", ""]
    if detail < FULL:
        out += ["> Shortened to fit a GitHub paste: report.html has every detail.", ""]
    out += [
        f"dlcprof {dlcprof.__version__} · recorded {_iso(sm.session_origin(session)) or fmt.NA} · "
        f"{len(session.runs)} run(s)",
        "",
        "## Environment",
        "",
    ]
    la = env.get("load_avg")
    env_rows = [
        ["torch", fmt.value(env.get("torch"))],
        ["python", env.get("python") or fmt.na("no WorkerReady event")],
        ["device", f"{fmt.value(env.get('device'))} ({fmt.value(env.get('device_name'))})"],
        ["threads", fmt.value(env.get("threads"))],
        ["cpu count", fmt.value(env.get("cpu_count"))],
        [
            "load avg (1/5/15 min)",
            fmt.value([round(x, 2) for x in la]) if la else fmt.na("no benchmark ran"),
        ],
        ["platform", fmt.value(env.get("platform"))],
    ]
    out += table(["", ""], env_rows) + [""]

    if session.runs:
        out += ["## Summary", ""]
        out += table(
            list(sm.SUMMARY_COLUMNS),
            _summary_rows(session),
            "rllllrrrrrr",
        ) + [""]
    for c in sm.sweep_contrasts(session):
        red = c.reduction
        out += [
            f"**Shape transitions, {c.workload}**: static (dynamic=false) "
            f"{fmt.secs(c.static_s)} vs "
            f"dynamic={c.dynamic.settings.get('dynamic')} {fmt.secs(c.dynamic_s)}"
            + (
                f": dynamic shapes cut the cumulative cost by **{fmt.pct(red)}**."
                if red is not None and red > 0
                else "."
            ),
            "",
        ]
    for i, r in enumerate(session.runs.values(), 1):
        out += _run_section(i, r, detail)

    out += ["## Device", ""]
    dev = sm.device_summary(session)
    if not dev["samples"]:
        out += [fmt.na("no device samples: the monitor did not run or had no probe"), ""]
    else:
        out += [
            f"{dev['samples']} samples over {fmt.secs(dev['duration_s'])} "
            f"from {', '.join(dev['sources'])}.",
            "",
        ]
        rows = []
        for k, m in dev["metrics"].items():
            if m["count"]:
                rows.append([k, fmt.value(m["min"]), fmt.value(m["mean"]), fmt.value(m["max"])])
            else:
                rows.append([k, fmt.na("the probe gave no value"), "", ""])
        out += table(["metric", "min", "mean", "max"], rows, "lrrr") + [""]
        spans = dev["by_span"]
        if spans:
            out += ["Mean / max during the compiles vs after them (benchmark, sweep):", ""]
            rows = [[k, *(_mean_max(row, k) for row in spans.values())] for k in dev["metrics"]]
            head = [
                "metric",
                *(f"{name} ({row['samples']:.0f} samples)" for name, row in spans.items()),
            ]
            out += table(head, rows, "l" + "r" * len(spans)) + [""]
    for mname, m in dev["monitors"].items():
        out.append(
            f"- {mname}: {'available' if m['available'] else 'unavailable'}: {cell(m['message'])}"
        )
    if dev["monitors"]:
        out.append("")

    out += ["## Compiler hotspots", ""]
    rows = sm.hotspot_rows(session, 15)
    if not rows:
        why = session.monitors.get("py-spy")
        out += [
            fmt.na(
                why.message if why and not why.available else "no py-spy samples in this session"
            ),
            "",
        ]
    else:
        n = session.hot_frames.samples if session.hot_frames else 0
        out += [
            f"py-spy, {n} samples; own = samples in the function itself, total = with callees.",
            "",
        ]
        out += table(
            ["function", "location", "own", "total", "phase"],
            [
                [
                    code(r["function"]),
                    f"{r['file']}:{r['line']}",
                    fmt.pct(sm.hotspot_share(r["own"], n)),
                    fmt.pct(sm.hotspot_share(r["total"], n)),
                    r.get("phase") or "—",
                ]
                for r in rows
            ],
            "llrrl",
        ) + [""]

    errs = session.errors
    bad_exits = [x for x in session.worker_exits if x.returncode not in (0, None) or x.signal]
    if errs or bad_exits:
        out += ["## Errors", ""]
        out += [f"- {e.stage}: {cell(e.message)}" for e in errs]
        out += [f"- worker exited: {cell(x.message)}" for x in bad_exits]
        out += [""]
    return "\n".join(out).rstrip() + "\n"
