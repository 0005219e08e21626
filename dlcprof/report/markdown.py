"""The session as Markdown, to paste into an issue or a pull request.

Places the figures of ``dlcprof.report.model``, the same the HTML page and the
JSON report state; string building is all this module does.
"""

from __future__ import annotations

from typing import Any

from dlcprof import text
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import paper_tables as fpt
from dlcprof.figures import recompiles as fr
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import ranks as franks
from dlcprof.report import model as rm
from dlcprof.report.advice import AdviceSection
from dlcprof.report.monitors import DeviceSummary
from dlcprof.report.ranks import RanksSection
from dlcprof.report.run import RunModel

KERNEL_SOURCE_LINES = 60  # per kernel; a paste must stay readable
# GitHub refuses issue and comment bodies over 65,536 characters.
PASTE_LIMIT = 60_000
# How much detail fits: BRIEF leaves out each run's phase and kernel tables,
# SUMMARY each run's section.
FULL, NO_SOURCES, COMPACT, BRIEF, SUMMARY = 2, 1, 0, -1, -2


def cell(x: Any) -> str:
    """Text safe inside a Markdown table cell."""
    s = " ".join(str(x).split())
    return s.replace("\\", "\\\\").replace("|", "\\|").replace("<", "&lt;")


def plain(x: Any) -> str:
    """Session text outside a table or code span: one line, no HTML."""
    return " ".join(str(x).split()).replace("&", "&amp;").replace("<", "&lt;")


def code(x: Any) -> str:
    s = " ".join(str(x).split())
    tick = "``" if "`" in s else "`"
    pad = " " if tick == "``" else ""
    return f"{tick}{pad}{s}{pad}{tick}".replace("|", "\\|")


def table(header: list[str], rows: list[list[Any]], align: str = "") -> list[str]:
    """A GFM table; ``align`` is one letter per column ("l" or "r", "l" where
    short). A delimiter row of another width than the header makes GitHub show
    a paragraph of pipes, so it always has the header's."""
    aligns = align[: len(header)].ljust(len(header), "l")
    sep = ["---:" if a == "r" else "---" for a in aligns]
    out = ["| " + " | ".join(header) + " |", "| " + " | ".join(sep) + " |"]
    out += [
        "| " + " | ".join(cell(c) if not str(c).startswith("`") else str(c) for c in r) + " |"
        for r in rows
    ]
    return out


def _phases(r: RunModel, detail: int) -> list[str]:
    out = ["### Compile time", ""]
    if r.phases is None:
        return out + [text.na("no compile recorded in this run"), ""]
    out += [
        f"{text.plural(len(r.compiles), 'compile')}; total wall {r.compile_wall.text} (torch's "
        f"per-frame compile times). Phases nest; {r.phases.note}.",
        "",
    ]
    major, minor = r.phases.major, r.phases.minor
    if detail < NO_SOURCES:
        minor = minor + [t for t in major if t.depth > 2]
        major = [t for t in major if t.depth <= 2]
    rows: list[list[Any]] = [
        [t.label if t.pool else "· " * t.depth + t.name, t.count, t.total, t.share_text]
        for t in major
    ]
    if minor:
        what = "shorter" if detail >= NO_SOURCES else "shorter or deeper"
        rows.append([f"… {len(minor)} {what} phases: see report.html", "", "", ""])
    out += table(["phase", "calls", "total", "share of compile"], rows, "lrrr") + [""]
    cpu = r.cpu_columns
    rows = [
        [
            c.compile_id + (" (backward)" if c.backward and "bwd" not in c.compile_id else ""),
            c.wall.text,
            c.cache,
            c.ops,
            c.guards,
            c.kernels,
            text.short(str(c.reason)) if c.reason else "—",
            c.failure or "—",
            *(c.cpu if cpu else []),
        ]
        for c in r.compiles
    ]
    head = ["compile", "wall", "cache", "ops", "guards", "kernels", "recompile reason", "failure"]
    out += table(head + cpu, rows, "lrlrrrll" + "r" * len(cpu)) + [""]
    if r.cpu_note:
        out += [f"{r.cpu_note}.", ""]
    for c in r.restarted if detail >= NO_SOURCES else []:
        out += [f"Dynamo restarted `{c.compile_id}`: {c.restarts_text}.", ""]
    for c in r.compiles:
        out += [f"`{c.compile_id}` {line}." for line in c.cache_lines] + [""] * bool(c.cache_lines)
    return out


