"""Compile cost by the user's code, advice, and `dlcprof try`: real compiles on
this CPU (issue 23). Each end-to-end test makes its runs count: one session
per bundled workload, the advice read from it, and where the change can be
applied, the trial measured beside its prediction."""

from __future__ import annotations

from typing import Any

import pytest
from helpers.report import recorded_run

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures.advice import compile_rules as fcr
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.report import build_model, build_report
from dlcprof.settings import RunSettings, SettingsError, parse_mark_dynamic, repro_command
from dlcprof.worker.probes.compile_cost import _module_path, node_location

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
    # A wrapper's child (torchtitan's blocks under checkpoint_wrapper).
    wrapped = "L['self'].__dict__['_modules']['_checkpoint_wrapped_module']._modules['attention']"
    assert _module_path(wrapped) == "_checkpoint_wrapped_module.attention"
    assert _module_path("__dict__['_modules']['inner'].rope") == "inner.rope"
    trace = (
        'File "/a/torch/nn/x.py", line 9, in f\n'
        '  File "/home/u/model.py", line 27, in forward\n    y = self.qkv(x)'
    )
    assert node_location({"stack_trace": trace}) == "/home/u/model.py:27"


def test_size_mismatch_names_the_input_and_dim():
    assert fcr.size_mismatch("tensor 'x' size mismatch at index 1. expected 4, actual 6") == (
        "x",
        1,
    )
    assert fcr.size_mismatch("L['x'] is not a tensor") is None


def test_size_mismatch_names_a_batch_element_and_a_keyword_argument():
    """Lightning hands the compiled forward its batch: Dynamo names the tensor
    'batch[0]', which the rule once missed, so no mark_dynamic item was made."""
    lightning = "0/0: tensor 'batch[0]' size mismatch at index 0. expected 16, actual 6"
    assert fcr.size_mismatch(lightning) == ("batch[0]", 0)
    keyword = "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 9, actual 7"
    assert fcr.size_mismatch(keyword) == ("input_ids", 1)
    two = "tensor 'x' stride mismatch at index 0; tensor 'y' size mismatch at index 1"
    assert fcr.size_mismatch(two) == ("y", 1)


def test_recorded_graph_breaks_get_one_item_each_with_its_cost():
    session, run = recorded_run("graph_breaks")
    breaks = [a for a in far.advise(session, run).items if a.rule == "graph-break"]
    assert len(breaks) == 2
    assert breaks[0].where.endswith("graph_breaks.py:11")
    assert "GB0170" in breaks[0].title and "Data-dependent branching" in breaks[0].title
    assert "GB0124" in breaks[1].title and "item()" in breaks[1].title
    # Each compile less the attempt Dynamo threw away restarting (1/0 restarted
    # to compile up to the second break).
    kept = {c.compile_id: fgb.kept_s(c) for c in run.compiles.values()}
    restarted = fgb.restart_s(run.compiles["1/0"])
    assert restarted > 0 and kept["1/0"] < run.compiles["1/0"].wall_s
    for a, restart in zip(breaks, (0.0, restarted), strict=True):
        # The graph after each break (1/0, 2/0) merges into the one before: it saves at
        # most the shortest other graph's compile (the first compile left out), and
        # not more than its own; the attempt thrown away up to the break goes too.
        assert a.predicted is not None and "merges into the one before it" in a.predicted.how
        assert a.predicted.saving_s == pytest.approx(min(kept["1/0"], kept["2/0"]) + restart)
    # torch.cond is a change to the user's code; capture_scalar_outputs a setting `try` applies.
    assert not breaks[0].options and "torch.cond" in breaks[0].try_why
    assert breaks[1].options == {"hatch": "capture_scalar_outputs"} and not breaks[1].where


def test_recorded_static_sweep_gets_mark_dynamic_naming_input_and_dim():
    session, run = recorded_run("variable_length_static")
    (item,) = [a for a in far.advise(session, run).items if a.rule == "mark-dynamic"]
    assert item.options == {"mark_dynamic": "x:1"} and item.title == "mark x's dim 1 dynamic"
    assert item.predicted is not None and item.predicted.saving_s > 0
    # Already dynamic: no such advice.
    session, run = recorded_run("variable_length_dynamic")
    assert not [a for a in far.advise(session, run).items if a.rule == "mark-dynamic"]


def test_mark_dynamic_from_size_1_keeps_the_recompile_away_from_it():
    # The ResNet example's batch sweep 1, 2: torch specialized the size-1 dim though
    # it was marked dynamic, and recompiled at 2 (benchmarks/RESULTS.md §8).
    import dataclasses

    session, run = recorded_run("variable_length_static")
    first, second, *rest = run.sweep
    reason = "0/0: tensor 'x' size mismatch at index 1. expected 1, actual 64"
    run.sweep[:] = [first, dataclasses.replace(second, reason=reason), *rest]
    (item,) = [a for a in far.advise(session, run).items if a.rule == "mark-dynamic"]
    assert item.predicted is not None
    before = sum(st.transition_s for st in run.sweep)
    assert item.predicted.after_s == pytest.approx(first.transition_s + 2 * second.transition_s)
    assert item.predicted.before_s == pytest.approx(before)
    assert "away from a size of 0 or 1" in item.predicted.how


