"""A training step (forward, loss, backward, SGD update) on an MLP: backward compiles lazily."""

import torch
import torch.nn.functional as F
from torch import nn

IN, HIDDEN, CLASSES = 128, 512, 10
LR = 1e-3
SIZES = [16, 32, 64, 128, 256]  # batch
SMALL_SIZES = [2, 4, 8]


class MLP(nn.Module):
    def __init__(self, inp, hidden, classes):
        super().__init__()
        self.net = nn.Sequential(
            nn.Linear(inp, hidden),
            nn.ReLU(),
            nn.Linear(hidden, hidden),
            nn.ReLU(),
            nn.Linear(hidden, classes),
        )

    def forward(self, x):
        return self.net(x)


def inputs_for(n, device, dtype):
    torch.manual_seed(n)
    x = torch.randn(n, IN, device=device, dtype=dtype)
    target = torch.randint(0, CLASSES, (n,), device=device)
    return x, target


def build(device, dtype, size="default"):
    torch.manual_seed(0)
    model = MLP(IN, HIDDEN, CLASSES).to(device=device, dtype=dtype).train()
    params = list(model.parameters())

    def step(x, target):
        # enable_grad: the step trains even if the caller runs under no_grad.
        with torch.enable_grad():
            loss = F.cross_entropy(model(x), target)
            # Under torch.compile, Dynamo graph-breaks at .backward(): graph 1
            # is forward+loss (AOTAutograd also builds its backward graph, which
            # Inductor compiles lazily at the first .backward()); backward runs
            # between the graphs; the resumed update below is graph 2.
            loss.backward()
        with torch.no_grad():
            for p in params:
                p.sub_(p.grad, alpha=LR)
                p.grad = None
        return loss.detach()

    return step, inputs_for(4 if size == "small" else 256, device, dtype)
