"""One tiny graph compiled once, for the cache-miss tests (tests/e2e/test_cache_misses.py):
FALLBACK_RANDOM=1 changes one Inductor setting, ONE_MORE_OP=1 adds an op to the graph."""

import os

import torch
import torch._inductor.config as inductor_config

inductor_config.fallback_random = os.environ.get("FALLBACK_RANDOM") == "1"


def f(x):
    y = torch.sin(x) + 1
    if os.environ.get("ONE_MORE_OP") == "1":
        y = y * 2
    return y


print(torch.compile(f)(torch.ones(4)).sum().item())
