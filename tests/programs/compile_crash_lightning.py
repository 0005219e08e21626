"""A compile that raises on torch 2.12 and 2.13 only (tests/e2e/test_compile_crash.py;
compile_crash.py raises on every torch): a Lightning-style module whose ``log``
inspects the step's signature, as Lightning's ``self.log`` does, with the step
compiled in place as ``trainer.fit(torch.compile(module))`` rebinds it. Dynamo
raises InternalTorchDynamoError inside ``inspect``
(Lightning-AI/pytorch-lightning#21836) and the program dies at its first step;
torch 2.14 fixed the bug."""

import inspect

import torch


class Module(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = torch.nn.Linear(4, 1)

    def training_step(self, batch):
        loss = self.lin(batch).pow(2).mean()
        self.log("loss", loss)
        return loss

    def log(self, name, value):
        # Lightning: is `dataloader_iter` a parameter of the step?
        if "dataloader_iter" in inspect.getfullargspec(self.training_step).args:
            raise ValueError(name)


def fit(module, steps=3):
    module.training_step = torch.compile(module.training_step, backend="eager")
    for _ in range(steps):
        module.training_step(torch.randn(8, 4)).backward()


if __name__ == "__main__":
    fit(Module())
    print("fitted", flush=True)
