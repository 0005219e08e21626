"""Snapshots of the main screens, replayed from sessions recorded from real runs.

Deterministic: replay mode (no worker, no wall clock), fixed terminal size,
DataTable columns of fixed width. Update with ``pytest --snapshot-update``
after checking the new SVGs by eye.
"""

from __future__ import annotations

from helpers.recorded import load_fixture, pyspy_hot_frames
from helpers.tui import held_notes, painted

from dlcprof import events as ev
from dlcprof.session import Session
from dlcprof.tui.app import DlcprofApp

# One session holding four real runs: fusion, graph breaks, and the two sweeps.
RECORDED = ["pointwise_chain", "graph_breaks", "variable_length_static", "variable_length_dynamic"]
SIZE = (160, 48)


def recorded_session(names: list[str] = RECORDED) -> Session:
    events: list[ev.Event] = []
    for name in names:
        events += load_fixture(name)
    return Session.from_events(events)


def replay_app(names: list[str] = RECORDED) -> DlcprofApp:
    app = DlcprofApp(session=recorded_session(names), replay=True, deterministic=True)
    return held_notes(app)


def run_of(app: DlcprofApp, workload: str, dynamic: str | None = None) -> str:
    for run in app.session.runs.values():
        if run.workload == workload and dynamic in (None, getattr(run.settings, "dynamic", None)):
            return run.run_id
    raise AssertionError(f"no {workload} run in the recorded session")


def showing(workload: str, tab: str = "recompiles", dynamic: str | None = None, keys=()):
    async def run_before(pilot) -> None:
        app = pilot.app
        app.select_run(run_of(app, workload, dynamic))
        app.show_tab(tab)
        await painted(pilot)  # the panes repaint on the app's tick
        for key in keys:
            await pilot.press(key)
        await painted(pilot)

    return run_before


def test_main_screen_fusion_run(snap_compare) -> None:
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=showing("pointwise-chain"))


def test_kernel_source_screen(snap_compare) -> None:
    before = showing("pointwise-chain", keys=["enter"])
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=before)


def test_recompiles_static_vs_dynamic(snap_compare) -> None:
    before = showing("variable-length", dynamic="false")
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=before)


def test_log_with_graph_breaks(snap_compare) -> None:
    before = showing("graph-breaks", tab="log")
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=before)


def test_device_and_hotspots_without_samples(snap_compare) -> None:
    assert snap_compare(
        replay_app(), terminal_size=SIZE, run_before=showing("graph-breaks", "device")
    )


def test_modes_side_by_side_with_autotuning(snap_compare) -> None:
    """Every mode of gelu-mlp with freezing (key a), max-autotune selected."""

    async def before(pilot) -> None:
        app = pilot.app
        modes = [r.run_id for r in app.session.runs.values()]
        app.select_run(modes[2])
        app.show_tab("modes")
        await pilot.pause()

    app = replay_app(["gelu_mlp_modes"])
    assert snap_compare(app, terminal_size=(160, 64), run_before=before)


def test_help_screen(snap_compare) -> None:
    before = showing("pointwise-chain", keys=["question_mark"])
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=before)


def test_live_screen_before_any_run(snap_compare) -> None:
    app = DlcprofApp(start_standby=False, deterministic=True)
    assert snap_compare(app, terminal_size=SIZE)


def test_benchmark_with_the_allocator_held_steady(snap_compare) -> None:
    # A default-size pointwise-chain run: both speedups, the page faults, the verdict.
    events = load_fixture("pointwise_chain_allocator")
    app = DlcprofApp(session=Session.from_events(events), replay=True, deterministic=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=showing("pointwise-chain"))


def test_hotspots_of_the_compiling_thread(snap_compare, tmp_path) -> None:
    """A run as LiveRun records it: monitors with their cost, the timed window
    quiet, and a real py-spy profile of a cold compile as its hot frames."""
    session = recorded_session()
    run = next(r for r in session.runs.values() if r.workload == "pointwise-chain")
    rid, t = run.run_id, run.started_t or 0.0
    for e in [
        ev.MonitorStatus(
            "nvml", False, "no NVIDIA GPU (NVML not found): showing CPU", rid, how="4 Hz", t=t
        ),
        ev.MonitorStatus(
            "py-spy",
            True,
            "py-spy sampling pid 4242 at 50 Hz (idle incl.)",
            rid,
            how="50 Hz, non-blocking",
            t=t,
        ),
        ev.MonitorCostMeasured("device", cpu_s=0.05, active_s=10.0, run_id=rid, t=t),
        ev.MonitorCostMeasured("py-spy", cpu_s=0.7, active_s=10.0, run_id=rid, t=t),
        ev.TimingEnded(run_id=rid, what="benchmark", start_t=t, quiet=True, t=t),
        pyspy_hot_frames(rid, tmp_path),
    ]:
        session.apply(e)
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    assert snap_compare(app, terminal_size=SIZE, run_before=showing("pointwise-chain", "hotspots"))


def test_paper_screen(snap_compare) -> None:
    # A session as `dlcprof paper` makes one, from recorded runs: the findings
    # beside the paper's, then each workload.
    from helpers.paper import paper_events

    app = DlcprofApp(session=Session.from_events(paper_events()), replay=True, deterministic=True)
    assert snap_compare(app, terminal_size=SIZE, press=["P"])


def test_ranks_view_with_a_divergence(snap_compare) -> None:
    # A torchrun job of two ranks (hand-built events) where rank 1 alone
    # recompiled: the banner's divergence in full, a lane per rank, the table.
    from helpers.program import ranked_program

    session = Session.from_events(ranked_program(diverge_rank=1))
    app = DlcprofApp(session=session, replay=True, deterministic=True)
    keys = ["right_square_bracket", "right_square_bracket", "R"]  # rank 1, then the view
    assert snap_compare(app, terminal_size=SIZE, press=keys)


def test_kernels_sorted_by_kernel_name(snap_compare) -> None:
    """o twice on the Kernels table: sorted by the kernel column, marked ▼."""
    before = showing("variable-length", dynamic="false", keys=["3", "o", "o"])
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=before)


def test_kernels_filtered(snap_compare) -> None:
    """/ addmm on the Kernels table: "6 of 12" in its title, the filter kept."""
    keys = ["3", "slash", *"addmm", "enter"]
    before = showing("variable-length", dynamic="false", keys=keys)
    assert snap_compare(replay_app(), terminal_size=SIZE, run_before=before)


def test_light_theme(snap_compare) -> None:
    """--theme textual-light: the stage colours, the log's alarms, the accent frame."""
    app = DlcprofApp(
        session=recorded_session(), replay=True, deterministic=True, theme="textual-light"
    )
    before = showing("graph-breaks", tab="log", keys=["3"])
    assert snap_compare(app, terminal_size=SIZE, run_before=before)
