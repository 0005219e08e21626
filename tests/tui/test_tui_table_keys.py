"""The keys of a top-like tool, on recorded real runs: o / O / a header click
sort the focused table (the column marked), / filters it ("3 of 12"), esc
clears; the Log filters too; p holds the panes still while events fold and
catches up at once; e opens the row's file:line in $EDITOR; the status bar
says when a run is over; the help lists the keys from the one actions table."""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

import pytest
from helpers.engine import ScriptedLiveRun
from helpers.recorded import load_fixture, pyspy_hot_frames
from helpers.scripted_program import ScriptedProgram, launcher
from helpers.tui import SIZE, make_app, painted, paste, record_notes, said, shown, text, wait_for
from textual.widgets import Input, Static, TabbedContent

from dlcprof import events as ev
from dlcprof.engine import Engine
from dlcprof.session import Session
from dlcprof.tui import actions
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.ordering import plain, sort_value
from dlcprof.tui.widgets.hotspots import HotspotsPane
from dlcprof.tui.widgets.log import LogPane
from dlcprof.tui.widgets.phases import PhasesPane
from dlcprof.tui.widgets.runs import RunSelector
from dlcprof.tui.widgets.sorted_table import SortedTable


def replay(*names: str) -> DlcprofApp:
    events: list[ev.Event] = []
    for name in names:
        events += load_fixture(name)
    app = DlcprofApp(session=Session.from_events(events), replay=True, deterministic=True)
    return record_notes(app)


def column(table: SortedTable, i: int) -> list[str]:
    return [plain(r[i]) for r in table.shown]


def header(table: SortedTable) -> list[str]:
    return [str(c.label) for c in table.ordered_columns]


async def test_o_and_a_header_click_sort_the_kernels_and_mark_the_column() -> None:
    app = replay("variable_length_static", "graph_breaks")
    async with app.run_test(size=SIZE) as pilot:
        app.select_run("72140322")  # variable-length: 12 real kernels, 4 recompiles
        await pilot.pause()
        table = app.query_one("#kernels-table", SortedTable)
        table.focus()
        given = column(table, 1)
        assert len(given) == 12 and header(table)[3] == "time"
        for _ in range(4):  # compile, kernel, kind, time
            await pilot.press("o")
        assert header(table)[3] == "time ▼" and "▼" not in "".join(header(table)[:3])
        names = column(table, 1)
        ops = [len(plain(r[9])) for r in table.shown]
        assert sorted(names) == sorted(given)
        # Unprofiled here: every time is n/a, so the rows keep the pane's order.
        assert names == given
        await pilot.press("O")
        assert header(table)[3] == "time ▲"
        # A click on the "kernel" header: sorted by it, z to a.
        x = table.ordered_columns[0].get_render_width(table) + 2
        await pilot.click("#kernels-table", offset=(x, 0))
        assert header(table)[1] == "kernel ▼" and header(table)[3] == "time"
        words = [sort_value(r.figures[1]) for r in table.shown]
        assert words == sorted(words, reverse=True) and str(words[0][1]).startswith("extern")
        await pilot.click("#kernels-table", offset=(x, 0))  # again: the other way
        assert header(table)[1] == "kernel ▲"
        assert [sort_value(r.figures[1]) for r in table.shown] == sorted(words) and ops
        # Kept per pane for the session: another run shown in that order, and back.
        before = column(table, 1)
        app.select_run("31a56ade")
        await pilot.pause()
        assert header(table)[1] == "kernel ▲"
        assert column(table, 1) == sorted(column(table, 1)) and len(table.shown) == 4
        app.select_run("72140322")
        await pilot.pause()
        assert column(table, 1) == before


async def test_o_sorts_profiled_kernel_times_largest_first() -> None:
    app = replay("graph_breaks")  # profiled: real per-kernel times
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.query_one("#kernels-table", SortedTable)
        table.focus()
        for _ in range(4):
            await pilot.press("o")
        times = [sort_value(r.figures[3]) for r in table.shown]
        assert all(kind == 0 for kind, _ in times), column(table, 3)
        assert times == sorted(times, reverse=True)
        await pilot.press("O")
        assert [sort_value(r.figures[3]) for r in table.shown] == sorted(times)


