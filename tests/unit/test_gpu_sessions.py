"""Sessions recorded on an H200 (tests/fixtures/gpu_sessions): saved again by
this dlcprof, they pass the checks scripts/gpu_check.py made on the device,
and their figures read as they did there."""

from __future__ import annotations

import subprocess
import sys

import pytest
from helpers.paths import FIXTURES, REPO

from dlcprof.figures import kernels as fk
from dlcprof.report.folder import save_session
from dlcprof.report.load import load_session

SESSIONS = FIXTURES / "gpu_sessions"


def test_recorded_gpu_sessions_pass_the_device_checks(tmp_path):
    for name in ("gelu-mlp", "pointwise-chain"):
        save_session(load_session(SESSIONS / f"{name}.json"), tmp_path / name)
    folders = [str(tmp_path / "gelu-mlp"), str(tmp_path / "pointwise-chain")]
    done = subprocess.run(
        [sys.executable, str(REPO / "scripts" / "gpu_check.py"), *folders, "--gemm", "gelu-mlp"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-2000:]
    assert "gpu_check: ok" in done.stdout


@pytest.mark.parametrize("name", ["gelu-mlp", "pointwise-chain"])
def test_every_kernel_of_the_default_mode_has_its_device_time(name):
    session = load_session(SESSIONS / f"{name}.json")
    (run,) = (r for r in session.runs.values() if r.settings and r.settings.mode == "default")
    timings = fk.kernel_timings(run)
    assert timings and all(t.time_ms for t in timings.values())
    summary = fk.profile_summary(run)
    assert summary is not None and summary.device_busy is not None
    assert 0 < summary.device_busy <= 1.1
