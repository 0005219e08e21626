"""The Advice screen (A) on recorded runs: the advice, and the compile cost of
lowering as a tree by module."""

from __future__ import annotations

from helpers.report import recorded_run
from helpers.tui import text as rendered

from dlcprof import events as ev
from dlcprof.figures import compile_cost as fc
from dlcprof.session import Session
from dlcprof.tui.app import DlcprofApp
from dlcprof.tui.widgets.advice import AdviceScreen


async def test_tui_advice_screen_shows_a_recorded_runs_advice():
    session, run = recorded_run("variable_length_static")
    app = DlcprofApp(session=session, replay=True, start_standby=False, deterministic=True)
    async with app.run_test(size=(160, 50)) as pilot:
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, AdviceScreen)
        shown = "\n".join(rendered(w) for w in app.screen.query("Static"))
        assert "mark x's dim 1 dynamic" in shown and "predicted" in shown
        await pilot.press("1")  # a replay has no worker: nothing starts
        await pilot.pause()
        assert app.runs.live is None
        await pilot.press("escape")
        assert not isinstance(app.screen, AdviceScreen)


def _with_lowering_cost(session: Session, run_id: str) -> None:
    """Two blocks' lowering as the probe reports it (stacks outermost first)."""

    def mod(path: str, cls: str, stack: list[tuple[str, str]], nodes: int, s: float):
        return {
            "module": path,
            "cls": cls,
            "stack": [["", "Net"], *stack],
            "location": "m.py:1",
            "nodes": nodes,
            "self_s": s,
        }

    b0, b1 = ("blocks.0", "Block"), ("blocks.1", "Block")
    session.apply(
        ev.CompileCostMeasured(
            run_id,
            "0/0",
            [],
            [
                mod("", "Net", [], 3, 0.5),
                mod("blocks.0.ln", "LayerNorm", [b0, ("blocks.0.ln", "LayerNorm")], 4, 1.0),
                mod("blocks.0.fc", "Linear", [b0, ("blocks.0.fc", "Linear")], 2, 0.25),
                mod("blocks.1", "Block", [b1], 1, 0.125),
                mod("blocks.1.fc", "Linear", [b1, ("blocks.1.fc", "Linear")], 2, 2.0),
            ],
        )
    )


async def test_tui_compile_cost_shows_lowering_as_a_tree_by_module():
    session, run = recorded_run("variable_length_static")
    _with_lowering_cost(session, run.run_id)
    cost = fc.compile_cost(run)
    assert cost is not None
    root = fc.module_tree(cost)
    blocks = root.sorted_children()
    assert [b.path for b in blocks] == ["blocks.1", "blocks.0"]  # largest first, children summed
    assert blocks[0].total_s == 2.125 and blocks[1].total_s == 1.25 and blocks[1].self_s == 0
    assert root.total_s == 3.875 == cost.lowered_s
    app = DlcprofApp(session=session, replay=True, start_standby=False, deterministic=True)
    async with app.run_test(size=(160, 80)) as pilot:
        await pilot.press("A")
        await pilot.pause()
        assert isinstance(app.screen, AdviceScreen)
        shown = "\n".join(rendered(w) for w in app.screen.query("Static"))
    lines = [line.strip() for line in shown.splitlines()]
    tree = lines[lines.index("(top level) (Net)  3.88 s (own 500 ms, 3 nodes)") :]
    assert tree[1:6] == [
        "├── blocks.1 (Block)  2.12 s (own 125 ms, 1 node)",
        "│   └── fc (Linear)  2.00 s (2 nodes)",
        "└── blocks.0 (Block)  1.25 s",
        "├── ln (LayerNorm)  1.00 s (4 nodes)",
        "└── fc (Linear)  250 ms (2 nodes)",
    ], tree