async def test_slash_filters_the_focused_table_and_esc_clears_it() -> None:
    app = replay("variable_length_static")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.query_one("#kernels-table", SortedTable)
        pane = app.query_one("#kernels")
        table.focus()
        await pilot.press("slash", *"ADDMM")  # a substring, any case
        assert column(table, 1) == ["extern_kernels.addmm"] * 6
        assert pane.border_title == "Kernels (6 of 12)"
        await pilot.press("enter")  # keeps the filter, back to the table
        assert app.focused is table and pane.border_title == "Kernels (6 of 12)"
        # A regex after re:, and a bad one says so in one line, every row shown.
        await pilot.press("slash")
        field = app.screen.query_one("#filter-input", Input)
        field.value = "re:(gelu|softmax).*norm"
        await pilot.pause()
        assert column(table, 2) == ["reduction"] * 6 and pane.border_title == "Kernels (6 of 12)"
        field.value = "re:(gelu"
        await pilot.pause()
        error = text(app.screen.query_one("#filter-error"))
        assert "not a regex" in error and len(error.strip().splitlines()) == 1
        assert len(table.shown) == 12
        await pilot.press("escape")  # in the filter line: clears it, back to the table
        assert app.focused is table and pane.border_title == "Kernels (12)"
        # Esc on the table clears a kept filter too.
        await pilot.press("slash", *"mean", "enter")
        assert pane.border_title.endswith("of 12)")
        await pilot.press("escape")
        assert pane.border_title == "Kernels (12)"


async def test_slash_on_a_pane_without_a_table_takes_the_typing_not_the_keys() -> None:
    """ "/compile" pasted on the Device pane: the filter holds "compile", and no
    letter reached the pane (no m: mode, no p: pause, no c: cancel)."""
    app = make_app()
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("6")
        device = app.focused
        assert device is not None and device.id == "device"
        # Queued behind / before it is handled: Textual routes a key when the
        # app dequeues it, so / must act before the next is routed.
        await paste(pilot, "slash", *"compile")
        field = app.screen.query_one("#filter-input", Input)
        await wait_for(pilot, lambda: field.value == "compile")
        assert app.focused is field
        assert "has none" in text(app.screen.query_one("#filter-label"))
        assert app.paused is None
        assert not [m for m in said(app) if m.startswith(("mode =", "nothing to cancel"))]
        await pilot.press("escape")
        assert app.focused is device
        # / typed into a text field is the field's: a regex with a slash in it;
        # a focus key too (not a pane's).
        await paste(pilot, "slash", *"re:a", "slash", *"b3")
        await wait_for(pilot, lambda: field.value == "re:a/b3")
        assert app.focused is field
        await pilot.press("escape")
        # A focus key pasted right before /: the filter is the new pane's.
        await paste(pilot, "3", "slash", *"compile")
        await wait_for(pilot, lambda: field.value == "compile")
        assert text(app.screen.query_one("#filter-label")).startswith("filter Kernels")
        assert app.paused is None


