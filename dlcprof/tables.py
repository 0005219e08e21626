"""Rich tables that the headless console and the TUI both show: what a mode
did (autotuning, CUDA graphs), every mode side by side, the device per span, the
paper's findings, and two runs compared (``dlcprof compare``)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dlcprof import text
from dlcprof.figures import device as fd
from dlcprof.figures import modes as fm
from dlcprof.figures import paper as fpa
from dlcprof.figures import paper_tables as fpt
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import ranks as franks
from dlcprof.session import Run, Session

if TYPE_CHECKING:  # a comparison's module: only `dlcprof compare` needs it
    from dlcprof.figures import compare as fc


def autotune_table(run: Run) -> RenderableType | None:
    """Each autotuned op's choices, fastest first; else why nothing was autotuned."""
    a = fm.autotune(run)
    if not a.ops and run.settings is not None and run.settings.mode not in fm.AUTOTUNE_MODES:
        return None
    line = Text(a.line, style="bold" if a.ops else "yellow")
    if not a.ops:
        return line
    t = Table(title="Autotuning", title_justify="left")
    cols = ["op", "input shapes", "choice", "time", "config", "", "precompile", "benchmark"]
    if not a.has_configs:
        cols.remove("config")
    for col in cols:
        t.add_column(col)
    for op in a.ops:
        for i, c in enumerate(op.choices):
            first = i == 0
            cells = [
                op.op if first else "",
                op.shapes if first else "",
                c.name,
                text.ms(c.ms, "failed"),
                c.config,
                "fastest" if c is op.winner else "",
                text.secs(op.event.precompile_s) if first else "",
                text.secs(op.event.benchmark_s, "cached") if first else "",
            ]
            if not a.has_configs:
                del cells[4]
            t.add_row(*cells)
    return Group(t, line)


def cudagraphs_table(run: Run) -> RenderableType | None:
    """Per compiled graph: CUDA-graphed, or torch's reason not to."""
    cg = fm.cudagraphs(run)
    if cg.verdict == "off" and not cg.graphs:
        return None
    line = Text(f"CUDA graphs: {cg.line}", style="bold")
    if not cg.graphs:
        return line
    t = Table(title="CUDA graphs", title_justify="left")
    cols = ["compile", "graph", "CUDA-graphed", "torch's reason"]
    if cg.counted:
        cols += ["recordings", "re-recordings", "replays"]
    for col in cols:
        t.add_column(col)
    for g in cg.graphs:
        cells = [
            g.event.compile_id or text.NA,
            g.event.graph,
            text.value(g.event.graphed),
            g.reason or "—",
        ]
        if cg.counted:
            cells += [text.count(g.recordings), text.count(g.rerecordings), text.count(g.replays)]
        t.add_row(*cells)
    return Group(t, line)


def device_table(run: Run) -> Table | None:
    """Mean / max of the device samples during compiles vs after them."""
    st = fd.span_table(run)
    if st is None:
        return None
    t = Table(title=f"Device ({st.source}) — mean / max per span", title_justify="left")
    for i, col in enumerate(st.columns()):
        t.add_column(col, justify="right" if i else "left")
    for label, cells in st.rows():
        t.add_row(label, *cells)
    return t


def modes_table(table: fm.ModeTable) -> RenderableType:
    """Every mode of one workload side by side (``dlcprof run --mode all``): one
    column per mode, so long reasons wrap inside their mode's column."""
    t = Table(title=table.title, title_justify="left")
    t.add_column("", style="bold", no_wrap=True)
    for row in table.rows:
        t.add_column(_break_at_hyphens(row.mode), ratio=1)
    cells = [row.words() for row in table.rows]
    for i, label in enumerate(fm.COLUMNS[1:], 1):
        t.add_row(label, *(c[i] for c in cells))
    return Group(t, *(Text(f"· {note}", style="dim") for note in table.notes))


