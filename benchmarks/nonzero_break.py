"""A data-dependent output shape in a compiled function (``nonzero``), for the
``capture_dynamic_output_shape_ops`` hatch's row in RESULTS §18: Dynamo breaks
the graph at ``nonzero`` (GB0036) unless that setting is on. Three calls.

    dlcprof run --json S.json -- python benchmarks/nonzero_break.py
    dlcprof try S.json N     # N: the GB0036 item
"""

import torch


def step(x, w):
    h = torch.relu(x @ w)
    idx = h.sum(1).nonzero().squeeze(1)
    picked = h.index_select(0, idx)
    return torch.tanh(picked @ w.t()).sum()


compiled = torch.compile(step)
torch.manual_seed(0)
w = torch.randn(16, 16)
for _ in range(3):
    compiled(torch.randn(32, 16), w)
print("done")
