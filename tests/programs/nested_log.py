"""A logger's ``warning_once`` (Hugging Face's, an lru_cache'd method patched onto
logging.Logger) hit inside three nested modules: Dynamo breaks the graph in each
frame at the same line. Each graph is called three times (tests/e2e/test_counts_truth.py)."""

import functools
import logging

import torch

logger = logging.getLogger("nested")


@functools.lru_cache(None)
def warning_once(self, *args, **kwargs):
    self.warning(*args, **kwargs)


logging.Logger.warning_once = warning_once


class Inner(torch.nn.Module):
    def forward(self, x):
        logger.warning_once("inner is deprecated")
        return torch.sin(x) + 1


class Mid(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.inner = Inner()

    def forward(self, x):
        return self.inner(x * 2) - 1


class Outer(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.mid = Mid()

    def forward(self, x):
        return self.mid(x.cos()) * 3


model = torch.compile(Outer())
for _ in range(3):
    model(torch.randn(8))
print("done")
