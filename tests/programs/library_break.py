"""A graph break inside the standard library, reached from the program's own line
(tests/e2e/test_clone_folder.py): Dynamo inlines ``json.dumps`` and breaks in
json/encoder.py, so the break is the program's only if its own file is told
from dlcprof's. The eager backend: seconds, no Inductor."""

import json

import torch


@torch.compile(backend="eager")
def step(x, meta):
    y = x * 2
    tag = json.dumps(meta)  # Dynamo breaks inside json/encoder.py
    return y + len(tag)


for _ in range(2):
    step(torch.ones(4), {"a": 1})
print("done")
