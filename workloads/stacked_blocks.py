"""Identical transformer blocks in a stack: one code traced once per block (regional compile)."""

import torch
import torch.nn.functional as F
from torch import nn

DIM, HEADS, BLOCKS = 64, 2, 4
SIZES = [8, 16, 32, 64]  # sequence length
SMALL_SIZES = [4, 8, 16]


class Block(nn.Module):
    """Pre-LN attention and a GELU MLP, as in a GPT layer (kept tiny)."""

    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.ln1 = nn.LayerNorm(dim)
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)
        self.ln2 = nn.LayerNorm(dim)
        self.up = nn.Linear(dim, 2 * dim)
        self.down = nn.Linear(2 * dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(self.ln1(x)).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        x = x + self.proj(y.transpose(1, 2).reshape(b, t, c))
        return x + self.down(F.gelu(self.up(self.ln2(x))))


class Stack(nn.Module):
    def __init__(self, dim, heads, blocks):
        super().__init__()
        self.blocks = nn.ModuleList(Block(dim, heads) for _ in range(blocks))
        self.norm = nn.LayerNorm(dim)

    def forward(self, x):
        for block in self.blocks:
            x = block(x)
        return self.norm(x)


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    return (torch.randn(2, n, DIM, device=device, dtype=dtype),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    model = Stack(DIM, HEADS, BLOCKS).to(device=device, dtype=dtype).eval()
    return model, inputs_for(8 if size == "small" else 32, device, dtype)
