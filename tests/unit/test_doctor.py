"""dlcprof doctor: the checks run here (CPU machine, no NVML) and render as a table."""

from __future__ import annotations

import io
import shutil

import pytest
from rich.console import Console

from dlcprof import doctor
from dlcprof.doctor import Check, checks, render


@pytest.fixture(scope="module")
def results() -> dict[str, Check]:
    found = checks()
    names = [c.name for c in found]
    assert len(names) == len(set(names))
    return {c.name: c for c in found}


def test_every_check_has_a_status_and_missing_ones_a_cost(results) -> None:
    expected = {
        "torch",
        "CUDA",
        "C++ compiler",
        "Triton",
        "NVML",
        "py-spy",
        "ptrace",
        "Inductor cache",
        "precompiled header",
        "allocator",
    }
    assert expected <= set(results)
    for c in results.values():
        assert c.status in {"ok", "missing", "warn"}, c
        assert c.detail and "\n" not in c.detail
        if c.status != "ok":
            assert c.cost, c


def test_this_machine(results) -> None:
    torch = results["torch"]
    assert torch.status == "ok" and torch.detail.startswith("2.")
    assert "build" in torch.detail
    if "CPU-only" in torch.detail:
        assert results["CUDA"].status == "missing"
    cxx = results["C++ compiler"]
    if shutil.which("g++"):
        assert cxx.status == "ok" and "g++" in cxx.detail
    nv = results["NVML"]
    if nv.status == "missing":  # this machine: no NVIDIA GPU
        assert "NVML" in nv.detail and "CPU" in nv.cost
    assert results["py-spy"].status == "ok"
    assert results["ptrace"].status == "ok"  # root here: py-spy attaches to children


def test_broken_python_is_a_missing_torch(tmp_path) -> None:
    info = doctor.torch_info(python=str(tmp_path / "no-python"))
    check = doctor._torch_check(info)
    assert check.status == "missing" and check.cost


def test_render_is_a_table(results) -> None:
    table = render(list(results.values()))
    buf = io.StringIO()
    Console(file=buf, width=140, color_system=None).print(table)
    text = buf.getvalue()
    assert "py-spy" in text and "NVML" in text and "cost" in text
