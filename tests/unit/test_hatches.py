"""The hatch table (dlcprof/hatches.py): by a break's id and the call that broke."""

from __future__ import annotations

from typing import Any

import pytest

from dlcprof import hatches as h


def test_each_break_gets_its_hatches_best_first_and_disable_last():
    assert h.hatches("GB0124", "call_method TensorVariable() item () {}") == [
        h.CAPTURE_SCALAR,
        h.DISABLE,
    ]
    assert h.hatches("GB0059", "builtin print [ConstantVariable] False")[0] is h.REORDER_PRINT
    # Dynamo reorders a print of tensors, constants and strings only: litgpt's
    # print of a shape (a tuple) breaks again with the setting (GB0296).
    kinds = "<class 'torch._dynamo.variables.{}'>"
    call = f"builtin print [{kinds.format('constant.ConstantVariable')}, {{}}] False"
    assert h.hatches("GB0059", call.format(kinds.format("TensorVariable")))[0] is h.REORDER_PRINT
    assert h.hatches("GB0059", call.format(kinds.format("lists.TupleVariable"))) == [h.DISABLE]
    # The same id for another builtin: the print hatch does not apply.
    assert h.hatches("GB0059", "builtin len [UserDefinedObjectVariable] False") == [h.DISABLE]
    assert h.hatches("GB0170", "")[0] is h.COND
    assert [x.name for x in h.hatches("GB0007", "")] == [
        "nonstrict_trace",
        "allow_in_graph",
        "torch._dynamo.disable",
    ]
    assert h.hatches("", "") == [h.DISABLE] and not h.DISABLE.removes


def test_only_settings_can_be_tried():
    assert set(h.SETTINGS) == {
        "capture_scalar_outputs",
        "capture_dynamic_output_shape_ops",
        "reorderable_logging_functions",
        "ignore_logging_functions",
    }
    assert all(x.config for x in h.SETTINGS.values())
    assert not h.COND.config and not h.NONSTRICT.config
    # What --hatch takes: a set the break's function is added to names it.
    assert h.spec(h.CAPTURE_SCALAR) == "capture_scalar_outputs"
    assert h.spec(h.COND) == "" and h.spec(h.IGNORE_LOGGING) == ""
    given = h.spec(h.IGNORE_LOGGING, "logging.Logger.warning_once")
    assert given == "ignore_logging_functions=logging.Logger.warning_once"
    assert h.parse(given) == (h.IGNORE_LOGGING, "logging.Logger.warning_once")
    assert h.parse("torch.cond") == (None, "")


def test_the_option_names_every_setting_and_the_worker_sets_it():
    import builtins

    import torch

    from dlcprof.settings import OPTION, RunSettings
    from dlcprof.worker.remedies import BadRemedy, Remedies

    assert all(name in OPTION["hatch"].help for name in h.SETTINGS)
    logged: list[str] = []
    with torch._dynamo.config.patch(
        capture_scalar_outputs=False, reorderable_logging_functions=set()
    ):
        for name in ("capture_scalar_outputs", "reorderable_logging_functions"):
            Remedies(RunSettings(target="t", hatch=name), lambda m, *a: logged.append(m))._hatch(
                torch
            )
        assert torch._dynamo.config.capture_scalar_outputs is True
        assert builtins.print in torch._dynamo.config.reorderable_logging_functions
    assert len(logged) == 2
    with pytest.raises(BadRemedy, match="invalid --hatch 'torch.cond': choose one of"):
        Remedies(RunSettings(target="t", hatch="torch.cond"), print)._hatch(torch)
    with pytest.raises(BadRemedy, match="name the function to add"):
        Remedies(RunSettings(target="t", hatch="ignore_logging_functions"), print)._hatch(torch)
    with pytest.raises(BadRemedy, match="capture_scalar_outputs takes no function"):
        Remedies(RunSettings(target="t", hatch="capture_scalar_outputs=x.y"), print)._hatch(torch)


def test_a_logging_method_defined_after_the_setting_is_added_at_the_first_compile():
    """transformers sets its lru_cache'd ``warning_once`` on logging.Logger when
    it is imported, after torch, where dlcprof's probes make the setting: the
    method is added when the first compile starts, and Dynamo then skips the
    call instead of breaking. A method never added still breaks (the control)."""
    import functools
    import logging

    import torch

    from dlcprof.worker.remedies import set_hatch

    def once(self, *args, **kwargs):
        self.warning(*args, **kwargs)

    logger: Any = logging.getLogger("dlcprof-hatch-test")  # and the methods set below
    logger_class: Any = logging.Logger
    graphs: list[int] = []

    def counting(gm, example_inputs):
        graphs.append(len(gm.graph.nodes))
        return gm

    def ignored(x):
        y = x + 1
        logger.dlcprof_test_once("deprecated")
        return y * 2

    def breaks(x):
        y = x + 1
        logger.dlcprof_test_twice("deprecated")
        return y * 2

    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(ignore_logging_functions=set()):
            line = set_hatch(
                torch, "ignore_logging_functions=logging.Logger.dlcprof_test_once", "--hatch"
            )
            assert "logging.Logger.dlcprof_test_once is not defined yet" in line
            logger_class.dlcprof_test_once = functools.lru_cache(None)(once)
            logger_class.dlcprof_test_twice = functools.lru_cache(None)(once)
            torch.compile(ignored, backend=counting)(torch.ones(2))
            assert len(graphs) == 1  # no break: one graph
            added = torch._dynamo.config.ignore_logging_functions
            assert added == {logger_class.dlcprof_test_once}
            graphs.clear()
            torch.compile(breaks, backend=counting)(torch.ones(2))
            assert len(graphs) == 2  # the graph before the break and the one after
    finally:
        torch._dynamo.reset()
        for name in ("dlcprof_test_once", "dlcprof_test_twice"):
            if hasattr(logging.Logger, name):
                delattr(logging.Logger, name)


