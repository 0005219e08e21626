"""The device plan (scripts/gpu_check.sh, issue 24 #3 and #5): it starts on the
GPU image (its python3, no .venv, torch 2.11), keeps caches out of the results
folder, and checks per-kernel GPU timing."""

from __future__ import annotations

import importlib.util
import os
import re
import shutil
import subprocess
import sys
import types

from helpers.events import run_started
from helpers.paths import REPO

from dlcprof import events as ev
from dlcprof.session import Session

GPU_IMAGE_TORCH = (2, 11)


def test_the_declared_torch_floor_admits_the_gpu_images_torch():
    text = (REPO / "pyproject.toml").read_text()
    (floor,) = re.findall(r'"torch>=(\d+)\.(\d+)"', text)
    assert tuple(int(x) for x in floor) <= GPU_IMAGE_TORCH
    matrix = (REPO / "scripts" / "torch_matrix.sh").read_text()
    assert re.search(r"^\s+versions=\(2\.11\.0 ", matrix, re.M)


def test_the_plan_starts_on_the_images_python3_without_a_venv(tmp_path):
    """A checkout with no .venv, `python3` the one with torch (as on the GPU
    image): the plan finds it, says which torch, and (no GPU here) stops with
    exit 2, leaving nothing but its summary in the results folder."""
    repo = tmp_path / "checkout"
    (repo / "scripts").mkdir(parents=True)
    shutil.copy(REPO / "scripts" / "gpu_check.sh", repo / "scripts")
    os.symlink(REPO / "dlcprof", repo / "dlcprof")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "python3"  # the image's python3: the one that has torch
    shim.write_text(f'#!/bin/sh\nexec "{sys.executable}" "$@"\n')
    shim.chmod(0o755)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if k != "PYTHON"}
    env["PATH"] = f"{bin_dir}:{env['PATH']}"
    env["TMPDIR"] = str(tmp_path)
    r = subprocess.run(
        ["bash", str(repo / "scripts" / "gpu_check.sh"), str(out)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    import torch

    summary = (out / "summary.txt").read_text()
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"python3: python, torch, CUDA, GPU seen: {sys.version.split()[0]} " in summary
    assert torch.__version__ in summary and "sees no CUDA device" in summary
    assert sorted(p.name for p in out.iterdir()) == ["summary.txt"]  # no cache in OUT
    assert not list(tmp_path.glob("dlcprof-gpu-work-*"))  # its work folder went


def _gpu_check() -> types.ModuleType:
    spec = importlib.util.spec_from_file_location("gpu_check", REPO / "scripts" / "gpu_check.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _cuda_run(busy_ms: float, times: list[float | None]) -> object:
    events: list[ev.Event] = [
        run_started(
            device="cuda",
            device_name="NVIDIA H200",
            threads=15,
            iters=1000,
            torch_version="2.11.0+cu130",
        ),
        ev.KernelsProfiled(
            run_id="r",
            method="torch.profiler",
            calls=10,
            wall_s=1.0,
            compiled_ms=0.5,
            call_ms=0.6,
            device_busy_ms=busy_ms,
            kernels=[
                {
                    "compile_id": "0/0",
                    "graph": "inference",
                    "name": f"triton_poi_{i}",
                    "order": i,
                    "time_ms": t,
                    "launches": 1,
                    "why": {} if t else {"time_ms": "its code ran at warm-up only"},
                }
                for i, t in enumerate(times)
            ],
        ),
    ]
    return Session.from_events(events).runs["r"]


def test_the_plan_checks_every_kernel_timed_and_the_device_busy_share():
    kernel_timing = _gpu_check().kernel_timing
    cell, fails = kernel_timing(_cuda_run(0.3, [0.1, 0.2]), "cuda")
    assert cell == "2/2, busy 50%" and not fails
    cell, fails = kernel_timing(_cuda_run(0.9, [0.1, None]), "cuda")
    assert cell == "1/2, busy 150%"
    assert fails == [
        "triton_poi_1: no time (its code ran at warm-up only)",
        "device busy 0.9 ms of a 0.6 ms call",
    ]
