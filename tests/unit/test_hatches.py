"""The hatch table (dlcprof/hatches.py): by a break's id and the call that broke."""

from __future__ import annotations

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