def test_an_attached_process_warns_when_its_torch_lacks_the_setting():
    """`dlcprof try` on a program: the probes set the hatch (HATCH_ENV); a torch
    without that setting gets a warning that the trial reads (cli/run.py), not a crash."""
    from types import SimpleNamespace

    from dlcprof.attach_contract import HATCH_UNSET
    from dlcprof.worker.attached.probe import AttachedProcess
    from dlcprof.worker.remedies import set_hatch

    sent: list[Any] = []  # the events, read by their fields
    old = SimpleNamespace(_dynamo=SimpleNamespace(config=SimpleNamespace()))
    process: Any = SimpleNamespace(
        torch=old, run_id="pid7", channel=SimpleNamespace(emit=sent.append)
    )
    process._log = lambda message, level="info": AttachedProcess._log(process, message, level)
    AttachedProcess.change(process, set_hatch, "capture_scalar_outputs", HATCH_UNSET)
    (log,) = sent
    assert log.level == "warning" and log.message.startswith(HATCH_UNSET)
    assert "no dynamo config capture_scalar_outputs: the program ran without it" in log.message
    old._dynamo.config.capture_scalar_outputs = False
    AttachedProcess.change(process, set_hatch, "capture_scalar_outputs", HATCH_UNSET)
    assert old._dynamo.config.capture_scalar_outputs is True and sent[1].level == "info"


def test_transformers_warning_once_is_its_own_break_and_its_hatch_names_the_method():
    """A real `dlcprof run -- python tests/programs/hf_warning_once.py`
    (tests/fixtures/programs/hf_warning_once.jsonl, scripts/record_program_fixture.py):
    GPT-2's forward calls ``logger.warning_once`` in transformers' file, hit by
    three nested frames. The break is grouped by its id, said inside
    transformers (reached from the program's call, not at it), and its hatch
    is the method Dynamo matches, which `try` can set. Removing it is predicted
    to leave the merged graph's compile, never less than the graph that holds
    the model's ops (tests/e2e/test_graph_break_ids.py runs the program and `try`)."""
    from helpers.recorded import load_fixture

    from dlcprof.figures import graph_breaks as fgb
    from dlcprof.figures.advice import rules as far
    from dlcprof.figures.advice import trial as fat
    from dlcprof.session import Session

    s = Session.from_events(load_fixture("programs/hf_warning_once"))
    run = fat.advised_run(s)
    (b,) = fgb.breaks(run)
    assert b.gb_id == "GB0291" and b.compile_ids == ["0/0", "1/0", "2/0"]
    assert b.location.endswith("tests/programs/hf_warning_once.py:21")
    assert "site-packages/transformers/models/gpt2/modeling_gpt2.py:" in b.detail
    assert not fgb.users(run, b)
    (kind,) = fgb.kinds([run])
    assert (kind.gb_id, kind.frames, kind.lines) == ("GB0291", 3, [b.location])
    (item,) = [i for i in far.advise(s, run).items if i.rule == "graph-break"]
    assert item.title.startswith(
        "graph break GB0291 inside transformers/models/gpt2/modeling_gpt2.py:"
    )
    assert ", reached from " in item.title
    assert item.options == {"hatch": "ignore_logging_functions=logging.Logger.warning_once"}
    assert item.try_why == "" and item.where == ""
    assert "ignore_logging_functions.add(logging.Logger.warning_once)" in item.snippet
    p = item.predicted
    graphs = [c for c in run.compiles.values() if c.record.graph_op_count]
    assert p is not None and p.before_s == sum(c.wall_s for c in run.compiles.values())
    # The ops still compile in the merged graph: no less than the biggest graph.
    assert max(fgb.kept_s(c) for c in graphs) <= p.after_s < p.before_s
    # The frames that restarted to compile up to the break and keep a graph or
    # become the merged one (0/0, 2/0): those attempts go; 1/0 (0 ops) goes whole.
    assert [c.compile_id for c in fgb.restarted_by(run, b)] == ["0/0", "1/0", "2/0"]
    assert "restarting 0/0, 2/0 up to the break" in p.how
    # A hatch whose merged graph compiles other kernels is not predicted, with why.
    from dlcprof.figures.advice import compile_rules as cr

    extra = fgb.added(run, b, set())
    assert cr._merged(run, b, p.before_s, extra, h.CAPTURE_DYNAMIC) == (
        None,
        h.CAPTURE_DYNAMIC.unpredicted,
    )
