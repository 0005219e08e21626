"""Many tiny ops on tiny tensors: overhead-bound (the reduce-overhead / CUDA graphs case)."""

import torch
from torch import nn


class TinyLayer(nn.Module):
    def __init__(self, dim):
        super().__init__()
        self.linear = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        return x + torch.nn.functional.gelu(self.norm(self.linear(x))) * 0.5


class TinyResidualStack(nn.Module):
    """Layers of Linear -> LayerNorm -> GELU -> residual add on an [8, 64] tensor.

    Each op takes microseconds of arithmetic and more of framework overhead.
    Compiled, the pointwise and norm ops fuse into a few kernels per layer; on
    a GPU, mode="reduce-overhead" then replays all launches as one CUDA graph.
    """

    def __init__(self, dim, layers):
        super().__init__()
        self.layers = nn.Sequential(*(TinyLayer(dim) for _ in range(layers)))

    def forward(self, x):
        return self.layers(x)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    dim, layers, batch = (16, 3, 2) if size == "small" else (64, 24, 8)
    model = TinyResidualStack(dim, layers).to(device=device, dtype=dtype).eval()
    return model, (torch.randn(batch, dim, device=device, dtype=dtype),)
