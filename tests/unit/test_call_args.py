"""What the program's call passed as the input the compiled code names: the
call's source read live from the calling frame (this Python's positions), and
read for the argument behind ``args[0]``, ``kwargs['k']`` or a parameter."""

from __future__ import annotations

import sys

import pytest

from dlcprof.figures.advice.call_args import Passed, passed_as
from dlcprof.trace_records.payloads import call_source


def _callers_call(*args: object, **kwargs: object) -> str:
    frame = sys._getframe(1)
    return call_source(frame)


needs_positions = pytest.mark.skipif(
    sys.version_info < (3, 11), reason="Python keeps instructions' columns from 3.11"
)


@needs_positions
def test_the_call_read_from_the_frame_is_the_one_in_progress():
    batch = {"x": 1}
    # Of the calls on the line, the one this frame is making; a call over lines whole.
    said = str(_callers_call(batch["x"], key=2))
    assert said == '_callers_call(batch["x"], key=2)'
    said = _callers_call(
        batch["x"],
        key=[1, 2],
    )
    assert said.split() == ["_callers_call(", 'batch["x"],', "key=[1,", "2],", ")"]


@needs_positions
def test_a_frame_making_no_call_says_nothing():
    seen: list[str] = []

    class Getter:
        def __getitem__(self, key: object) -> str:
            seen.append(call_source(sys._getframe(1)))
            return ""

    Getter()[0]  # the frame is subscripting, not calling
    assert seen == [""]


@pytest.mark.parametrize(
    ("call", "guarded", "expression"),
    [
        ("model(x)", "x", "x"),
        ("model(inputs)", "x", "inputs"),  # the parameter's name is not the program's
        ("head(batch['pixels'])", "args[0]", "batch['pixels']"),  # a *args wrapper
        ("model(a, b)", "args[1]", "b"),
        ("model(**batch)", "input_ids", "batch['input_ids']"),
        ("model(**batch)", "kwargs['input_ids']", "batch['input_ids']"),
        ("model(input_ids=ids, mask=m)", "mask", "m"),
        ("model(x, **extra)", "x", "x"),  # by position, not an item of extra
        ("model(batch)", "batch['input_ids']", "batch['input_ids']"),
        ("f(\n    self.buffer,\n)", "x", "self.buffer"),
    ],
)
def test_the_argument_behind_the_compiled_codes_name(call, guarded, expression):
    assert passed_as(call, guarded) == Passed(expression, same_tensor=True)


@pytest.mark.parametrize(
    ("call", "guarded", "expression"),
    [
        ("model(torch.randn(seq, 8,\n    device=d))", "x", "torch.randn(seq, 8, device=d)"),
        ("model(xs[i + 1])", "x", "xs[i + 1]"),
        ("model(x.float())", "x", "x.float()"),
    ],
)
def test_an_argument_that_is_a_new_tensor_each_time_is_said_so(call, guarded, expression):
    assert passed_as(call, guarded) == Passed(expression, same_tensor=False)


@pytest.mark.parametrize(
    ("call", "guarded"),
    [
        ("model(a, b)", "y"),  # one of several by position: which is not said
        ("model(*xs)", "args[0]"),
        ("model(a)", "args[1]"),
        ("model(**a, **b)", "x"),
        ("model(x)", "self._modules['lin']"),  # the module's state, not an input
        ("model(", "x"),
        ("model(x\0)", "x"),
        ("x + y", "x"),
    ],
)
def test_a_call_that_does_not_say_gives_nothing(call, guarded):
    assert passed_as(call, guarded) is None
