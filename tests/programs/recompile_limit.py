"""A step compiled with dynamic=False, called on a new size each time
(tests/e2e/test_recompile_limit.py): each size is a recompile until Dynamo's
recompile_limit, set low here, is hit; the calls after it run eager."""

import torch

torch._dynamo.config.recompile_limit = 2


def scale(x):
    return torch.sin(x) * 2 + 1


if __name__ == "__main__":
    step = torch.compile(scale, backend="eager", dynamic=False)
    for n in range(8):
        step(torch.randn(n + 2))
    print("stepped", flush=True)