def _kernels(r: RunModel, detail: int) -> list[str]:
    out = ["### Fused kernels", ""]
    if not r.kernels:
        return out + [text.na(r.kernels_why), ""]
    rows = []
    kt = r.kernel_table
    origins = detail > COMPACT  # the user source lines are the first to give way
    for k in r.kernels:
        origin = "; ".join(f"{s.location} {s.code}".strip() for s in k.sources[:2])
        origin = origin or text.na(text.NO_SOURCE_LINES)
        rows.append(
            [
                k.number,
                code(k.name),
                k.kernel.kind,
                *kt.cells(k),
                k.ops,
                *([origin] if origins else []),
                k.compiles,
            ]
        )
    head = [
        "#",
        "kernel",
        "kind",
        *kt.columns,
        "fused ops",
        *(["from (user source)"] if origins else []),
        "compiles",
    ]
    out += table(head, rows, "rll" + "r" * len(kt.columns)) + [""]
    summary = kt.summary + ([kt.method] if kt.method and detail > COMPACT else [])
    if kt.profile is not None or detail > COMPACT:
        out += [f"- {line}" for line in summary] + [f"- {n}" for n in kt.notes] + [""]
    if detail < FULL:
        return out + ["Kernel sources left out to fit a paste: see report.html.", ""]
    for k in r.kernels:
        if not k.kernel.source.strip():
            continue
        lines = k.kernel.source.rstrip("\n").splitlines()
        more = len(lines) - KERNEL_SOURCE_LINES
        body = "\n".join(lines[:KERNEL_SOURCE_LINES])
        fence = "````" if "```" in body else "```"
        out += [
            f"<details><summary>{cell(k.name)} ({len(lines)} lines)</summary>",
            "",
            f"{fence}{k.lang}",
            body,
            fence,
        ]
        if more > 0:
            out += ["", f"… {more} more lines in report.html / session.json"]
        out += ["", "</details>", ""]
    return out


def _recompiles(r: RunModel, detail: int) -> list[str]:
    out = ["### Recompiles", ""]
    if not r.recompiles:
        out += ["None.", ""]
    else:
        rows = [
            [
                rc.number,
                rc.compile_id or text.NA,
                rc.reason.newest,
                rc.cost.text,
                rc.cumulative.text,
            ]
            for rc in r.recompiles
        ]
        head = ["#", "compile", "newest guard failure", "cost", "cumulative"]
        out += table(head, rows, "rllrr") + [""]
    if r.dims:
        out += [f"{fr.DIMS_MADE_DYNAMIC}: " + ", ".join(code(d) for d in r.dims), ""]
    if r.scalars_text and detail >= NO_SOURCES:
        out += [r.scalars_text, ""]
    if r.sweep:
        out += ["### Shape sweep", ""]
        rows = [
            [
                st.size,
                st.flag,
                st.transition,
                st.cumulative,
                st.latency,
                text.short(str(st.reason), 100) if st.reason else "—",
            ]
            for st in r.sweep.steps
        ]
        head = ["size", "step", "transition", "cumulative", "latency", "reason"]
        out += table(head, rows, "rlrrrl") + ["", r.sweep.summary, ""]
    return out


def _run_modes(r: RunModel) -> list[str]:
    """What the run's mode did: the ops it autotuned, its graphs' CUDA graphs."""
    a, cg = r.autotune, r.cudagraphs
    if not (r.shows_autotune or r.shows_cudagraphs):
        return []
    # An attached process has no mode of its own (its calls' are in its settings).
    out = [f"Mode {plain(r.mode_meaning)}", ""] if r.mode_meaning else []
    if r.shows_autotune:
        out += ["### Autotuning", "", plain(a.line), ""]
        rows = [
            [
                op.op if i == 0 else "",
                op.shapes if i == 0 else "",
                code(c.name),
                text.ms(c.ms, "failed"),
                c.config or "—",
                "fastest" if c is op.winner else "",
                text.secs(op.event.precompile_s) if i == 0 else "",
                text.secs(op.event.benchmark_s, "cached") if i == 0 else "",
            ]
            for op in a.ops
            for i, c in enumerate(op.choices)
        ]
        head = ["op", "input shapes", "choice", "time", "config", "", "precompile", "benchmark"]
        align = "lllrllrr"
        if not a.has_configs:
            rows = [r[:4] + r[5:] for r in rows]
            head, align = head[:4] + head[5:], align[:4] + align[5:]
        if rows:
            out += table(head, rows, align) + [""]
    if r.shows_cudagraphs:
        out += ["### CUDA graphs", "", f"CUDA graphs: {plain(cg.line)}", ""]
        head = ["compile", "graph", "CUDA-graphed", "torch's reason"]
        head += ["recordings", "re-recordings", "replays"] if cg.counted else []
        rows = [
            [
                g.event.compile_id or text.NA,
                g.event.graph,
                text.value(g.event.graphed),
                g.reason or "—",
            ]
            + (
                [text.count(g.recordings), text.count(g.rerecordings), text.count(g.replays)]
                if cg.counted
                else []
            )
            for g in cg.graphs
        ]
        if rows:
            out += table(head, rows, "llllrrr"[: len(head)]) + [""]
    return out


