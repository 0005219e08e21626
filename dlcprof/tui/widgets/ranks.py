"""The ranks of a torchrun job: the Ranks view (the ranks grouped by what they
did, outliers first; one lane per rank kept on the program's time axis, the
divergences, the per-rank table) and the red banner
on the main screen when ranks stop agreeing. Figures come from
``figures.job.ranks``, ``figures.job.divergence`` and ``figures.job.lanes``;
this only places them."""

from __future__ import annotations

from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text
from textual.app import ComposeResult
from textual.containers import VerticalScroll
from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import phases as fp
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import lanes as rl
from dlcprof.figures.job import ranks as franks
from dlcprof.figures.job.imported import damage_lines
from dlcprof.figures.job.rank_runs import by_rank
from dlcprof.tables import divergences_text, group_table
from dlcprof.tui.ordering import Figure, Figured
from dlcprof.tui.view import View
from dlcprof.tui.widgets.sorted_table import Row, SortedTable

LABEL_W = 11  # "▶ rank 12 ⚠"
# (glyph, style, legend) of each kind of cell: the stages in their report colours
# (the terminal's magenta and red look alike in some themes).
_CELL: dict[str | None, tuple[str, str, str]] = {
    **{s.name: ("█", s.color, s.name) for s in fp.STAGES},
    rl.WHOLE: ("█", "default", "a compile too narrow for its stages"),  # light themes too
    rl.RUNNING: ("▶", "bold yellow", "compiling now"),
    rl.ALIVE: ("─", "bright_black", "process alive"),
    None: (" ", "", ""),
}


def alarms(view: View) -> list[fdiv.Divergence]:
    return fdiv.alarms(fdiv.divergences(view.session, view.now))


class DivergenceBanner(Static):
    """One red line the moment ranks disagree; notes never show here."""

    def show(self, view: View) -> None:
        found = alarms(view)
        self.display = bool(found)
        if found:
            more = f" (+{len(found) - 1} more)" if len(found) > 1 else ""
            self.update(
                Text(
                    f"⚠ RANKS DIVERGE: {found[0].headline}{more} — see Ranks view (R)",
                    no_wrap=True,
                    overflow="ellipsis",
                )
            )


class RankLanes:
    """The lanes, laid out against the width they are given."""

    def __init__(self, lanes: rl.Lanes, selected: str | None, flagged: set[int]) -> None:
        self.lanes, self.selected, self.flagged = lanes, selected, flagged

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        width = max(8, options.max_width - LABEL_W - 2)
        pad = " " * (LABEL_W + 1)
        drawn: set[str | None] = set()
        for lane in self.lanes.lanes:
            chosen = lane.run_id == self.selected
            line = Text(no_wrap=True, overflow="crop")
            label = f"{'▶ ' if chosen else '  '}{lane.label}"
            line.append(f"{label:<{LABEL_W - 2}}", style="bold reverse" if chosen else "bold")
            line.append(" ⚠" if lane.rank in self.flagged else "  ", style="bold red")
            line.append("▕")
            cells = lane.cells(width)
            drawn.update(cells)
            for cell in cells:
                glyph, style, _ = _CELL[cell]
                line.append(glyph, style=style)
            line.append("▏")
            yield line
            yield Text(pad + lane.labels(width), style="dim", no_wrap=True, overflow="crop")
        yield Text(pad + self.lanes.axis(width), no_wrap=True, overflow="crop")
        legend = Text(pad)
        for cell, (glyph, style, name) in _CELL.items():
            if cell in drawn and name:
                legend.append(f"{glyph} ", style=style)
                legend.append(f"{name}   ", style="dim")
        yield legend


class RanksPane(VerticalScroll):
    def compose(self) -> ComposeResult:
        yield Static(id="ranks-title")
        yield Static(id="ranks-groups")
        yield Static(id="ranks-divergences")
        yield Static(id="ranks-lanes")
        yield SortedTable([(c, None) for c in franks.COLUMNS], id="ranks-table")
        yield Static(id="ranks-notes")

    def show(self, view: View) -> None:
        selected = view.run.run_id if view.run is not None else None
        lanes = rl.rank_lanes(view.session, view.now)
        title = self.query_one("#ranks-title", Static)
        if lanes is None:
            title.update(Text(rl.NO_RANKS, style="dim"))
            for part in ("#ranks-groups", "#ranks-divergences", "#ranks-lanes", "#ranks-notes"):
                self.query_one(part, Static).update("")
            self.query_one(SortedTable).fill([])
            return
        shown = rl.shown_words(view.session, view.run) or "no rank selected"
        ranks = len(view.session.rank_summaries) or len(by_rank(view.session))
        kept = (
            f" (lanes: {fgroups.shown_words(view.session)}, {len(lanes.lanes)} of "
            f"{text.count(ranks)})"
            if ranks > len(lanes.lanes)
            else ""
        )
        title.update(
            Text.assemble(
                (f" {text.count(ranks)} rank{'s' if ranks != 1 else ''} ", "bold reverse"),
                f"{kept}  panes show {shown}  ·  [ / ] steps through the ranks",
            )
        )
        self.query_one("#ranks-groups", Static).update(group_table(view.session) or "")
        self.query_one("#ranks-divergences", Static).update(
            divergences_text(view.session, view.now)
        )
        flagged = {d.rank for d in alarms(view)}
        self.query_one("#ranks-lanes", Static).update(RankLanes(lanes, selected, flagged))
        rows = franks.rank_rows(view.session, fdiv.divergences(view.session, view.now))
        table = self.query_one(SortedTable)
        table.fill(
            [
                Row(
                    [
                        Figured(Text(c, style="bold" if r.run_id == selected else ""), f)
                        for c, f in zip(franks.row_cells(r), _figures(r), strict=True)
                    ],
                    r.run_id,
                )
                for r in rows
            ]
        )
        table.border_title = table.counted("Ranks")
        notes = damage_lines(view.session) + franks.notes(view.session, rows)
        self.query_one("#ranks-notes", Static).update("\n".join(notes))


def _figures(r: franks.RankRow) -> tuple[Figure, ...]:
    """What each of a rank's cells sorts by (franks.COLUMNS order)."""
    return (
        *(r.rank, r.host, r.pid, r.status, r.compiles, r.recompiles, r.graph_breaks),
        *(r.compile_s, r.cache_hits, r.graphs, r.blocked_s),  # "hits/misses": by its hits
    )
