"""A print break and a .item() break in one compiled function (docs/graph-breaks.md)."""

import torch


def step(x):
    y = x.sin()
    print("step")
    z = y.cos()
    n = z.sum().item()
    return z * n


if __name__ == "__main__":
    torch.compile(step, backend="eager")(torch.randn(4))