def _modes(report: rm.Report) -> list[str]:
    out: list[str] = []
    for t in report.modes:
        out += [f"## {plain(t.title)}", ""]
        out += table(list(fm.COLUMNS), [row.words() for row in t.rows], "lrrrrrrl") + [""]
        out += [f"- {plain(note)}" for note in t.notes] + [""]
    return out


def _benchmark(r: RunModel, detail: int = FULL) -> list[str]:
    out = ["### Benchmark", ""]
    b = r.benchmark
    if b is None:
        calls = [f"- {line}" for line in r.compiled_with]
        return out + [text.na(r.benchmark_why), "", *calls, f"- {r.observer.line}", ""]
    if detail < NO_SOURCES:
        # Compact: the headline figures and the verdict on the two speedups.
        return out + [
            f"- speedup: **{b.speedup}**, break-even: **{b.break_even}** ({b.columns[0]})",
            f"- {b.sentence}",
            f"- {plain(b.allocator.sentence)}",
            "",
        ]
    out += table(["", *b.columns], [[label, *cells] for label, cells in b.rows], "lrr")
    return out + [
        "",
        f"- compiled vs eager: {b.verdict}",
        f"- compile cost: {b.compile} (first compiled call minus a steady one)",
        f"- {b.sentence}",
        *(f"- {plain(n)}" for n in b.notes),
        f"- measured: {b.measured}",
        f"- {r.observer.line}",
        "",
    ]


def _notes(r: RunModel, detail: int) -> list[str]:
    if not (r.warnings or r.unavailable):
        return []
    out = ["### Notes", ""]
    out += [f"- probe `{p}` unavailable: {cell(why)}" for p, why in r.unavailable.items()]
    if r.unavailable:
        out += [""]
    n = len(r.warnings)
    if r.warnings and detail < NO_SOURCES:
        out += [f"{text.plural(n, 'warning line')} from the worker: see report.html.", ""]
    elif r.warnings:
        # Torch warnings arrive a line at a time: quote them as the log they are.
        log = [f"[{lg.level} · {lg.source}] {lg.message}" for lg in r.warnings[:100]]
        fence = "````" if any("```" in x for x in log) else "```"
        more = f", first 100 of {n}" if n > 100 else ""
        out += [
            f"<details><summary>{text.plural(n, 'warning line')} from the worker{more}</summary>",
            "",
            f"{fence}text",
            *log,
            fence,
            "",
            "</details>",
            "",
        ]
    return out


def _paper(p: rm.PaperSection) -> list[str]:
    out = [f"## {fpt.PAPER_TITLE}", ""]
    out += table(list(fpt.PAPER_COLUMNS), [list(row) for row in p.summary]) + [""]
    out += [f"### {fpt.PAPER_WORKLOADS}", ""]
    out += table(list(fpt.WORKLOAD_COLUMNS), p.workloads, "ll" + "r" * 8) + [""]
    return out + [f"- {plain(n)}" for n in p.notes] + [""]


def _advice(a: AdviceSection | None) -> list[str]:
    if a is None:
        return []
    out = ["## Advice", "", f"For run `{a.run_id}`.", ""]
    if a.advice.nothing:
        out += [plain(a.advice.nothing), ""]
    if a.items:
        rows = [
            [
                i.number,
                i.advice.title,
                i.advice.change,
                i.predicted,
                "; ".join(i.advice.evidence),
                i.advice.cost,
            ]
            for i in a.items
        ]
        header = ["#", "advice", "change", "predicted", "evidence", "known cost"]
        out += table(header, rows, "rlllll") + [""]
    out += [f"- not shown: {plain(line)}" for line in a.advice.hidden]
    out += [f"- tried: {plain(t.event.title)}: {plain(t.text)}" for t in a.tried]
    return out + ([""] if a.advice.hidden or a.tried else [])


