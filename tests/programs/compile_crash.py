"""A compile that raises on every torch (tests/e2e/test_compile_crash.py): the
step's backend fails, as a third-party or a patched backend can, so Dynamo
raises ``BackendCompilerFailed`` into the program at its first step instead of
running the frame eagerly (``suppress_errors`` is off by default). The eager
backend's graph never runs; nothing here depends on a Dynamo bug that a later
torch fixes (compile_crash_lightning.py does)."""

import torch


def broken_backend(gm, example_inputs):
    raise RuntimeError("this backend cannot compile the step")


class Module(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, batch):
        return self.lin(batch).pow(2).mean()


def fit(module, steps=3):
    step = torch.compile(module.training_step, backend=broken_backend)
    for _ in range(steps):
        step(torch.randn(8, 4)).backward()


if __name__ == "__main__":
    fit(Module())
    print("fitted", flush=True)
