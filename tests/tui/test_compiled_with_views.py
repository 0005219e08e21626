"""An attached program's torch.compile calls ("accelerate compiled with
dynamic=False, …", issue 29 item 12) stated in the same words by every view:
the Benchmark pane, the console's run summary, the Markdown and the HTML report."""

from __future__ import annotations

from helpers.program import program_session
from helpers.views import views

from dlcprof import events as ev
from dlcprof.figures.job import program as fprog


def test_every_view_states_the_compile_calls_of_an_attached_program():
    s = program_session()
    for e in (
        ev.CompileCalled(
            run_id="pid7",
            mode=None,
            dynamic="false",
            backend="inductor",
            fullgraph=False,
            caller="/venv/lib/python3.11/site-packages/accelerate/accelerator.py:1480",
            package="accelerate",
            t=1001.5,
        ),
        ev.CompileCalled(
            run_id="pid7",
            mode="max-autotune",
            dynamic="auto",
            backend="inductor",
            fullgraph=True,
            caller="/home/u/train.py:40",
            t=1001.6,
        ),
    ):
        s.apply(e)
    (run,) = fprog.attached_runs(s)
    lines = fprog.compiled_with(run)
    assert lines == [
        "accelerate compiled with dynamic=False, backend=inductor",
        "train.py:40 compiled with mode=max-autotune, dynamic=None, backend=inductor, "
        "fullgraph=True",
    ]
    for name, words in views(s, run).items():
        for line in lines:
            assert line in words, f"{name} lacks {line!r}"
