"""Every mode for real, on the CPU (slow): `dlcprof run --mode all` headless,
and the TUI's `a` with freezing on, each four real workers of gelu-mlp
(Linear -> GELU -> Linear, size small).

Without freezing, max-autotune tunes nothing on the CPU and says why; with it,
Inductor benchmarks a C++ GEMM template against MKL for each matmul. On the
CPU, reduce-overhead and max-autotune skip CUDA graphs: torch's reason shows.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest
from helpers.tui import painted, wait_for
from helpers.worker import clear_autotune_cache
from rich.console import Console
from textual.widgets import Static, TabbedContent

from dlcprof.figures import modes as fm
from dlcprof.report import load_session
from dlcprof.settings import MODES, RunSettings
from dlcprof.tui.app import DlcprofApp

# One worker of the suite runs both: torch rewrites its autotune cache (one
# file per machine, in the shared Inductor cache) whole, from what it read
# before it benchmarked, without a lock, so two runs tuning at once drop each
# other's timings (torch 2.11 tunes the headless run's addmm without freezing).
pytestmark = pytest.mark.xdist_group("test_modes")

# No py-spy: these runs are about the modes, not where the compile spends its time.
SMALL = ["--size", "small", "--iters", "3", "--reps", "3", "--no-hotspots"]


def flat(s: str) -> str:
    return " ".join(s.split())


@pytest.mark.slow
def test_mode_all_headless_runs_four_workers_into_one_table(tmp_path):
    out = tmp_path / "modes.json"
    p = subprocess.run(
        [
            sys.executable,
            "-m",
            "dlcprof.cli",
            "run",
            "gelu-mlp",
            "--mode",
            "all",
            *SMALL,
            "--json",
            str(out),
        ],
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "COLUMNS": "200"},
    )
    assert p.returncode == 0, p.stderr[-3000:]
    stdout = flat(p.stdout)
    assert "Modes side by side, gelu-mlp" in stdout
    # One table, the modes its columns, in order (the longest name is broken at a hyphen).
    header = next(ln for ln in p.stdout.splitlines() if "┃" in ln and "reduce-overhead" in ln)
    cols = [header.index(f" {m} ") for m in MODES[:3]]
    assert cols == sorted(cols) and "max-autotune-no-" in p.stdout
    # reduce-overhead (and max-autotune) skip CUDA graphs with torch's reason.
    assert "CUDA graphs: no: the graph runs on the CPU (torch:" in stdout

    session = load_session(out)
    runs = list(session.runs.values())
    assert [r.settings.mode for r in runs] == list(MODES)
    assert all(r.status == "ok" and r.benchmark is not None for r in runs)
    assert len({r.run_id for r in runs}) == 4 and len(session.worker_exits) == 4
    default, reduce, autotune, no_cg = runs
    (graph,) = reduce.cudagraphs
    assert not graph.graphed and graph.reason.startswith("skipping cudagraphs due to")
    # torch's own counter saw the skip (it moves on the CPU too).
    assert reduce.cudagraph_counts is not None and reduce.cudagraph_counts.skips >= 1
    assert not default.cudagraphs and default.cudagraph_counts is None
    # Without --freezing torch 2.13 on autotunes nothing on the CPU, and the run
    # says why; 2.11 benchmarks addmm's two choices: said as tuned.
    tuned = fm.autotune(autotune)
    why = None if autotune.autotuned else fm.CPU_NEEDS_FREEZING
    assert tuned.why_none == why and tuned.line in stdout
    assert fm.cudagraphs(no_cg).verdict == "off"
    # The JSON holds the four runs and the table, worded as printed.
    report = json.loads(out.read_text())
    (table,) = report["modes"]
    assert [row["mode"] for row in table["rows"]] == list(MODES)
    for row in table["rows"]:
        assert row["words"]["compile (autotune)"] in stdout
        assert row["words"]["steady"] in stdout


@pytest.mark.slow
async def test_tui_key_a_runs_every_mode_and_max_autotune_tunes_with_freezing():
    clear_autotune_cache()  # so max-autotune really benchmarks
    settings = RunSettings(target="gelu-mlp", size="small", reps=3, iters=3, hotspots=False)
    app = DlcprofApp(target="gelu-mlp", settings=settings, deterministic=True)
    async with app.run_test(size=(160, 60)) as pilot:
        await wait_for(pilot, lambda: app.runs.standby_ready, timeout=120)
        await pilot.press("f", "a")  # freezing on, then every mode
        await wait_for(
            pilot, lambda: len(app.session.runs) == 4 and not app.runs.busy, timeout=1200
        )
        runs = list(app.session.runs.values())
        assert [r.settings.mode for r in runs] == list(MODES)
        assert all(r.status == "ok" and r.settings.freezing for r in runs), [
            (r.status, r.errors) for r in runs
        ]
        assert app.query_one("#tabs", TabbedContent).active == "tab-modes"
        app.select_run(runs[2].run_id)
        await painted(pilot)
        body = app.query_one("#modes-body", Static)
        console = Console(width=150, record=True, file=open(os.devnull, "w"))  # noqa: SIM115
        console.print(body.content)
        shown = flat(console.export_text())

    # max-autotune with freezing: every matmul benchmarked, >= 2 choices, a winner, seconds.
    a = fm.autotune(runs[2])
    assert len(a.ops) == 2, a.line
    for op in a.ops:
        assert len(op.choices) >= 2 and op.winner is not None
        assert op.cached is False and op.event.benchmark_s and op.event.benchmark_s > 0
        assert {c.name for c in op.choices} >= {"_mkl_linear"}
    assert a.seconds and a.seconds > 0
    # Cross-checks: torch's compilation_metrics add up the same seconds, and
    # torch's own AUTOTUNE log (the worker's stderr) lists the same times.
    assert a.torch_seconds == pytest.approx(a.op_seconds, rel=0.05)
    stderr = "\n".join(lg.message for lg in runs[2].logs if lg.source == "stderr")
    for op in a.ops:
        for c in op.choices:
            assert re.search(rf"{re.escape(c.name)} {c.ms:.4f} ms", stderr), (c, stderr[-2000:])
    # The next mode reads what max-autotune measured from Inductor's autotune cache.
    assert fm.autotune(runs[3]).all_cached
    # The Modes tab: the table, this run's autotune line and its CUDA-graph reason.
    assert "Modes side by side, gelu-mlp" in shown
    assert a.line in shown and "fastest" in shown
    assert fm.cudagraphs(runs[2]).line in shown
    assert (
        fm.with_autotune(fm.mode_table(app.session, runs[2]).rows[2].compile_s, a.seconds) in shown
    )
