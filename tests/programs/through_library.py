"""A compiled step that breaks the graph inside an installed package
(``vendorlib``: the test puts it in a site-packages folder on PYTHONPATH):
Dynamo breaks the step at the user's call into it (``CALL_LINE``).
``--library-only``: the package's function compiled itself, which breaks at
no line of the user's."""

import sys

import torch
import vendorlib


def step(x):
    y = x.sin()
    y = vendorlib.log_and_scale(y)  # CALL_LINE
    return y.cos()


if __name__ == "__main__":
    if "--library-only" in sys.argv:
        compiled = torch.compile(vendorlib.log_and_scale, backend="eager")  # COMPILE_LINE
    else:
        compiled = torch.compile(step, backend="eager")
    print(compiled(torch.ones(4)).sum().item(), flush=True)
