"""A compute-heavy pointwise stack (sigmoid/tanh) over 2M floats: issue 15's workload."""

import torch

N = 2_000_000


def stack(x):
    # Transcendental-heavy elementwise work: eager runs one vectorized ATen
    # kernel per op, Inductor one fused loop; both are compute-bound at 1 thread.
    for _ in range(4):
        x = torch.sigmoid(torch.tanh(x) * 1.5 + 0.25)
    return x


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    n = 4096 if size == "small" else N
    return stack, (torch.randn(n, device=device, dtype=dtype),)
