"""The options `dlcprof try` applies, as the worker applies them
(dlcprof/worker/remedies.py), on real torch in this process: ``--mark-dynamic``
makes one graph serve every size of a static sweep, ``--regional`` compiles
each instance of the class alone in a copy of the model. A graph-counting
backend stands in for Inductor (what is compiled is the point, not kernels);
their trials end to end: tests/e2e/test_advice_trial.py (mark_dynamic's ``slow``)."""

from __future__ import annotations

from typing import Any

import pytest

from dlcprof.settings import RunSettings
from dlcprof.worker.remedies import BadRemedy, Remedies


def counting(graphs: list[int]):
    def backend(gm: Any, example_inputs: Any) -> Any:
        graphs.append(len(gm.graph.nodes))
        return gm.forward

    return backend


def remedies(logged: list[str], **options: Any) -> Remedies:
    return Remedies(RunSettings(target="t", **options), lambda m, *a: logged.append(m))


def test_mark_dynamic_makes_one_graph_serve_every_size_of_a_static_sweep():
    import torch

    def f(x):
        return torch.sin(x) * 2

    for mark, graphs_made in (("x:1", 1), ("", 3)):  # the change, then its control
        torch._dynamo.reset()
        graphs: list[int] = []
        compiled = torch.compile(f, backend=counting(graphs), dynamic=False)
        r = remedies([], mark_dynamic=mark)
        for n in (8, 16, 24):  # as the sweep does: each size's inputs marked
            compiled(*r.mark(torch, f, (torch.randn(2, n),)))
        assert len(graphs) == graphs_made, mark
    torch._dynamo.reset()
    with pytest.raises(BadRemedy, match=r"input x is \[2, 8\], it has no dim 2"):
        remedies([], mark_dynamic="x:2").mark(torch, f, (torch.randn(2, 8),))
    with pytest.raises(BadRemedy, match="the workload's inputs are x; name one"):
        remedies([], mark_dynamic="y:0").mark(torch, f, (torch.randn(2, 8),))


def test_regional_compiles_each_block_alone_in_a_copy_of_the_model():
    import torch

    class Block(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.lin = torch.nn.Linear(4, 4)

        def forward(self, x):
            return torch.relu(self.lin(x)) + x

    class Model(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.blocks = torch.nn.Sequential(Block(), Block(), Block())

        def forward(self, x):
            return self.blocks(x).sum(dim=-1)

    torch._dynamo.reset()
    model, graphs, logged = Model(), list[int](), list[str]()
    regional = remedies(logged, regional="Block").compile(
        torch, model, {"backend": counting(graphs)}
    )
    x = torch.randn(2, 4)
    assert torch.allclose(regional(x), model(x))
    # The copy's blocks are compiled, each alone (the sum around them runs eager);
    # the eager model the benchmark times is untouched.
    assert regional is not model
    assert [m._compiled_call_impl is not None for m in regional.blocks] == [True] * 3
    assert all(m._compiled_call_impl is None for m in model.modules())
    whole: list[int] = []
    torch.compile(Model(), backend=counting(whole))(x)
    assert graphs and max(graphs) < min(whole)  # a block's ops, never the whole model's
    assert logged == [
        "regional compilation: 3 Block instances compiled on their own, "
        "the rest of the model runs eager"
    ]
    torch._dynamo.reset()
    for target, options, said in (
        (torch.sin, {"regional": "Block"}, "the workload returns a function, not an nn.Module"),
        (model, {"regional": "Conv"}, "no module of that class in the model (its classes: Block"),
        (model, {"regional": "Model"}, "that is the whole model"),
    ):
        with pytest.raises(BadRemedy, match=said.replace("(", r"\(")):
            remedies([], **options).compile(torch, target, {})