def _break_at_hyphens(name: str, width: int = 16) -> str:
    """A long mode name on lines of at most ``width``, broken after hyphens."""
    lines = [""]
    for part in name.split("-"):
        piece = part if not lines[-1] else f"-{part}"
        if lines[-1] and len(lines[-1]) + len(piece) > width:
            lines[-1] += "-"
            lines.append(part)
        else:
            lines[-1] += piece
    return "\n".join(lines)


# --- two runs side by side ---------------------------------------------------------------

VERDICT_STYLE = {"better": "green", "worse": "red", "same": "dim", "": ""}


def _delta_table(title: str, first: str) -> Table:
    t = Table(title=title, title_justify="left")
    t.add_column(first)
    for col in ("A", "B", "delta"):
        t.add_column(col, justify="right")
    return t


def divergence_text(d: fdiv.Divergence, evidence: bool = False) -> Text:
    """A divergence among ranks: red for an alarm, yellow for a note."""
    mark, style = ("⚠ ", "bold white on red") if d.alarm else ("· ", "bold yellow")
    lines = [Text(f"{mark}{d.headline}", style=style)]
    lines += [Text(f"    {line}", style="dim") for line in d.evidence] if evidence else []
    return Text("\n").join(lines)


def rank_table(session: Session, selected: str | None = None) -> Table | None:
    """The ranks side by side (``selected``: that rank's row in bold); what the
    columns cannot say, under it."""
    rows = franks.rank_rows(session, fdiv.divergences(session))
    if not rows:
        return None
    t = Table(title="Ranks", title_justify="left")
    for col in franks.COLUMNS:
        t.add_column(col, justify="left" if col in ("host", "status") else "right")
    for row in rows:
        t.add_row(*franks.row_cells(row), style="bold" if row.run_id == selected else "")
    t.caption = "\n".join(franks.notes(session, rows))
    t.caption_justify = "left"
    return t


def group_table(session: Session) -> Table | None:
    """The ranks grouped by what they did, outliers first (None: no ranks)."""
    groups = fgroups.rank_groups(session)
    if not groups:
        return None
    t = Table(title=f"Rank groups: {fgroups.summary(groups)}", title_justify="left")
    for col in fgroups.GROUP_COLUMNS:
        t.add_column(col, justify="left" if col in ("ranks", "differs") else "right")
    for g in fgroups.shown_groups(groups):
        t.add_row(*fgroups.group_cells(g, len(groups)), style="bold red" if g.differs else "")
    t.caption = fgroups.groups_note(groups)
    t.caption_justify = "left"
    return t


def divergences_text(session: Session, now: float | None = None) -> Text:
    """The checks' verdict, then each divergence with its evidence."""
    found = fdiv.divergences(session, now)
    lines = [Text(fdiv.verdict(session, found))]
    lines += [divergence_text(d, evidence=True) for d in found]
    return Text("\n").join(lines)


