"""Bad input that only the worker can find (an export a lazy module makes on
first use, a device this machine lacks): still one line on stderr and exit
code 2, from a real `dlcprof run`."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

LAZY_INIT = """
import importlib
import sys
import types


class _Lazy(types.ModuleType):
    # Like transformers' _LazyModule: names appear when first looked up.
    def __getattr__(self, name):
        if name in ("build", "not_a_builder"):
            return getattr(importlib.import_module(".impl", __name__), name)
        raise AttributeError(name)


lazy = _Lazy(__name__)
lazy.__path__, lazy.__spec__, lazy.__file__ = __path__, __spec__, __file__
sys.modules[__name__] = lazy
"""


LAZY_IMPL = """
import torch


def build(device, dtype):
    return torch.sin, (torch.randn(8, device=device, dtype=dtype),)


def not_a_builder(x):
    return x
"""


def _run(tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [
            sys.executable,
            "-m",
            "dlcprof.cli",
            "run",
            *args,
            "--backend",
            "eager",
            "--no-benchmark",
            "--size",
            "small",
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
        env={**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])},
    )


@pytest.mark.slow
def test_lazy_exports_and_contract_errors_found_in_the_worker(tmp_path) -> None:
    pkg = tmp_path / "mylazy"
    pkg.mkdir()
    (pkg / "__init__.py").write_text(textwrap.dedent(LAZY_INIT))
    (pkg / "impl.py").write_text(textwrap.dedent(LAZY_IMPL))
    ok = _run(tmp_path, "mylazy:build")
    assert ok.returncode == 0, ok.stderr
    for target, needle in (
        ("mylazy:nope", "no function 'nope' in mylazy"),
        ("mylazy:not_a_builder", "not_a_builder(x) in mylazy is not a build function"),
    ):  # a build returning the wrong shape: tests/unit/test_workloads.py (bad_input, so exit 2)
        p = _run(tmp_path, target)
        assert p.returncode == 2, (target, p.stdout, p.stderr)
        (line,) = p.stderr.strip().splitlines()
        assert line.startswith("dlcprof: error: ") and needle in line, p.stderr


def test_cuda_without_a_gpu_is_bad_input(tmp_path) -> None:
    if pytest.importorskip("torch").cuda.is_available():
        pytest.skip("a CUDA device is available here")
    p = _run(tmp_path, "pointwise-chain", "--device", "cuda")
    assert p.returncode == 2, p.stderr
    (line,) = p.stderr.strip().splitlines()
    assert line.startswith("dlcprof: error: --device cuda: no CUDA device available to torch")
