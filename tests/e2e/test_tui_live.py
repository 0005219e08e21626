"""The TUI driving a REAL compile through the worker, end to end (slow).

Tiny workload (pointwise-chain, size small), the shared Inductor cache of
conftest. Checks the flow a user sees, and measures key latency while the
worker compiles.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers.tui import SIZE, wait_for
from textual.widgets import DataTable

from dlcprof.settings import RunSettings
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.screens import KernelSourceScreen


async def test_real_compile_end_to_end(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # the saved report lands here
    # A cold compile (seconds, not the shared cache's ~0.1 s hit): the keys below
    # are pressed while it lasts on any machine and any torch.
    monkeypatch.setenv("TORCHINDUCTOR_FORCE_DISABLE_CACHES", "1")
    settings = RunSettings(target="pointwise-chain", size="small", reps=3, iters=5)
    app = DlcprofApp(target="pointwise-chain", settings=settings, deterministic=True)
    handled: list[bool] = []  # per key: was the worker still compiling when it was handled?
    cycle = app.action_cycle

    def timed_cycle(name: str) -> None:
        handled.append(app.worker_state()[0] == "compiling")
        cycle(name)

    monkeypatch.setattr(app, "action_cycle", timed_cycle)
    async with app.run_test(size=SIZE) as pilot:
        # The standby worker is spawned on open, so r starts compiling at once.
        await wait_for(pilot, lambda: app.runs.standby_ready, timeout=30)
        await pilot.press("r")
        await wait_for(pilot, lambda: app.runs.live_run() is not None, timeout=60)

        # Keys are answered while the worker compiles (benchmarks/tui_latency.py
        # measures how fast).
        await wait_for(pilot, lambda: app.worker_state()[0] == "compiling", timeout=120)
        for _ in range(4):
            await pilot.press("d")
        assert handled and handled[0], handled  # answered mid-compile, not after it

        await wait_for(pilot, lambda: not app.runs.busy, timeout=300)
        run = app.session.latest_run
        assert run is not None and run.status == "ok", run and run.errors
        assert run.kernels and run.benchmark is not None and run.compiles
        table = app.query_one("#kernels-table", DataTable)
        assert table.row_count == len(run.kernels)
        table.focus()
        await pilot.press("enter")
        await pilot.pause()
        assert isinstance(app.screen, KernelSourceScreen)
        await pilot.press("escape")

        # A second run, cancelled mid-way: the first stays, the second keeps what it got.
        await pilot.press("m", "r")
        await wait_for(pilot, lambda: len(app.session.runs) == 2, timeout=60)
        await pilot.press("c")
        await wait_for(pilot, lambda: not app.runs.busy, timeout=60)
        first, second = app.session.runs.values()
        assert first.status == "ok" and second.status == "cancelled"
        assert app.is_running

        await pilot.press("ctrl+s")
        await wait_for(pilot, lambda: app.runs.last_saved, timeout=60)
        assert (app.runs.last_saved / "session.json").exists()
