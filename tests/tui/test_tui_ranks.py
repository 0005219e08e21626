"""The TUI on the ranks of a torchrun job, from hand-built events: the rank
selector ([ / ]) that every pane follows, the Ranks view (R), the red
divergence banner, and the same in a replay of the saved session."""

from __future__ import annotations

from pathlib import Path

from helpers.program import rank_compile_phases, rank_run_id, ranked_program
from helpers.tui import SIZE, painted, shown
from rich.text import Text
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof.engine import save_report
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import ranks as fr
from dlcprof.report.load import load_session
from dlcprof.session import Session
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.ordering import plain
from dlcprof.tui.screens import RanksScreen
from dlcprof.tui.widgets.runs import RunSelector
from dlcprof.tui.widgets.sorted_table import SortedTable
from dlcprof.tui.widgets.status_bar import StatusBar


def live_app(events: list[ev.Event]) -> DlcprofApp:
    app = DlcprofApp(start_standby=False, deterministic=True)
    for e in events:
        app.emit(e)
    return app


async def settle(pilot) -> None:
    await painted(pilot)  # the events folded, the panes repainted


async def test_the_rank_selector_moves_every_pane() -> None:
    app = live_app(ranked_program(diverge_rank=1))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        runs = app.query_one(RunSelector)
        assert [o.id for o in runs._options] == [rank_run_id(0), rank_run_id(1)]  # by rank
        assert "rank 0" in str(runs.get_option_at_index(0).prompt)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert app.selected_run_id == rank_run_id(0)
        phases = shown(app.query_one("#phases-body", Static))
        assert "compile 0/0" in phases and "compile 0/1" not in phases
        assert runs.border_title == "Ranks (2) · rank 0 of 2 shown"
        assert "rank 0 of 2 shown" in shown(app.query_one(StatusBar), 400)
        await pilot.press("right_square_bracket")
        await settle(pilot)
        assert app.selected_run_id == rank_run_id(1)
        phases = shown(app.query_one("#phases-body", Static))
        assert "compile 0/1" in phases and "recompile" in phases  # rank 1's own recompile
        assert runs.border_title == "Ranks (2) · rank 1 of 2 shown"
        await pilot.press("right_square_bracket")  # round the ranks
        await settle(pilot)
        assert app.selected_run_id == rank_run_id(0)
        await pilot.press("left_square_bracket")
        await settle(pilot)
        assert app.selected_run_id == rank_run_id(1)
        keys = {k for k, b in app.active_bindings.items() if b.binding.show}
        assert {"R", "left_square_bracket", "right_square_bracket"} <= keys
        titles = {c.title for c in app.get_system_commands(app.screen)}
        assert {"Ranks (R)", "Previous rank ([)", "Next rank (])"} <= titles


