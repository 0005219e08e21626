"""Two torch.compile calls with settings of their own (tests/e2e/test_compile_calls.py
runs it under `dlcprof run --`): the first is also the call that imports Dynamo."""

import torch


def step(x):
    return torch.relu(x) * 2


model = torch.compile(torch.nn.Linear(4, 4), dynamic=False, backend="eager")
fast = torch.compile(step, backend="eager", fullgraph=True)
print(fast(model(torch.randn(2, 4))).shape)
