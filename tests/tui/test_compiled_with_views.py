"""An attached program's torch.compile calls ("accelerate compiled with
dynamic=false, …", issue 29 item 12) stated in the same words by every view:
the Benchmark pane, the console's run summary, the Markdown and the HTML report."""

from __future__ import annotations

from helpers.program import program_session
from helpers.views import views

from dlcprof import events as ev
from dlcprof.figures.job import program as fprog


def _called(**fields: object) -> ev.CompileCalled:
    """A torch.compile call with the defaults (mode, dynamic, backend, fullgraph)."""
    base: dict = dict(
        run_id="pid7", mode="default", dynamic="auto", backend="inductor", fullgraph=False
    )
    return ev.CompileCalled(**{**base, **fields})


def test_every_view_states_the_compile_calls_of_an_attached_program():
    s = program_session()
    for e in (
        _called(
            mode=None,
            dynamic="false",
            caller="/venv/lib/python3.11/site-packages/accelerate/accelerator.py:1480",
            package="accelerate",
            t=1001.5,
        ),
        _called(mode="max-autotune", fullgraph=True, caller="/home/u/train.py:40", t=1001.6),
        # Issue 41, 6: Lightning's wrapper compiling for litgpt's line, and a
        # call whose function never compiled, with its options.
        _called(
            caller="/v/lib/python3.11/site-packages/lightning/fabric/wrappers.py:400",
            package="lightning",
            made_at="/v/lib/python3.11/site-packages/litgpt/pretrain.py:213",
            module_call=1,
            t=1001.7,
        ),
        _called(
            caller="/home/u/attention.py:9",
            options="'max_autotune': True",
            target="/v/lib/python3.11/site-packages/torch/nn/attention/flex_attention.py",
            t=1001.8,
        ),
        # Lightning's Fabric compiles litgpt's module again (line 214) and drops
        # the first (213): only the second call's module ever ran.
        _called(
            caller="/v/lib/python3.11/site-packages/lightning/fabric/wrappers.py:400",
            package="lightning",
            made_at="/v/lib/python3.11/site-packages/litgpt/pretrain.py:214",
            module_call=2,
            t=1002.0,
        ),
        ev.ModuleCompileRan(run_id="pid7", number=2, t=1003.0),
    ):
        s.apply(e)
    (run,) = fprog.attached_runs(s)
    lines = fprog.compiled_with(run)
    assert lines == [
        "accelerate compiled with dynamic=false, backend=inductor",
        "train.py:40 compiled with mode=max-autotune, dynamic=auto, backend=inductor, "
        "fullgraph=True",
        "litgpt/pretrain.py:213 through lightning compiled with mode=default, dynamic=auto, "
        "backend=inductor: nothing compiled from it",
        "attention.py:9 compiled with mode=default, dynamic=auto, backend=inductor, "
        "options={'max_autotune': True}: nothing compiled from it",
        "litgpt/pretrain.py:214 through lightning compiled with mode=default, dynamic=auto, "
        "backend=inductor",
    ]
    for name, words in views(s, run).items():
        for line in lines:
            assert line in words, f"{name} lacks {line!r}"
