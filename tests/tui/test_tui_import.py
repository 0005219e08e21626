"""The Ranks view of a job ``dlcprof import`` read (a real 2-rank gloo job's
TORCH_TRACE logs, widened past the ranks whose events a session keeps, to
1,024 ranks with each copy's own addresses): the groups, outliers first, the
lone rank named, and a lane per group, never one per rank; a job whose rank
log was cut short, and tlparse's own inputs, replayed."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from helpers.paths import FIXTURES
from helpers.torch_trace import apart_rank, rank_logs, trace_logs, widen
from helpers.tui import SIZE, painted, shown
from textual.widgets import Static

from dlcprof.cli.loading import load_report_or_trace
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
        await painted(pilot)
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


@pytest.mark.slow
async def test_the_ranks_view_of_1024_ranks_names_the_one_apart(rank_apart_import) -> None:
    """1,024 ranks of a real job, each with its own addresses, one of which never
    recompiled: the view names that rank, never the majority's, and says of how
    many it shows what."""
    _, session = rank_apart_import(1024)
    odd = apart_rank(1024)
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        await painted(pilot)
        assert isinstance(app.screen, RanksScreen)
        title = shown(app.screen.query_one("#ranks-title", Static))
        assert "1,024 ranks" in title and "the first rank of each group, 2 of 1,024" in title
        assert "panes show rank 0 of 1,024" in title or f"rank {odd} of 1,024" in title
        groups = " ".join(shown(app.screen.query_one("#ranks-groups", Static), 200).split())
        assert f"1,023 ranks alike (ranks 0–{odd - 1}, {odd + 1}–1023); rank {odd} alone" in groups
        found = " ".join(shown(app.screen.query_one("#ranks-divergences", Static), 200).split())
        assert "among 1,024 ranks (2 groups, each compared by its first rank)" in found
        assert f"rank {odd} did not compile 0/1," in found and "(the other 1,023 did)" in found
        assert "rank 0 recompiled" not in found and "rank 0 did not" not in found
        notes = shown(app.screen.query_one("#ranks-notes", Static), 200)
        assert "rows: 2 of 1,024 ranks, the first rank of each group" in notes
        lanes = shown(app.screen.query_one("#ranks-lanes", Static), 200)
        assert f"rank {odd}" in lanes and "rank 1 " not in lanes


def test_the_phases_pane_shows_each_compiles_cache_layers_and_why_it_missed(tmp_path: Path) -> None:
    from rich.console import Console

    from dlcprof.tui.view import View
    from dlcprof.tui.widgets.phases import PhaseTimeline

    session = import_trace([str(trace_logs("cache_key/setting", tmp_path))], workers=1)
    (run,) = session.runs.values()
    console = Console(width=220, record=True, file=io.StringIO())
    console.print(PhaseTimeline(View(session, run, None, replay=True)))
    out = console.export_text()
    assert "caches: AOTAutograd cache miss · FX graph cache miss · kernel builds: none" in out
    assert "why it missed: no entry for its key in the cache folder" in out


def test_the_device_and_recompiles_tabs_of_an_import_say_what_a_log_holds(
    tmp_path: Path,
) -> None:
    from rich.console import Console

    from dlcprof.tui.view import View
    from dlcprof.tui.widgets.device import DeviceCharts
    from dlcprof.tui.widgets.recompiles import RecompileReport

    session = import_trace([str(trace_logs("train", tmp_path))], workers=1)
    (run,) = session.runs.values()
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(DeviceCharts(View(session, run, None, replay=True)))
    assert console.export_text().strip() == "n/a (no device samples: a TORCH_TRACE log holds none)"
    # Its logs ran no shape sweep, and no key could run one: no static vs dynamic line.
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(RecompileReport(View(session, run, None, replay=True), "head"))
    assert run.recompiles and "static vs dynamic" not in console.export_text()


async def test_a_job_whose_rank_log_was_cut_short_opens_and_says_where_it_ends(
    tmp_path: Path,
) -> None:
    logs = rank_logs(trace_logs("ddp_odd_batch", tmp_path / "logs"))
    job = widen(logs, tmp_path / "job", 3, {1: 1})
    cut = job / "dedicated_log_torch_trace_rank_2_wide.log"
    data = cut.read_bytes()
    cut.write_bytes(data[: len(data) // 2])
    app = DlcprofApp(session=load_report_or_trace(job), replay=True, deterministic=True)
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        await pilot.press("R")
        await painted(pilot)
        assert isinstance(app.screen, RanksScreen)
        notes = shown(app.screen.query_one("#ranks-notes", Static), 200)
        assert "rank 2's log ends" in notes and "(killed, or still running)" in notes


REPLAYED = [
    "multi_rank_runtime",
    "multi_rank_logs",
    "export.log",
    "inductor_provenance_aot_log.txt",
]


@pytest.mark.parametrize("name", REPLAYED)
async def test_replay_of_tlparse_inputs_opens_every_screen(tmp_path: Path, name: str) -> None:
    app = DlcprofApp(
        session=load_report_or_trace(FIXTURES / "tlparse" / name), replay=True, deterministic=True
    )
    async with app.run_test(size=SIZE) as pilot:
        await pilot.pause()
        for key in ("R", "escape"):
            await pilot.press(key)
            await painted(pilot)
    assert app.return_code in (0, None)
