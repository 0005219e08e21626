"""Compile cost by the user's code, advice, and `dlcprof try`: real compiles on
this CPU (issue 23). Each end-to-end test makes its runs count: one session
per bundled workload, the advice read from it, and where the change can be
applied, the trial measured beside its prediction."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from helpers.paths import FIXTURES

from dlcprof import events as ev
from dlcprof.figures import advice as fa
from dlcprof.figures import compile_cost as fc
from dlcprof.report import load_session
from dlcprof.session import Session
from dlcprof.settings import RunSettings, SettingsError, parse_mark_dynamic, repro_command
from dlcprof.worker.probes.compile_cost import _module_path, node_location

# Every graph compiled in full on both sides of a trial (the FX and AOTAutograd
# graph caches off), while the kernel builds and the one-time probes stay cached:
# the same cache state for the advised run and the trial, whatever ran before.
GRAPH_CACHES_OFF = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


def _dlcprof(*argv: str, caches_off: bool = False) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, **(GRAPH_CACHES_OFF if caches_off else {}), "COLUMNS": "200"}
    return subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        env=env,
    )


# --- our own logic, no torch ------------------------------------------------------------


def test_new_options_validate_in_one_line_and_repeat_in_the_repro_command():
    assert parse_mark_dynamic("x:1") == ("x", 1) and parse_mark_dynamic("0:-1") == ("0", -1)
    for bad in ("x", "x:y", ":1", "x-y:1"):
        with pytest.raises(SettingsError) as e:
            RunSettings(target="t", mark_dynamic=bad).validate()
        assert str(e.value).startswith("invalid --mark-dynamic") and "\n" not in str(e.value)
    with pytest.raises(SettingsError):
        RunSettings(target="t", regional="my.Block").validate()
    s = RunSettings(target="t", regional="Block", mark_dynamic="x:1", cache_artifacts="a b.bin")
    assert "--regional Block --mark-dynamic x:1 --cache-artifacts 'a b.bin'" in repro_command(s)


def test_module_paths_and_locations_read_as_the_user_writes_them():
    assert _module_path("L['self'].blocks[0].attn") == "blocks.0.attn"
    assert _module_path("L['self']._modules['blocks']._modules['0']") == "blocks.0"
    trace = (
        'File "/a/torch/nn/x.py", line 9, in f\n'
        '  File "/home/u/model.py", line 27, in forward\n    y = self.qkv(x)'
    )
    assert node_location({"stack_trace": trace}) == "/home/u/model.py:27"


def test_size_mismatch_names_the_input_and_dim():
    assert fa.size_mismatch("tensor 'x' size mismatch at index 1. expected 4, actual 6") == ("x", 1)
    assert fa.size_mismatch("L['x'] is not a tensor") is None


# --- real compiles -------------------------------------------------------------------------


@pytest.mark.slow
def test_stacked_blocks_regional_advice_is_tried_and_measured(tmp_path):
    """stacked-blocks: the costs add up, the regional advice predicts a saving,
    `try` measures a saving, and both land in the JSON with the prediction's error."""
    path = tmp_path / "s.json"
    common = ("--size", "small", "--reps", "3", "--iters", "5", "--no-hotspots", "--quiet")
    # On a new TMPDIR the first compile also builds Inductor's precompiled header,
    # one per set of compiler flags, which the kernels of a model decide (whether
    # they vectorize): here, for the advised model and its trial, so that both
    # compile alike whatever ran before.
    for warm_options in ((), ("--regional", "Block")):
        warm = _dlcprof(
            "run", "stacked-blocks", "--size", "small", "--no-benchmark", "--quiet", *warm_options
        )
        assert warm.returncode == 0, warm.stderr
    p = _dlcprof("run", "stacked-blocks", *common, "--json", str(path), caches_off=True)
    assert p.returncode == 0, p.stderr
    assert "Compile cost by your code" in p.stdout and "Block.forward" in p.stdout
    session = load_session(path)
    run = session.latest_run
    cost = fc.compile_cost(run)
    assert cost is not None and cost.dynamo_s and cost.lowering_s
    # The rows add up to torch's own totals.
    dynamo = cost.traced_s + cost.guards_s
    assert abs(dynamo / cost.dynamo_s - 1) <= 0.10, (cost.traced_s, cost.guards_s, cost.dynamo_s)
    assert abs(cost.lowered_s / cost.lowering_s - 1) <= 0.10, (cost.lowered_s, cost.lowering_s)
    # The probe's own cost is inside the observer budget (5% of the compile).
    assert cost.own_s <= 0.05 * run.compile_wall_s
    block = next(f for f in cost.functions if f.function == "Block.forward")
    assert block.traced == 4 and block.location.endswith("stacked_blocks.py:25")

    advice = fa.advise(session, run)
    n, item = next((i, a) for i, a in enumerate(advice.items, 1) if a.rule == "regional")
    assert item.options == {"regional": "Block"} and "Block" in item.snippet
    assert item.predicted is not None and item.predicted.saving_s > 0
    report = json.loads(path.read_text())
    assert report["advice"]["items"][n - 1]["rule"] == "regional"

    t = _dlcprof("try", str(path), str(n), "--quiet", caches_off=True)
    assert t.returncode == 0, t.stderr
    assert "predicted -" in t.stdout and "measured" in t.stdout
    tried = load_session(path).tried
    assert len(tried) == 1 and tried[0].options == {"regional": "Block"}
    # Watched alike: no py-spy on the trial when none watched the advised run.
    trial = load_session(path).runs[tried[0].run_id]
    assert trial.settings.regional == "Block" and "py-spy" not in trial.monitors
    measured = tried[0].measured_before_s - tried[0].measured_after_s
    predicted = tried[0].predicted_before_s - tried[0].predicted_after_s
    assert tried[0].cache_before == tried[0].cache_after, tried[0]
    assert measured > 0, tried[0]
    # How close the prediction came is a speed figure, measured side by side in
    # benchmarks/ (RESULTS.md §8), not a timed test: here, that it is recorded.
    report = json.loads(path.read_text())
    error = report["advice"]["tried"][0]["prediction_error"]
    assert error == pytest.approx(abs(predicted - measured) / measured)


