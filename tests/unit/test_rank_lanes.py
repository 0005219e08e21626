"""The Ranks view's geometry (figures/job/lanes.py), on hand-built ranks."""

from __future__ import annotations

import dataclasses

import pytest
from helpers.program import STAGE_S, rank_attached, rank_compile_phases, rank_run_id, ranked_program

from dlcprof import events as ev
from dlcprof.figures.job import lanes as rl
from dlcprof.session import Session


def test_one_lane_per_rank_on_the_programs_axis() -> None:
    lanes = rl.rank_lanes(Session.from_events(ranked_program(diverge_rank=1)))
    assert lanes is not None
    assert (lanes.start_t, lanes.end_t, lanes.live) == (1000.0, 1040.0, False)
    assert [(lane.rank, lane.run_id, lane.label) for lane in lanes.lanes] == [
        (0, rank_run_id(0), "rank 0"),
        (1, rank_run_id(1), "rank 1"),
    ]
    r0, r1 = lanes.lanes
    # Rank 0 compiled 0/0 from 1002 for 10 s; rank 1 a second later, then 0/1 at 1020.
    assert [(b.compile_id, b.start, b.end, b.wall_s) for b in r0.bars] == [
        ("0/0", pytest.approx(2 / 40), pytest.approx(12 / 40), 10.0)
    ]
    assert [b.compile_id for b in r1.bars] == ["0/0", "0/1"]
    assert r1.bars[0].start == pytest.approx(3 / 40)
    assert r1.bars[1].start == pytest.approx(20 / 40)
    # The process from its start (0.5 s before it attached) to its end at 1039.
    assert r0.life == (pytest.approx(0.5 / 40), pytest.approx(39 / 40))


def test_a_bars_stages_are_the_innermost_phase_at_each_instant() -> None:
    lanes = rl.rank_lanes(Session.from_events(ranked_program()))
    assert lanes is not None
    bar = lanes.lanes[0].bars[0]
    got = [(s.stage, round((s.end - s.start) * 40, 6)) for s in bar.segments]
    assert got == [
        ("Dynamo", STAGE_S["dynamo"]),
        ("AOTAutograd", STAGE_S["aot"]),
        ("Inductor", STAGE_S["inductor"]),
        ("C++/Triton", STAGE_S["build"]),
    ]
    # Back to back, inside the bar.
    assert bar.segments[0].start == bar.start and bar.segments[-1].end == pytest.approx(bar.end)


def test_cells_show_stages_where_width_allows() -> None:
    lanes = rl.rank_lanes(Session.from_events(ranked_program()))
    assert lanes is not None
    lane = lanes.lanes[0]
    wide = lane.cells(400)  # 10 cells a second: the bar is 100 cells
    assert len(wide) == 400
    assert wide[:5] == [None] * 5  # before the process started
    assert wide[10] == rl.ALIVE
    assert wide[20:40] == ["Dynamo"] * 20
    assert wide[40:50] == ["AOTAutograd"] * 10
    assert wide[50:80] == ["Inductor"] * 30
    assert wide[80:120] == ["C++/Triton"] * 40
    assert wide[120:390] == [rl.ALIVE] * 270  # alive to its end, a second before the program's
    assert wide[390:] == [None] * 10
    narrow = lane.cells(8)  # the bar is 3 cells: too narrow for its stages
    assert narrow == [rl.WHOLE] * 3 + [rl.ALIVE] * 5
    assert lane.cells(0) == []


def test_labels_and_axis_fit_their_width() -> None:
    lanes = rl.rank_lanes(Session.from_events(ranked_program(diverge_rank=1)))
    assert lanes is not None
    r1 = lanes.lanes[1]
    assert r1.labels(40) == "   0/0 10.00 s      0/1 10.00 s"  # 0/0 from cell 3, 0/1 from 20
    assert r1.labels(16) == " 0/0    0/1"  # room for the ids alone
    assert r1.labels(4) == "0/0"  # 0/1 has no room left
    assert lanes.axis(80).startswith("0 s") and lanes.axis(80).endswith("40.00 s")
    assert "20.00 s" in lanes.axis(80)
    assert lanes.axis(14) == "0 s    40.00 s"  # no room for the middle


def test_a_compile_in_progress_grows_to_now() -> None:
    events = [*ranked_program()[:3], *rank_compile_phases(0, "0/0", 1002.0)]
    events.append(
        ev.PhaseStarted(run_id=rank_run_id(1), compile_id=None, name="dynamo", thread=1, t=1005.0)
    )
    s = Session.from_events(events)
    lanes = rl.rank_lanes(s, now=1015.0)
    assert lanes is not None and lanes.live and lanes.end_t == 1015.0
    (bar,) = lanes.lanes[1].bars
    assert bar.running and bar.compile_id == "?" and bar.end == 1.0
    assert bar.wall_s == 10.0
    cells = lanes.lanes[1].cells(15)
    assert cells[-1] == rl.RUNNING and cells[5] == "Dynamo"
    # Without a clock (a replay, a test) the axis ends at the newest event.
    assert rl.rank_lanes(s).end_t == 1012.0


def test_no_ranks_no_lanes_and_the_shown_rank_in_words() -> None:
    s = Session.from_events(ranked_program())
    assert rl.shown_words(s, s.runs[rank_run_id(1)]) == "rank 1 of 2"
    plain = Session.from_events([dataclasses.replace(rank_attached(0), rank=None)])
    assert rl.rank_lanes(plain) is None
    assert rl.shown_words(plain, plain.latest_run) is None
