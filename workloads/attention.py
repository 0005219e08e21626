"""Attention by hand (QK^T, scale, causal mask, softmax, @V): Inductor fuses the softmax."""

import math

import torch

BATCH, HEADS, HEAD_DIM = 2, 8, 64
SIZES = [64, 128, 192, 256, 320, 384]  # sequence length
SMALL_SIZES = [8, 16, 32]


def attention(q, k, v):
    # Not F.scaled_dot_product_attention: the point is to let Inductor see the
    # scale, mask and softmax as separate ops and fuse them into one kernel
    # between the two (extern) batched matrix multiplies.
    scores = (q @ k.transpose(-2, -1)) * (1.0 / math.sqrt(q.shape[-1]))
    n = q.shape[-2]
    mask = torch.ones(n, n, dtype=torch.bool, device=q.device).tril()
    scores = scores.masked_fill(~mask, float("-inf"))
    return torch.softmax(scores, dim=-1) @ v


def _qkv(batch, heads, seq, head_dim, device, dtype):
    return tuple(
        torch.randn(batch, heads, seq, head_dim, device=device, dtype=dtype) for _ in range(3)
    )


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    return _qkv(BATCH, HEADS, n, HEAD_DIM, device, dtype)


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    if size == "small":
        return attention, _qkv(1, 2, 16, 16, device, dtype)
    return attention, inputs_for(256, device, dtype)
