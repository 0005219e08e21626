"""litgpt's GPT with a ``print`` at the top of ``forward``, and without it
(issue 44: a break removed predicts the merged graph's compile, RESULTS §18).

A tiny model from a litgpt Config (random weights, nothing downloaded),
compiled with Inductor, three forward calls. ``--print`` subclasses GPT with a
forward that prints first and then calls litgpt's own; without it, litgpt's
GPT as installed. litgpt is not one of dlcprof's dependencies: run it with a
Python that has it, under ``dlcprof run --json S.json -- python
benchmarks/litgpt_print.py [--print]``, and compare the sessions' compile
seconds with the prediction in the first session's advice.
"""

from __future__ import annotations

import sys

import torch
from litgpt.config import Config
from litgpt.model import GPT

config = Config(
    name="tiny",
    block_size=64,
    vocab_size=512,
    padded_vocab_size=512,
    n_layer=2,
    n_head=4,
    n_embd=64,
    rotary_percentage=0.25,
    parallel_residual=True,
    bias=True,
)


class PrintingGPT(GPT):
    def forward(self, idx, *args, **kwargs):
        print("forward", tuple(idx.shape))
        return super().forward(idx, *args, **kwargs)


torch.manual_seed(0)
model = (PrintingGPT if "--print" in sys.argv else GPT)(config).eval()
compiled = torch.compile(model)
idx = torch.randint(0, config.vocab_size, (2, 32))
with torch.no_grad():
    for _ in range(3):
        compiled(idx)
print("done")
