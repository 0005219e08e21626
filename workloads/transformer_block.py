"""A GPT-style block (pre-LN, causal self-attention, GELU MLP); sweeps sequence length."""

import torch
import torch.nn.functional as F
from torch import nn

DIM, HEADS, BATCH = 256, 4, 4
SIZES = [32, 64, 128, 256, 384, 512]  # sequence length
SMALL_SIZES = [8, 16, 32]


class CausalSelfAttention(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(dim, 3 * dim)
        self.proj = nn.Linear(dim, dim)

    def forward(self, x):
        b, t, c = x.shape
        q, k, v = self.qkv(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, c // self.heads).transpose(1, 2) for z in (q, k, v))
        y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        return self.proj(y.transpose(1, 2).reshape(b, t, c))


class Block(nn.Module):
    def __init__(self, dim, heads):
        super().__init__()
        self.ln1 = nn.LayerNorm(dim)
        self.attn = CausalSelfAttention(dim, heads)
        self.ln2 = nn.LayerNorm(dim)
        self.mlp = nn.Sequential(nn.Linear(dim, 4 * dim), nn.GELU(), nn.Linear(4 * dim, dim))

    def forward(self, x):
        x = x + self.attn(self.ln1(x))
        return x + self.mlp(self.ln2(x))


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    return (torch.randn(BATCH, n, DIM, device=device, dtype=dtype),)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    model = Block(DIM, HEADS).to(device=device, dtype=dtype).eval()
    if size == "small":
        return model, (torch.randn(1, 8, DIM, device=device, dtype=dtype),)
    return model, inputs_for(128, device, dtype)