@pytest.mark.slow
def test_variable_length_static_sweep_gets_mark_dynamic_on_x_dim_1(tmp_path):
    path = tmp_path / "v.json"
    p = _dlcprof(
        "run",
        "variable-length",
        "--size",
        "small",
        "--dynamic",
        "false",
        "--sweep",
        "--no-benchmark",
        "--reps",
        "2",
        "--iters",
        "3",
        "--no-hotspots",
        "--quiet",
        "--json",
        str(path),
        caches_off=True,
    )
    assert p.returncode == 0, p.stderr
    session = load_session(path)
    advice = fa.advise(session, session.latest_run)
    n, item = next((i, a) for i, a in enumerate(advice.items, 1) if a.rule == "mark-dynamic")
    assert item.options == {"mark_dynamic": "x:1"} and "mark_dynamic(x, 1)" in item.snippet
    t = _dlcprof("try", str(path), str(n), "--quiet", caches_off=True)
    assert t.returncode == 0, t.stderr
    session = load_session(path)
    (tried,) = session.tried
    assert tried.measured_before_s > 0 and tried.measured_after_s > 0, tried
    # The change itself, whatever the machine's load: one compile serves every size.
    assert session.runs[tried.advised_run].sweep_done.compiles == 3
    assert session.runs[tried.run_id].sweep_done.compiles == 1


def _recorded(name: str):  # type: ignore[no-untyped-def]
    """A session recorded from a real run (tests/fixtures)."""
    lines = (FIXTURES / f"{name}.jsonl").read_text().splitlines()
    session = Session.from_events([ev.decode(line) for line in lines if line.strip()])
    return session, session.latest_run


def test_recorded_graph_breaks_get_one_item_each_with_its_cost():
    session, run = _recorded("graph_breaks")
    breaks = [a for a in fa.advise(session, run).items if a.rule == "graph-break"]
    assert len(breaks) == 2
    assert [a.where.rsplit(":", 1)[1] for a in breaks] == ["11", "17"]
    assert "Data-dependent branching" in breaks[0].title and "item()" in breaks[1].title
    for a in breaks:
        assert a.predicted is not None and 0 < a.predicted.saving_s < a.predicted.before_s
        assert not a.options and a.try_why  # a change to the user's code: not tried for them


def test_recorded_static_sweep_gets_mark_dynamic_naming_input_and_dim():
    session, run = _recorded("variable_length_static")
    (item,) = [a for a in fa.advise(session, run).items if a.rule == "mark-dynamic"]
    assert item.options == {"mark_dynamic": "x:1"} and item.title == "mark x's dim 1 dynamic"
    assert item.predicted is not None and item.predicted.saving_s > 0
    # Already dynamic: no such advice.
    session, run = _recorded("variable_length_dynamic")
    assert not [a for a in fa.advise(session, run).items if a.rule == "mark-dynamic"]


def test_mark_dynamic_from_size_1_keeps_the_recompile_away_from_it():
    # The ResNet example's batch sweep 1, 2: torch specialized the size-1 dim though
    # it was marked dynamic, and recompiled at 2 (benchmarks/RESULTS.md §8).
    import dataclasses

    session, run = _recorded("variable_length_static")
    first, second, *rest = run.sweep
    reason = "0/0: tensor 'x' size mismatch at index 1. expected 1, actual 64"
    run.sweep[:] = [first, dataclasses.replace(second, reason=reason), *rest]
    (item,) = [a for a in fa.advise(session, run).items if a.rule == "mark-dynamic"]
    assert item.predicted is not None
    before = sum(st.transition_s for st in run.sweep)
    assert item.predicted.after_s == pytest.approx(first.transition_s + 2 * second.transition_s)
    assert item.predicted.before_s == pytest.approx(before)
    assert "away from a size of 0 or 1" in item.predicted.how


