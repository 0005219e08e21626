"""Rich tables that the headless console and the TUI both show: what a mode
did (autotuning, CUDA graphs), every mode side by side, and the paper's findings."""

from __future__ import annotations

from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text

from dlcprof import text
from dlcprof.figures import modes as fm
from dlcprof.figures import paper as fpa
from dlcprof.session import Run


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
                op.op if first else "", op.shapes if first else "", c.name,
                text.ms(c.ms, "failed"), c.config, "fastest" if c is op.winner else "",
                text.secs(op.event.precompile_s) if first else "",
                text.secs(op.event.benchmark_s, "cached") if first else "",
            ]  # fmt: skip
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
        cells = [g.event.compile_id or text.NA, g.event.graph, text.value(g.event.graphed),
                 g.reason or "—"]  # fmt: skip
        if cg.counted:
            cells += [text.count(g.recordings), text.count(g.rerecordings), text.count(g.replays)]
        t.add_row(*cells)
    return Group(t, line)


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


def paper_tables(f: fpa.Findings, fill: bool = False) -> RenderableType:
    """The paper's findings beside this machine's, then the workloads behind
    them (``dlcprof paper``). ``fill``: as wide as the screen (the TUI's)."""
    t = Table(title=text.PAPER_TITLE, title_justify="left", expand=fill)
    for i, (col, ratio) in enumerate(zip(text.PAPER_COLUMNS, (2, 2, 5), strict=True)):
        t.add_column(col, style="bold" if i == 0 else "", ratio=ratio if fill else None)
    for row in fpa.summary_rows(f):
        t.add_row(*row)
    w = Table(title=text.PAPER_WORKLOADS, title_justify="left", expand=fill)
    for i, col in enumerate(text.WORKLOAD_COLUMNS):
        # The workload and its kind whole; the figures wrap at their spaces.
        w.add_column(col, justify="right" if i >= 2 else "left", no_wrap=i < 2,
                     overflow="fold")  # fmt: skip
    for row in fpa.workload_rows(f):
        w.add_row(*row)
    notes = [Text(line, style="dim") for line in fpa.notes(f)]
    return Group(t, *([Text("")] if fill else []), w, *notes)
