"""Variable-length sequences: each new length is a new shape (the dynamic-shapes case)."""

import torch
import torch.nn.functional as F
from torch import nn

# BATCH equals no length in SIZES: torch "duck sizes" equal dims, which would
# cost the dynamic run an extra compile when the length reaches the batch.
DIM, BATCH = 256, 24
# Eight distinct lengths, like batches bucketed from real text. With
# dynamic=False each one compiles again (recompile_limit is 8 by default);
# with automatic dynamic the second length already makes the dim symbolic.
SIZES = [32, 48, 64, 96, 128, 160, 192, 256]
SMALL_SIZES = [4, 6, 8]


class SequenceEncoder(nn.Module):
    """Normalize, then attention-pool over the length dimension, then project.

    Mostly reductions over the length dimension, which Inductor fuses; their
    loop bounds are what a static compile bakes in and a dynamic one keeps
    symbolic.
    """

    def __init__(self, dim):
        super().__init__()
        self.norm = nn.LayerNorm(dim)
        self.query = nn.Parameter(torch.randn(dim) / dim**0.5)
        self.out = nn.Linear(dim, dim)

    def forward(self, x):  # x: [batch, length, dim]
        h = F.gelu(self.norm(x))
        weights = torch.softmax((h * self.query).sum(-1), dim=1)  # over length
        pooled = (weights.unsqueeze(-1) * h).sum(dim=1)
        return self.out(pooled)


def inputs_for(n, device, dtype):
    """A batch of sequences of length n."""
    torch.manual_seed(n)
    return (torch.randn(BATCH, n, DIM, device=device, dtype=dtype),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    model = SequenceEncoder(DIM).to(device=device, dtype=dtype).eval()
    if size == "small":
        return model, (torch.randn(2, 4, DIM, device=device, dtype=dtype),)
    return model, inputs_for(128, device, dtype)
