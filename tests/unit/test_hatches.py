"""The hatch table (dlcprof/hatches.py): by a break's id and the call that broke."""

from __future__ import annotations

import pytest

from dlcprof import hatches as h


def test_each_break_gets_its_hatches_best_first_and_disable_last():
    assert h.hatches("GB0124", "call_method TensorVariable() item () {}") == [
        h.CAPTURE_SCALAR,
        h.DISABLE,
    ]
    assert h.hatches("GB0059", "builtin print [ConstantVariable] False")[0] is h.REORDER_PRINT
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
    }
    assert all(x.config for x in h.SETTINGS.values())
    assert not h.COND.config and not h.NONSTRICT.config


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


def test_an_attached_process_warns_when_its_torch_lacks_the_setting():
    """`dlcprof try` on a program: the probes set the hatch (HATCH_ENV); a torch
    without that setting gets a warning that the trial reads (cli/run.py), not a crash."""
    from types import SimpleNamespace

    from dlcprof import events as ev
    from dlcprof.attach_contract import HATCH_UNSET
    from dlcprof.worker.attached.probe import AttachedProcess

    sent: list[ev.Event] = []
    old = SimpleNamespace(_dynamo=SimpleNamespace(config=SimpleNamespace()))
    process = SimpleNamespace(torch=old, run_id="pid7", channel=SimpleNamespace(emit=sent.append))
    AttachedProcess.hatch(process, "capture_scalar_outputs")
    (log,) = sent
    assert log.level == "warning" and log.message.startswith(HATCH_UNSET)
    assert "no dynamo config capture_scalar_outputs: the program ran without it" in log.message
    old._dynamo.config.capture_scalar_outputs = False
    AttachedProcess.hatch(process, "capture_scalar_outputs")
    assert old._dynamo.config.capture_scalar_outputs is True and sent[1].level == "info"