def test_advice_predicted_to_cost_more_is_hidden_as_a_loss_not_as_noise():
    import dataclasses

    session, run = _recorded("variable_length_static")
    (item,) = [a for a in fa.advise(session, run).items if a.rule == "mark-dynamic"]
    assert item.predicted is not None
    worse = dataclasses.replace(
        item, predicted=dataclasses.replace(item.predicted, after_s=item.predicted.before_s + 69.73)
    )
    hidden: list[str] = []
    assert fa._above_noise([worse], 0.098, hidden) == []
    assert hidden == ["mark x's dim 1 dynamic: predicted to cost 69.73 s more"]


@pytest.mark.slow
def test_pointwise_chain_gets_nothing_to_change(tmp_path):
    path = tmp_path / "p.json"
    p = _dlcprof(
        "run",
        "pointwise-chain",
        "--reps",
        "3",
        "--iters",
        "5",
        "--no-hotspots",
        "--quiet",
        "--json",
        str(path),
    )
    assert p.returncode == 0, p.stderr
    session = load_session(path)
    advice = fa.advise(session, session.latest_run)
    assert advice.items == [] and advice.nothing and advice.nothing.startswith("nothing to change")
    assert "nothing to change" in p.stdout
    assert json.loads(path.read_text())["advice"]["nothing"] == advice.nothing


def test_compile_cost_probe_degrades_when_a_method_is_missing():
    import types

    from dlcprof import events as ev
    from dlcprof.worker.emit import ListEmitter
    from dlcprof.worker.probes import ProbeNotes
    from dlcprof.worker.probes.compile_cost import CompileCostProbe

    sink = ListEmitter()
    probe = CompileCostProbe(sink, "r", ProbeNotes(sink, "r"), lambda: "")
    module = types.ModuleType("torch._inductor.graph")
    probe._patch(module, "GraphLowering", "run_node", probe._wrap_node)
    (note,) = [e for e in sink.events if isinstance(e, ev.ProbeUnavailable)]
    assert note.probe == "compile_cost" and "GraphLowering.run_node not found" in note.reason
    probe.flush()  # nothing measured: nothing emitted, nothing raised
    assert not [e for e in sink.events if isinstance(e, ev.CompileCostMeasured)]


async def test_tui_advice_screen_shows_a_recorded_runs_advice():
    from helpers.tui import text as rendered

    from dlcprof.tui.app import DlcprofApp
    from dlcprof.tui.widgets.advice import AdviceScreen

    session, run = _recorded("variable_length_static")
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


@pytest.mark.slow
def _with_lowering_cost(session: Session, run_id: str) -> None:
    """Two blocks' lowering as the probe reports it (stacks outermost first)."""

    def mod(path: str, cls: str, stack: list[tuple[str, str]], nodes: int, s: float):  # type: ignore[no-untyped-def]
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
    from helpers.tui import text as rendered

    from dlcprof.tui.app import DlcprofApp
    from dlcprof.tui.widgets.advice import AdviceScreen

    session, run = _recorded("variable_length_static")
    _with_lowering_cost(session, run.run_id)
    root = fc.module_tree(fc.compile_cost(run))
    blocks = root.sorted_children()
    assert [b.path for b in blocks] == ["blocks.1", "blocks.0"]  # largest first, children summed
    assert blocks[0].total_s == 2.125 and blocks[1].total_s == 1.25 and blocks[1].self_s == 0
    assert root.total_s == 3.875 == fc.compile_cost(run).lowered_s
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


def test_cache_artifacts_are_saved_then_loaded_by_the_next_run(tmp_path):
    artifacts = tmp_path / "mega.bin"
    said = []
    for i in range(2):
        path = tmp_path / f"c{i}.json"
        p = _dlcprof(
            "run",
            "pointwise-chain",
            "--size",
            "small",
            "--no-benchmark",
            "--no-hotspots",
            "--quiet",
            "--cache-artifacts",
            str(artifacts),
            "--json",
            str(path),
        )
        assert p.returncode == 0, p.stderr
        run = load_session(path).latest_run
        said.append([lg.message for lg in run.logs if "cache artifacts" in lg.message])
        assert artifacts.is_file() and artifacts.stat().st_size > 0
    assert "does not exist yet" in said[0][0] and "saved to" in said[0][1]
    assert "loaded from" in said[1][0]
    assert run.settings.cache_artifacts == str(artifacts)


def test_builds_at_once_counts_overlapping_spans():
    assert fa._most_at_once([(0, 2), (1, 3), (2.5, 4), (5, 6)]) == 2
    assert fa._most_at_once([]) == 0


def test_a_trial_against_a_run_that_built_the_precompiled_header_is_not_comparable():
    """The advised run's first compile also built Inductor's precompiled header
    (once per cache): its compile seconds hold a cost the trial does not pay."""
    t = ev.AdviceTried(
        run_id="t",
        advised_run="a",
        rule="regional",
        title="compile each Block on its own",
        options={"regional": "Block"},
        what="compile",
        predicted_before_s=10.0,
        predicted_after_s=6.0,
        measured_before_s=30.0,
        measured_after_s=6.0,
        steady_before_ms=None,
        steady_after_ms=None,
        steady_spread_ms=None,
        cache_before="off+header",
        cache_after="off",
    )
    words = fa.tried_text(t)
    assert "not comparable: graph cache off + precompiled header (built once) before" in words
