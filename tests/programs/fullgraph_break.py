"""A graph break under ``fullgraph=True`` (tests/e2e/test_compile_crash.py): the
step's ``print`` breaks, and Dynamo raises ``Unsupported`` into the program at
its first call instead of splitting the graph; the error names the break's
type, and its message ends with the link to torch's page for its id."""

import torch


def step(x):
    print("step")
    return x + 1


if __name__ == "__main__":
    torch.compile(step, fullgraph=True, backend="eager")(torch.ones(4))
    print("unreachable", flush=True)
