"""Budgets the plugin cannot judge (tests/e2e/test_check_plugin.py): a test
that compiles nothing, one that asks for that nothing, and one whose compile
raises at the model's break (``fullgraph=True``)."""

import pytest
import torch
from model import head


@pytest.mark.compile_budget(graph_breaks=0)
def test_compiles_nothing():
    head(torch.ones(4))  # eager: the budget has nothing to judge


@pytest.mark.compile_budget(compiles=0)
def test_asks_for_nothing():
    head(torch.ones(4))


@pytest.mark.compile_budget(graph_breaks=0)
def test_fullgraph_break():
    torch.compile(head, backend="eager", fullgraph=True)(torch.ones(4))
