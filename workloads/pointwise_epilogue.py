"""Scale, bias, ReLU6 and residual, six times over a large activation: fused into one pass."""

import torch

COLS = 1024
BLOCKS = 6
SIZES = [64, 128, 256, 512, 1024]  # rows of a [rows, 1024] activation
SMALL_SIZES = [2, 4, 8]


def epilogue(x, scale, bias):
    """What follows a matmul in many models (a per-channel scale and bias, as a
    dequantization or a folded BatchNorm leaves, an activation clamped as
    ReLU6 is, a residual add), stacked as BLOCKS blocks without the matmuls.

    Eager runs each of the 36 ops as a kernel of its own: each one reads its
    inputs from memory and writes a freshly allocated [rows, 1024] output.
    Every op is pointwise, so Inductor fuses the whole stack into a single loop
    that reads ``x`` once and writes the result once, with the intermediates in
    registers: the cheaper each op's arithmetic, the more of eager's time was
    memory traffic and allocation, and the larger the speedup.
    """
    y = x
    for _ in range(BLOCKS):
        h = torch.relu(y * scale + bias)
        y = y + h.clamp(max=6.0) * 0.5
    return y


def activation(rows, cols, device, dtype):
    """An activation and its per-channel scale and bias."""
    torch.manual_seed(rows)
    x = torch.randn(rows, cols, device=device, dtype=dtype)
    scale = torch.rand(cols, device=device, dtype=dtype) + 0.5
    bias = torch.randn(cols, device=device, dtype=dtype) * 0.1
    return x, scale, bias


def inputs_for(n, device, dtype):
    return activation(n, COLS, device, dtype)


def build(device, dtype, size="default"):
    if size == "small":
        return epilogue, activation(16, 64, device, dtype)
    return epilogue, inputs_for(512, device, dtype)
