"""A data-dependent branch and a .item() call: Dynamo breaks the graph into pieces."""

import torch


def normalize(x, w):
    y = torch.tanh(x @ w)
    # Graph break 1: Python `if` on a tensor value. Dynamo cannot know the
    # branch at trace time, so it compiles the code before it, runs the
    # condition eagerly, and compiles each resumed branch separately.
    if y.mean() > 0:
        y = y * 2.0
    else:
        y = -y
    # Graph break 2: .item() turns a tensor into a Python float (unless
    # torch._dynamo.config.capture_scalar_outputs = True).
    peak = y.abs().max().item()
    y = y / (peak + 1e-6)
    return torch.relu(y) + torch.sigmoid(x)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    n, d = (8, 16) if size == "small" else (1024, 512)
    x = torch.randn(n, d, device=device, dtype=dtype)
    w = torch.randn(d, d, device=device, dtype=dtype) / d**0.5
    return normalize, (x, w)