async def test_no_rank_keys_without_ranks() -> None:
    app = DlcprofApp(start_standby=False, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        keys = set(app.active_bindings)
        assert not {"R", "left_square_bracket", "right_square_bracket"} & keys
        assert not [c for c in app.get_system_commands(app.screen) if "rank" in c.title.lower()]
        await pilot.press("R")
        assert not isinstance(app.screen, RanksScreen)


async def test_the_ranks_view_shows_a_lane_per_rank_and_the_table() -> None:
    app = live_app(ranked_program(diverge_rank=1))
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        app.select_run(rank_run_id(1))
        await pilot.press("R")
        await settle(pilot)
        assert isinstance(app.screen, RanksScreen)
        lines = shown(app.screen.query_one("#ranks-lanes", Static)).splitlines()
        assert [line.split("▕")[0].strip(" ⚠") for line in lines if "▕" in line] == [
            "rank 0",
            "▶ rank 1",  # the rank the panes show
        ]
        rank1 = next(line for line in lines if "rank 1" in line)
        assert "⚠" in rank1  # the diverging rank
        assert "0/1" in lines[lines.index(rank1) + 1]  # its recompile, labelled
        assert any(line.strip().startswith("0 s") and "40.00 s" in line for line in lines)
        table = app.screen.query_one("#ranks-table", SortedTable)
        rows = [[plain(c) for c in r] for r in table.shown]
        assert [(r[0], r[2]) for r in rows] == [("0", "100"), ("1", "101")]  # rank, pid
        # Both ranks' blocked time is n/a, the why under the table.
        shown_rows = fr.rank_rows(app.session, fdiv.divergences(app.session))
        assert [r[-1] for r in rows] == ["n/a", "n/a"]
        notes = shown(app.screen.query_one("#ranks-notes", Static))
        flat = " ".join(notes.split())
        assert all(" ".join(n.split()) in flat for n in fr.blocked_notes(shown_rows))
        divergences = shown(app.screen.query_one("#ranks-divergences", Static))
        assert "1 divergence among 2 ranks" in divergences
        # The selector steps here too, and the view follows.
        await pilot.press("left_square_bracket")
        await settle(pilot)
        lanes = shown(app.screen.query_one("#ranks-lanes", Static))
        assert "▶ rank 0" in lanes
        await pilot.press("escape")
        assert not isinstance(app.screen, RanksScreen)


async def test_the_banner_comes_with_an_alarm_live() -> None:
    app = live_app(ranked_program()[:-3])  # both ranks compiled 0/0 and run on
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        banner = app.query_one("#divergence", Static)
        assert not banner.display
        # Rank 1 alone recompiles, and rank 0 ends without it (a rank that may
        # still compile is not judged yet: the figure's rule, not the banner's).
        for e in rank_compile_phases(1, "0/1", 1020.0, reason="tensor 'x' size mismatch"):
            app.emit(e)
        app.emit(ev.RunFinished(run_id=rank_run_id(0), status="ok", wall_s=29.0, t=1030.0))
        await settle(pilot)
        assert banner.display
        line = shown(banner, 400)
        assert line.startswith("⚠ RANKS DIVERGE:") and "rank 1" in line
        assert "see Ranks view (R)" in line and line.count("\n") == 1


async def test_a_note_is_muted_in_the_ranks_view_never_the_banner(monkeypatch) -> None:
    note = fdiv.Divergence(
        check="cache",
        rank=1,
        alarm=False,
        headline="shared cache: hit pattern may differ harmlessly",
        evidence=["rank 0: miss miss", "rank 1: miss hit"],
    )
    monkeypatch.setattr(fdiv, "divergences", lambda session, now=None: [note])
    app = live_app(ranked_program())
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        assert not app.query_one("#divergence", Static).display
        await pilot.press("R")
        await settle(pilot)
        body = app.screen.query_one("#ranks-divergences", Static)
        assert "· shared cache: hit pattern may differ harmlessly" in shown(body)
        assert isinstance(body.content, Text)
        styles = {str(s.style) for s in body.content.spans}
        assert styles and not any("red" in style for style in styles)  # not an alarm's
        assert "divergence checks: 1 note among 2 ranks" in shown(body)


async def test_a_replay_of_the_saved_session_shows_the_same(tmp_path: Path) -> None:
    saved = save_report(Session.from_events(ranked_program(diverge_rank=1)), tmp_path / "out")
    app = DlcprofApp(session=load_session(saved), replay=True, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await settle(pilot)
        banner = app.query_one("#divergence", Static)
        assert banner.display and "rank 1" in shown(banner, 400)
        await pilot.press("R")
        await settle(pilot)
        lanes = shown(app.screen.query_one("#ranks-lanes", Static))
        assert "rank 0" in lanes and "rank 1" in lanes and "0/1" in lanes


async def test_the_help_lists_the_rank_keys_only_where_there_are_ranks() -> None:
    """Issue 40, 7: ? listed R and [ / ] in a session without ranks."""
    from helpers.recorded import load_fixture

    from dlcprof.tui.screens import HelpScreen

    for session, ranks in (
        (Session.from_events(ranked_program(diverge_rank=1)), True),
        (Session.from_events(load_fixture("graph_breaks")), False),
    ):
        app = DlcprofApp(session=session, replay=True, deterministic=True)
        async with app.run_test(size=SIZE) as pilot:
            assert app.has_ranks is ranks
            await pilot.press("question_mark")
            await pilot.pause()
            assert isinstance(app.screen, HelpScreen)
            help_text = shown(app.screen.query_one("#help-text", Static))
        keyed = [line.split()[0] for line in help_text.splitlines() if line[:1] not in " "]
        assert ("R" in keyed) is ranks and ("[" in keyed) is ranks, keyed