def _compile_cost(r: RunModel) -> list[str]:
    c = r.compile_cost
    if c is None:
        why = r.compile_cost_why
        return [f"Compile cost by your code: {text.na(why)}", ""] if why else []
    out = ["### Compile cost by your code", ""]
    for line, columns, rows in (
        (c.dynamo_line, c.function_columns, c.functions),
        (c.lowering_line, c.module_columns, c.modules),
    ):
        out += [plain(line), ""]
        if rows:
            out += table(list(columns), [list(row) for row in rows], "llrrr") + [""]
    return out + [plain(c.probe_line), ""]


def _device_spans(dev: DeviceSummary) -> list[str]:
    rows = [[label, *cells] for label, cells in dev.spans.rows()]
    return table(dev.spans.columns(), rows, "l" + "r" * len(dev.by_span)) + [""]


def _run_section(r: RunModel, detail: int = FULL) -> list[str]:
    out = [f"## Run {r.number}: {plain(r.label)}", ""]
    since = f" ({r.wall_since})" if r.wall_since else ""
    out.append(
        f"Run id `{r.run_id}` · status **{r.status}**"
        + (f" · target `{r.target}`" if r.target else "")
        + (f" · wall {r.wall.text}{since}" if r.wall else "")
    )
    if r.description:
        out += ["", f"> {cell(r.description)}"]
    if r.chips:  # an attached program's settings are its compile calls', below
        out += ["", "**Settings**: " + " ".join(code(f"{k}={v}") for k, v in r.chips)]
    out += [""]
    if r.repro:
        out += ["Reproduce:", "", "```sh", r.repro, "```", ""]
    if r.compile_raised:
        first, *fixes = r.compile_raised
        out += [f"> **{cell(first)}**", *(f"> {cell(f)}" for f in fixes), ""]
    if r.nothing_compiled:
        first, *hints = r.nothing_compiled
        out += [f"> **{cell(first)}**", *(f"> {cell(h)}" for h in hints), ""]
    out += [*(f"> {cell(n)}" for n in r.process_notes), ""] if r.process_notes else []
    if r.limit is not None:
        out += [
            f"> **Warning: recompile limit hit** {cell(r.limit.line)} ({cell(r.limit.eager)}).",
            f"> {cell(r.limit.message)}",
            "",
        ]
    for e in r.errors:
        out += [f"> **Error ({e.stage})**: {cell(e.message)}", ""]
    if detail >= COMPACT:
        out += _phases(r, detail) + _kernels(r, detail)
    else:  # many runs: each one's phase and kernel tables are in report.html
        out += [
            f"{text.plural(len(r.compiles), 'compile')}, total wall {r.compile_wall.text}; "
            f"{fk.kernel_count(r.run).words}: tables in report.html",
            "",
        ]
    out += _run_modes(r)
    out += _recompiles(r, detail)
    out += _compile_cost(r)
    out += ["### Graph breaks", ""]
    if not r.graph_breaks:
        out += ["None.", ""]
    else:
        rows = [
            [
                i,
                f"[{g.gb_id}]({g.link})" if g.link else g.kind,
                g.reason,
                (code(g.location) + f" {text.broke_inside(g.detail)}".rstrip())
                if g.location
                else text.na("no user frame"),
                g.frames,
                "; ".join(g.hints) or "—",
            ]
            for i, g in enumerate(r.graph_breaks, 1)
        ]
        out += table(["#", "id", "reason", "location", "compile", "hints"], rows, "rlllll")
        out += ["", "By kind: " + "; ".join(plain(k.words()) for k in r.graph_break_kinds), ""]
    out += _benchmark(r, detail)
    if r.device.by_span:
        out += ["### Device during this run", ""] + _device_spans(r.device)
    out += _notes(r, detail)
    return out


def divergence_lines(found: list[fdiv.Divergence]) -> list[str]:
    """Each divergence among ranks, its evidence under it."""
    out = []
    for d in found:
        out.append(f"- **{plain(d.headline)}**" if d.alarm else f"- {plain(d.headline)}")
        out += [f"  - {plain(line)}" for line in d.evidence]
    return out + ([""] if out else [])


