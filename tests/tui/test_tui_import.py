"""The Ranks view of a job ``dlcprof import`` read (a real 2-rank gloo job's
TORCH_TRACE logs, widened past the ranks whose events a session keeps): the
groups, outliers first, and a lane per group, never one per rank."""

from __future__ import annotations

from pathlib import Path

from helpers.torch_trace import rank_logs, trace_logs, widen
from helpers.tui import SIZE, shown
from textual.widgets import Static

from dlcprof.trace_import.job import FULL_RANKS, import_trace
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.screens import RanksScreen


async def test_the_ranks_view_of_an_imported_job_shows_its_groups(tmp_path: Path) -> None:
    ranks = FULL_RANKS + 4
    logs = rank_logs(trace_logs("ddp_odd_batch", tmp_path / "logs"))
    session = import_trace([str(widen(logs, tmp_path / "wide", ranks, {7: 1}))], workers=1)
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        await pilot.pause(0.3)
        assert isinstance(app.screen, RanksScreen)
        title = shown(app.screen.query_one("#ranks-title", Static))
        assert f"{ranks} ranks" in title and "the first rank of each group, 2" in title
        groups = shown(app.screen.query_one("#ranks-groups", Static), 200)
        assert (
            f"{ranks - 1} ranks alike (ranks 0–6, 8–{ranks - 1}); rank 7 alone recompiled" in groups
        )
        assert groups.index("recompiled 0/1, 4/1") < groups.index("the largest group")
        lanes = shown(app.screen.query_one("#ranks-lanes", Static), 200)
        assert "rank 0" in lanes and "rank 7" in lanes and "rank 1 " not in lanes
