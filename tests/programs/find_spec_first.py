"""Looks for torch before importing it, as datasets and transformers do
(``importlib.util.find_spec("torch")``), then compiles a function with a
``print`` in it: a graph break at line 16. ``--fullgraph``: the same
function with ``fullgraph=True``, whose compile then raises there."""

import importlib.util
import sys

assert importlib.util.find_spec("torch") is not None

import torch  # noqa: E402


def step(x):
    y = x.sin()
    print("inside the compiled step")
    return y.cos()


if __name__ == "__main__":
    compiled = torch.compile(step, backend="eager", fullgraph="--fullgraph" in sys.argv)
    print(compiled(torch.ones(4)).sum().item(), flush=True)