def test_advice_predicted_to_cost_more_is_hidden_as_a_loss_not_as_noise():
    import dataclasses

    session, run = recorded_run("variable_length_static")
    (item,) = [a for a in far.advise(session, run).items if a.rule == "mark-dynamic"]
    assert item.predicted is not None
    worse = dataclasses.replace(
        item, predicted=dataclasses.replace(item.predicted, after_s=item.predicted.before_s + 69.73)
    )
    hidden: list[str] = []
    assert far._above_noise([worse], 0.098, hidden) == []
    assert hidden == ["mark x's dim 1 dynamic: predicted to cost 69.73 s more"]


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


def test_builds_at_once_counts_overlapping_spans():
    assert fcr._most_at_once([(0, 2), (1, 3), (2.5, 4), (5, 6)]) == 2
    assert fcr._most_at_once([]) == 0


def _tried(before: float, after: float, **kw: Any) -> ev.AdviceTried:
    """A trial of a compile prediction: ``before`` → ``after`` predicted and
    measured alike, both runs on one cache state unless ``kw`` says otherwise."""
    fields: dict[str, Any] = {
        "run_id": "t",
        "advised_run": "a",
        "rule": "regional",
        "title": "compile each Block on its own",
        "options": {},
        "what": "compile",
        "predicted_before_s": before,
        "predicted_after_s": after,
        "measured_before_s": before,
        "measured_after_s": after,
        "steady_before_ms": None,
        "steady_after_ms": None,
        "steady_spread_ms": None,
        "cache_before": "miss",
        "cache_after": "miss",
    }
    return ev.AdviceTried(**{**fields, **kw})


def test_a_trial_against_a_run_that_built_the_precompiled_header_is_not_comparable():
    """The advised run's first compile also built Inductor's precompiled header
    (once per cache): its compile seconds hold a cost the trial does not pay."""
    t = _tried(
        30.0,
        6.0,
        options={"regional": "Block"},
        predicted_before_s=10.0,
        cache_before="off+header",
        cache_after="off",
    )
    words = fat.tried_text(t)
    assert "not comparable: graph cache off + precompiled header (built once) before" in words


def test_a_trial_measured_once_a_side_says_no_difference_inside_what_runs_differ_by():
    """Compile seconds and a program's wall, one run each: a change under 25% or
    0.25 s is what two runs of one command differ by, not a result."""

    def tried(before: float, after: float, wall: tuple[float, float]) -> ev.AdviceTried:
        return _tried(
            before,
            after,
            predicted_after_s=before * 0.76,
            graphs_before=2,
            graphs_after=1,
            wall_before_s=wall[0],
            wall_after_s=wall[1],
        )

    small = tried(0.157, 0.113, (2.82, 2.50))  # -28%, but 44 ms; the wall -11%
    words = fat.tried_text(small)
    assert f"measured {text.NO_DIFFERENCE} (157 ms → 113 ms)" in words
    assert f"program wall {text.NO_DIFFERENCE} (2.82 s → 2.50 s)" in words
    assert "graphs 2 → 1" in words and words.endswith(f"({fat.ONE_RUN_EACH})")
    assert fat.prediction_error(small) is None
    large = tried(5.20, 2.22, (10.53, 7.50))
    words = fat.tried_text(large)
    assert "measured -57% (5.20 s → 2.22 s)" in words and "program wall -29%" in words
    assert fat.ONE_RUN_EACH not in words and fat.prediction_error(large) is not None


def test_the_runs_payback_horizon_judges_its_advice_in_every_view():
    """``--calls`` is kept with the run: the report, the TUI and ``try`` judge (and
    number) its advice at the horizon the run printed it at; an explicit one
    judges anew."""
    session, run = recorded_run("pointwise_chain")
    speed = fb.run_speed(run)
    assert speed is not None and speed.break_even is not None  # ~346,000 calls
    assert run.settings is not None and run.settings.calls is None
    assert "no-payback" in [a.rule for a in far.advise(session, run).items]  # 1,000 calls
    run.settings.calls = int(speed.break_even) + 1
    assert far.advise(session, run).items == []
    report = build_report(build_model(session))
    assert report["advice"]["items"] == [] and "pays back" in report["advice"]["nothing"]
    run.settings.calls = int(speed.break_even) - 1
    assert [a.rule for a in far.advise(session, run).items] == ["no-payback"]
    assert far.advise(session, run, 10**9).items == []


def test_no_payback_words_a_speedup_inside_the_spread_as_no_difference_not_as_a_ratio():
    """A speedup inside the measured spread is no result: the evidence says so
    first, never "compiled is 0.87x (...) eager"; a measured slowdown is a ratio."""
    session, run = recorded_run("variable_length_static")
    speed = fb.run_speed(run)
    assert speed is not None and speed.verdict == fb.SAME
    (advice,) = [a for a in far.advise(session, run).items if a.rule == "no-payback"]
    assert advice.evidence[0] == (
        f"compiled and eager: no measurable difference ({fb.speedup_short(speed)}, inside "
        "the measured spread): no gain measured pays the compile back"
    )
    session, run = recorded_run("graph_breaks")
    speed = fb.run_speed(run)
    assert speed is not None and speed.verdict == fb.SLOWER
    (advice,) = [a for a in far.advise(session, run).items if a.rule == "no-payback"]
    assert advice.evidence[0] == f"compiled is {fb.speedup_text(speed)} eager: it never pays back"
