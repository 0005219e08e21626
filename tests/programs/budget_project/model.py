"""The sample project's model: a stack of tiny blocks and a head with a
data-dependent branch (Dynamo breaks the graph at BREAK_LINE)."""

import torch

BREAK_LINE = 21  # the `if` below: tests/e2e/test_check.py names it


class Block(torch.nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(width, width)

    def forward(self, x):
        return torch.relu(self.lin(x)) + x


def head(x):
    y = x * 2
    # Dynamo cannot trace a branch on a tensor's value: the graph breaks here.
    if y.sum() > 0:
        return y - 1
    return y + 1


class Model(torch.nn.Module):
    def __init__(self, width: int = 8, layers: int = 2, branch: bool = True) -> None:
        super().__init__()
        self.blocks = torch.nn.Sequential(*(Block(width) for _ in range(layers)))
        self.branch = branch

    def forward(self, x):
        x = self.blocks(x)
        return head(x) if self.branch else x