def compare_table(cmp: fc.Comparison) -> RenderableType:
    """Two runs compared: headline numbers, phases, kernels, changes."""
    parts: list[RenderableType] = [
        Text.assemble(("A ", "bold"), cmp.a_label, "\n", ("B ", "bold"), cmp.b_label)
    ]
    parts += [Text(note, style="yellow") for note in cmp.notes]
    for side in cmp.ranks:
        parts.append(Text(f"{side.side}: {side.summary}", style="bold"))
        parts += [divergence_text(d, evidence=True) for d in side.divergences]
    if cmp.settings:
        t = Table(title="settings that differ", title_justify="left", expand=False)
        for col in ("setting", "A", "B"):
            t.add_column(col)
        for setting, va, vb in cmp.settings:
            t.add_row(setting, text.value(va), text.value(vb))
        parts.append(t)

    t = _delta_table("headline (delta = B - A)", "metric")
    for row in cmp.headline():
        t.add_row(row.name, row.a, row.b, Text(row.delta, style=VERDICT_STYLE[row.verdict]))
    parts.append(t)
    if cmp.cache_note:
        parts.append(Text(cmp.cache_note, style="yellow"))
    parts += [Text(line, style="yellow") for line in cmp.cache_misses]
    if cmp.cache_advice:
        parts.append(Text(cmp.cache_advice, style="yellow"))

    t = _delta_table("compile time by phase", "phase")
    major, minor = cmp.split_phases()
    for p in major:
        t.add_row(p.label, p.a_text, p.b_text, Text(p.delta_text, style=VERDICT_STYLE[p.verdict]))
    if minor:
        a_sum = sum(p.a_s or 0.0 for p in minor)
        b_sum = sum(p.b_s or 0.0 for p in minor)
        t.add_row(
            Text(f"… {text.plural(len(minor), 'shorter phase')}", style="dim"),
            Text(text.secs(a_sum), style="dim"),
            Text(text.secs(b_sum), style="dim"),
            Text(text.signed_secs(b_sum - a_sum), style="dim"),
        )
    parts.append(t)

    t = Table(title=cmp.kernels.title, title_justify="left")
    t.add_column("change")
    t.add_column("kernel", overflow="fold")
    t.add_column("fused ops", overflow="fold")
    for k in cmp.kernels.added:
        t.add_row(Text("added", style="green"), k.name, ", ".join(k.fused_ops))
    for k in cmp.kernels.removed:
        t.add_row(Text("removed", style="red"), k.name, ", ".join(k.fused_ops))
    for c in cmp.kernels.changed:
        t.add_row(Text(c.how, style="yellow"), c.name, c.ops)
    for g in cmp.kernels.recompiled:
        t.add_row(Text("unchanged", style="dim"), g.name, g.words)
    parts.append(t if t.row_count else Text(cmp.kernels.title, style="dim"))

    if cmp.kernels.times:
        t = _delta_table("kernel time per compiled call (delta = B - A)", "kernel")
        for kt in cmp.kernels.times:
            style = VERDICT_STYLE[kt.verdict]
            t.add_row(kt.name, kt.a_text, kt.b_text, Text(kt.delta_text, style=style))
        parts.append(t)

    t = Table(title="graph breaks and recompiles", title_justify="left")
    for col in ("change", "kind", "reason", "location"):
        t.add_column(col)
    for reason, loc in cmp.graph_breaks_added:
        t.add_row(Text("added", style="red"), "graph break", reason, loc)
    for reason, loc in cmp.graph_breaks_gone:
        t.add_row(Text("gone", style="green"), "graph break", reason, loc)
    for how, newest in cmp.recompile_changes:
        style = "red" if how == "added" else "green"
        t.add_row(Text(how, style=style), "recompile", newest, "")
    if t.row_count:
        parts.append(t)
    else:
        parts.append(Text("graph breaks and recompiles: no change", style="dim"))
    return Group(*parts)


def paper_tables(f: fpa.Findings, fill: bool = False) -> RenderableType:
    """The paper's findings beside this machine's, then the workloads behind
    them (``dlcprof paper``). ``fill``: as wide as the screen (the TUI's)."""
    t = Table(title=fpt.PAPER_TITLE, title_justify="left", expand=fill)
    for i, (col, ratio) in enumerate(zip(fpt.PAPER_COLUMNS, (2, 2, 5), strict=True)):
        t.add_column(col, style="bold" if i == 0 else "", ratio=ratio if fill else None)
    for summary in fpt.summary_rows(f):
        t.add_row(*summary)
    w = Table(title=fpt.PAPER_WORKLOADS, title_justify="left", expand=fill)
    for i, col in enumerate(fpt.WORKLOAD_COLUMNS):
        # The workload and its kind whole; the figures wrap at their spaces.
        w.add_column(col, justify="right" if i >= 2 else "left", no_wrap=i < 2, overflow="fold")
    for row in fpt.workload_rows(f):
        w.add_row(*row)
    notes = [Text(line, style="dim") for line in fpt.notes(f)]
    return Group(t, *([Text("")] if fill else []), w, *notes)
