"""A chain of pointwise ops (sin, cos, relu, exp, tanh...) that Inductor fuses into one kernel."""

import torch

COLS = 1024
SIZES = [32, 64, 128, 256, 512, 1024]  # rows of a [rows, 1024] float tensor
SMALL_SIZES = [2, 4, 8]


def chain(x):
    # Eager runs one kernel per op, each reading and writing the whole tensor;
    # Inductor fuses the whole chain into a single pass over memory.
    y = torch.sin(x) * torch.cos(x)
    y = y + torch.relu(x) * 0.5
    y = y * torch.exp(-x.abs())
    y = torch.tanh(y) + torch.sigmoid(x)
    return y / (1.0 + x * x)


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    return (torch.randn(n, COLS, device=device, dtype=dtype),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    if size == "small":
        return chain, (torch.randn(16, 64, device=device, dtype=dtype),)
    return chain, inputs_for(1024, device, dtype)