async def test_a_long_name_loses_its_middle_where_its_column_is_full() -> None:
    """The kernel column is 30 wide: a longer name keeps its start and its
    number around an ellipsis, a shorter one is whole, and / still finds the
    part that is not drawn."""
    app = replay("pointwise_chain", "graph_breaks")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        table = app.query_one("#kernels-table", SortedTable)
        width = table.ordered_columns[1].width
        drawn = {plain(r[1]): plain(table.get_row(r.key)[1]) for r in table.shown}
        long = [n for n in drawn if len(n) > width]
        assert long and any(len(n) <= width for n in drawn)
        for name, cell in drawn.items():
            if len(name) <= width:
                assert cell == name
            else:
                head, tail = cell.split("…")
                assert len(cell) == width and name.startswith(head) and name.endswith(tail)
        table.focus()
        hidden = long[0][len(long[0]) // 2 - 3 :][:6]  # a piece of the cut middle
        await pilot.press("slash", *hidden, "enter")
        assert [plain(r[1]) for r in table.shown] == [n for n in drawn if hidden in n]


async def test_the_fused_ops_take_the_width_the_pane_leaves_cut_at_an_op() -> None:
    """Where the kernels table fits its pane, the fused ops take the width the
    other columns leave (nothing runs off the pane's edge): the list whole
    where that is room enough, else cut after a whole op ("sin, cos, … (+9)"),
    drawn again as the terminal is resized."""
    app = replay("pointwise_chain")
    async with app.run_test(size=(240, 48)) as pilot:
        await pilot.pause()
        table = app.query_one("#kernels-table", SortedTable)
        wide = table.ordered_columns[-1].width
        whole = {r.key: plain(r[-1]) for r in table.shown}
        assert table.max_scroll_x == 0 and wide > 40
        assert {r.key: plain(table.get_row(r.key)[-1]) for r in table.shown} == whole
        await pilot.resize_terminal(190, 48)
        await pilot.pause()
        narrow = table.ordered_columns[-1].width
        assert narrow < wide and table.max_scroll_x == 0
        cut = {k: plain(table.get_row(k)[-1]) for k, ops in whole.items() if len(ops) > narrow}
        assert cut
        for key, cell in cut.items():
            m = re.fullmatch(r"((?:\w+, )+)… \(\+(\d+)\)", cell)
            assert m and len(cell) <= narrow, cell
            listed = m.group(1).rstrip(", ").split(", ")
            assert whole[key].split(", ")[: len(listed)] == listed
            assert len(listed) + int(m.group(2)) == len(whole[key].split(", "))


async def test_the_recompiles_sort_and_filter_the_same_way() -> None:
    app = replay("variable_length_static")
    async with app.run_test(size=SIZE) as pilot:
        app.show_tab("recompiles")
        await pilot.pause()
        table = app.query_one("#recompiles-table", SortedTable)
        table.focus()
        assert len(table.shown) == 4
        await pilot.press("o")  # the "#" column, largest first
        assert column(table, 0) == ["4", "3", "2", "1"]
        await pilot.press("slash")
        app.screen.query_one("#filter-input", Input).value = "re:^[12] "
        await pilot.press("enter")
        assert column(table, 0) == ["2", "1"]
        tabs = app.query_one("#tabs", TabbedContent)
        assert "Recompiles (2 of 4)" in str(tabs.get_tab("tab-recompiles").label)


async def test_the_log_filters_its_lines() -> None:
    app = replay("graph_breaks")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("5")
        await pilot.pause()
        log = app.query_one("#log", LogPane)
        assert app.focused is log
        await wait_for(pilot, lambda: not log.has_pending)
        total = len(log._drawn)
        await pilot.press("slash", *"Graph break", "enter")
        await pilot.pause()
        label = str(app.query_one("#tabs", TabbedContent).get_tab("tab-log").label)
        assert log._matching and log._matching < total
        assert label == f"Log ({log._matching} of {total})"
        lines = text(log)
        assert "Graph break" in lines and "run 31a56ade finished" not in lines
        await pilot.press("escape")
        await pilot.pause()
        assert str(app.query_one("#tabs", TabbedContent).get_tab("tab-log").label) == "Log"


class Held(ScriptedLiveRun):
    """A scripted run that waits to be released, so events arrive while paused."""

    instances: list = []
    hold = True


async def test_p_pauses_the_panes_while_events_fold_and_catches_up() -> None:
    app = make_app(engine=Held, target="pointwise-chain")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: Held.instances and Held.instances[-1]._thread.is_alive())
        await wait_for(
            pilot, lambda: app.selected_run_id and app.session.runs[app.selected_run_id].kernels
        )
        run_id = app.selected_run_id
        assert run_id is not None
        await pilot.press("p")
        table = app.query_one("#kernels-table", SortedTable)
        shown = len(table.shown)
        for i in range(3):
            app.emit(
                ev.KernelGenerated(
                    run_id=run_id,
                    compile_id="0/0",
                    name=f"paused_kernel_{i}",
                    kind="pointwise",
                    fused_ops=["aten.add"],
                    source="",
                    source_lines=[],
                    order=100 + i,
                )
            )
        run = app.session.runs[run_id or ""]
        await wait_for(pilot, lambda: any(k.name == "paused_kernel_2" for k in run.kernels))
        assert len(table.shown) == shown  # folded, not painted
        assert "paused: 3 events waiting" in text(app.query_one("#status"))
        await pilot.press("p")  # catches up at once, not at the next tick
        assert len(table.shown) == shown + 3
        assert "paused" not in text(app.query_one("#status"))
        app.runs.cancel()


async def test_the_status_bar_says_a_run_is_complete_and_the_panes_stay() -> None:
    app = make_app(engine=ScriptedLiveRun, target="pointwise-chain")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("r")
        await wait_for(pilot, lambda: app.session.latest_run and not app.runs.busy)
        await painted(pilot)
        status = app.query_one("#status", Static)
        assert "● run complete" in text(status)
        await pilot.press("3", "o")
        assert app.focused is app.query_one("#kernels-table")
        assert app.orders["kernels-table"].column == 0
        # Narrower than its words: the line ends in an ellipsis, not mid-word.
        whole = shown(status, width=1000).strip()
        await pilot.resize_terminal(60, SIZE[1])
        await painted(pilot)
        line = text(status).rstrip()
        assert len(whole) > 60 and line.endswith("…") and whole.startswith(line[:-1].strip())