def _ranks(r: RanksSection) -> list[str]:
    out = ["## Ranks", "", f"Rank groups: {r.groups_summary}", ""]
    cells = [fgroups.group_cells(g, len(r.groups)) for g in fgroups.shown_groups(r.groups)]
    out += table(list(fgroups.GROUP_COLUMNS), cells, "lrrrrrrl") + [""]
    note = fgroups.groups_note(r.groups)
    out += [note, ""] if note else []
    out += table(list(franks.COLUMNS), [franks.row_cells(row) for row in r.rows], "rlrlrrrrrrr")
    out += [""] + [f"- {plain(n)}" for n in r.notes] + [""]
    if r.break_kinds:
        kinds = "; ".join(plain(k.words()) for k in r.break_kinds)
        out += [f"Graph breaks by kind, all ranks: {kinds}"]
        out += [""]
    out += [r.summary, ""]
    return out + divergence_lines(r.divergences)


def render_markdown(report: rm.Report) -> str:
    """A session's model as Markdown (GitHub flavour), short enough to paste:
    kernel sources are left out when they would push it past GitHub's limit."""
    for detail in (FULL, NO_SOURCES, COMPACT, BRIEF, SUMMARY):
        md = _render(report, detail)
        if len(md) <= PASTE_LIMIT:
            break
    return md


def _render(report: rm.Report, detail: int) -> str:
    out = [f"# dlcprof report: {plain(report.title)}", ""]
    if detail < FULL:
        out += ["> Shortened to fit a GitHub paste: report.html has every detail.", ""]
    out += [
        f"dlcprof {report.version} · recorded {report.recorded or text.NA} · {report.counted}",
        "",
        "## Environment",
        "",
    ]
    out += table(["", ""], [[row.label, row.text] for row in report.environment.rows]) + [""]

    if report.runs:
        out += ["## Summary", ""]
        out += table(
            list(rm.SUMMARY_COLUMNS), [r.summary_row() for r in report.runs], "rllllrrrrrrr"
        ) + [""]
    if report.program is not None:  # dlcprof -- CMD: the user's program
        out += ["## Program", ""] + [f"- {plain(line.strip())}" for line in report.program.lines]
        out += [""]
    if report.imported:  # dlcprof import: read from TORCH_TRACE logs
        out += ["## Imported", ""] + [f"- {plain(line)}" for line in report.imported] + [""]
    if report.ranks is not None:  # torchrun: the ranks side by side
        out += _ranks(report.ranks)
    out += _advice(report.advice)
    if report.paper is not None:
        out += _paper(report.paper)
    for c in report.sweeps:
        out += [f"**Shape transitions, {plain(c.workload)}**: {c.verdict}.", ""]
    out += _modes(report)
    if detail < BRIEF:  # many runs: the tables above are what fits
        out += ["Each run's own section is left out to fit a paste: see report.html.", ""]
    for r in report.runs if detail >= BRIEF else []:
        out += _run_section(r, detail)

    out += ["## Device", ""]
    dev = report.device
    if not dev.samples:
        out += [text.na(report.device_why), ""]
    else:
        out += [
            f"{len(dev.samples)} samples over {dev.duration} from {', '.join(dev.sources)}.",
            "",
        ]
        rows = [
            [m.key, m.min, m.mean, m.max]
            if m.stats.count
            else [m.key, text.na("the probe gave no value"), "", ""]
            for m in dev.metrics
        ]
        out += table(["metric", "min", "mean", "max"], rows, "lrrr") + [""]
        if dev.by_span:
            out += ["Mean / max during the compiles vs after them (benchmark, sweep):", ""]
            out += _device_spans(dev)
    for name, m in report.monitors.items():
        status = "available" if m.available else "unavailable"
        out.append(f"- {name}: {status}: {cell(m.message)}")
    if report.monitors:
        out.append("")

    out += ["## Compiler hotspots", ""]
    if not report.hotspot_runs:
        out += [text.na(report.hotspots_why), ""]
    for r in report.hotspot_runs:
        if len(report.runs) > 1:
            out += [f"### Run {r.number}: {plain(r.name)}", ""]
        out += [
            f"py-spy, {r.hotspots.scope}; own = samples in the function itself, "
            "total = with callees.",
            "",
        ]
        rows = [
            [code(h.row.function), h.location, h.own, h.total, h.phase]
            for h in r.hotspots.rows[:15]
        ]
        out += table(["function", "location", "own", "total", "phase"], rows, "llrrl") + [""]
        if r.hotspots.others:
            out += [r.hotspots.others, ""]

    if report.errors:
        out += ["## Errors", ""]
        out += [f"- {e.stage}: {cell(e.message)}" for e in report.errors]
        out += [""]
    return "\n".join(out).rstrip() + "\n"
