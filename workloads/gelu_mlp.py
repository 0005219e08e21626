"""Linear -> GELU -> Linear: GEMM-bound, so fusion only saves the bias+GELU pass (little gain)."""

import torch
from torch import nn

DIM = 256
SIZES = [32, 64, 128, 256, 512, 1024]  # batch rows
SMALL_SIZES = [2, 4, 8]


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    return (torch.randn(n, DIM, device=device, dtype=dtype),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    # Time goes into the two matrix multiplies, which Inductor hands to the
    # same BLAS library eager uses (extern addmm); only GELU gets a new kernel.
    model = nn.Sequential(nn.Linear(DIM, 4 * DIM), nn.GELU(), nn.Linear(4 * DIM, DIM))
    model = model.to(device=device, dtype=dtype).eval()
    batch = 4 if size == "small" else 512
    return model, inputs_for(batch, device, dtype)