@pytest.fixture
def stub_editor(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An "editor" that writes the arguments it was given, one a line."""
    said = tmp_path / "opened"
    script = tmp_path / "editor"
    script.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {said}\n')
    script.chmod(script.stat().st_mode | stat.S_IEXEC)
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.setenv("EDITOR", str(script))
    return said


async def test_e_opens_the_kernels_source_line_in_the_editor(stub_editor: Path) -> None:
    app = replay("graph_breaks")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        app.query_one("#kernels-table").focus()
        await pilot.press("e")
        await wait_for(pilot, stub_editor.exists)
        assert stub_editor.read_text().split("\n")[:2] == [
            "+7",
            "/home/user/dlcprof/workloads/graph_breaks.py",
        ]


async def test_e_without_an_editor_says_how_to_set_one(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("VISUAL", raising=False)
    monkeypatch.delenv("EDITOR", raising=False)
    app = replay("graph_breaks")
    said: list[str] = []
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        monkeypatch.setattr(app, "notify", lambda message, **kw: said.append(message))
        app.query_one("#kernels-table").focus()
        await pilot.press("e")
    assert said == [
        "e opens the row's file at its line: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)"
    ]
    assert "VISUAL" not in os.environ


async def test_the_help_lists_the_new_keys_from_the_actions_table() -> None:
    app = replay("graph_breaks")
    async with app.run_test(size=SIZE) as pilot:
        # Textual's theme switcher and screenshot stay in the palette beside ours.
        assert {"Theme", "Screenshot"} <= {c.title for c in app.get_system_commands(app.screen)}
        await pilot.press("question_mark")
        shown = " ".join(text(app.screen.query_one("#help-text")).split())
    for a in actions.ACTIONS:
        if a.name in ("sort", "filter", "edit"):
            assert a.help.split(";")[0][:40] in shown, a.help
    assert "o / O" in shown
    pause = next(a for a in actions.ACTIONS if a.name == "pause")
    assert not pause.replay  # nothing streams in a replay


async def test_the_runs_list_sorts_and_filters_the_same_way() -> None:
    app = replay("pointwise_chain", "graph_breaks", "variable_length_static")
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("9", "o")  # by run, z to a
        runs = app.query_one("#runs", RunSelector)
        names = [app.session.runs[str(o.id)].name for o in runs.options]
        assert names == ["variable-length", "pointwise-chain", "graph-breaks"]
        assert runs.border_title == "Runs (3) · by run ▼"
        await pilot.press("o", "o", "o")  # by status, mode, then dynamic
        await pilot.press("slash", *"false", "enter")
        assert [app.session.runs[str(o.id)].name for o in runs.options] == ["variable-length"]
        assert runs.border_title == "Runs (1 of 3) · by dynamic ▼"


async def test_hot_frames_sort_by_own_time_and_e_opens_a_frame(
    stub_editor: Path, tmp_path: Path
) -> None:
    session = Session.from_events(load_fixture("pointwise_chain"))
    run = session.latest_run
    assert run is not None
    session.apply(pyspy_hot_frames(run.run_id, tmp_path))  # a real py-spy profile
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.press("7")
        await pilot.pause()
        table = app.query_one("#hotspots-table", SortedTable)
        assert app.focused is app.query_one("#hotspots") and len(table.shown) > 5
        await pilot.press("o")  # the pane's table, by own, largest first
        own = [sort_value(r.figures[0]) for r in table.shown]
        assert own == sorted(own, reverse=True)
        await pilot.press("e")
        await wait_for(pilot, stub_editor.exists)
        line, path = stub_editor.read_text().split("\n")[:2]
        place = table.shown[0].place
        assert place is not None
        short, at = place
        # "subprocess.py", "torch/_inductor/codecache.py": the real file, from any folder.
        assert os.path.isabs(path) and os.path.isfile(path) and path.endswith(short)
        assert int(line.removeprefix("+")) == at


async def test_a_program_that_ended_says_so_and_its_panes_stay() -> None:
    program: type[ScriptedProgram] = type("Program", (ScriptedProgram,), {"instances": []})
    app = DlcprofApp(
        command=["python", "train.py"], engine=Engine(program=launcher(program)), deterministic=True
    )
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: program.instances and app.session.runs)
        program.instances[0].finish(0)
        await wait_for(pilot, lambda: app.session.program_exit is not None)
        await painted(pilot)
        assert "● program exited" in text(app.query_one("#status"))
        await pilot.press("3", "o")  # still browsable
        assert app.orders["kernels-table"].column == 0


async def test_v_and_t_unfold_the_phases_and_the_threads_and_say_so() -> None:
    """The two view keys that are not a table's: each flips its pane, and again back."""
    app = replay("graph_breaks")
    async with app.run_test(size=SIZE) as pilot:
        phases, hot = app.query_one(PhasesPane), app.query_one(HotspotsPane)
        shown = phases.show_all, hot.all_threads
        await pilot.press("v", "t")
        assert (phases.show_all, hot.all_threads) == (not shown[0], not shown[1])
        assert any(m.startswith("phases: ") for m in said(app)), said(app)
        assert any(m.startswith("hot frames: ") for m in said(app)), said(app)
        await pilot.press("v", "t")
        assert (phases.show_all, hot.all_threads) == shown
