"""The sample project's tests with compile budgets (dlcprof's pytest plugin);
named check_*.py so dlcprof's own suite does not collect them: pytester
runs them (tests/e2e/test_check_plugin.py)."""

import pytest
import torch
from model import Model


@pytest.mark.compile_budget(graph_breaks=0)
def test_no_break_budget():
    model = torch.compile(Model())
    model(torch.randn(4, 8))


@pytest.mark.compile_budget(graph_breaks=1, recompiles=0)
def test_within_budget():
    model = torch.compile(Model())
    model(torch.randn(4, 8))


def test_watch(compile_watch):
    model = torch.compile(Model(branch=False))
    model(torch.randn(4, 8))
    model(torch.randn(6, 8))
    assert compile_watch.graph_breaks == []
    assert [f.compile_id for f in compile_watch.recompiles] == ["0/1"]
    assert "size mismatch at index 0" in compile_watch.recompiles[0].reason
