"""Two 1-op graphs (an extern matmul each: no kernel to build) compiled once,
for the cache-miss tests (tests/e2e/test_warm_start_gate.py): ONE_MORE_OP=1 adds
an op to f's graph, FALLBACK_RANDOM=1 changes one Inductor setting for g's."""

import os

import torch


def f(x):
    y = x @ x
    if os.environ.get("ONE_MORE_OP") == "1":
        y = y @ x
    return y


def g(x):
    return x @ x


def main() -> None:
    options = {"fallback_random": os.environ.get("FALLBACK_RANDOM") == "1"}
    print(torch.compile(f)(torch.ones(2, 2)).sum().item())
    print(torch.compile(g, options=options)(torch.ones(3, 3)).sum().item())


if __name__ == "__main__":
    main()
