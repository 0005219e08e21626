"""The speedup twice (glibc's default allocator, then held steady) on real
workers: a workload whose large intermediates fault in eager is allocator
sensitive, a compute-bound one is not."""

from __future__ import annotations

import textwrap

import pytest
from helpers.worker import run_worker

from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import build_report
from dlcprof.session import Session
from dlcprof.settings import RunSettings

COMPUTE_BOUND = '''
"""Matmuls on 128x128 tiles: compute-bound, every output far below glibc's mmap threshold."""
import torch


def mm(x, w):
    for _ in range(4):
        x = torch.relu(x @ w)
    return x


def build(device, dtype):
    torch.manual_seed(0)
    return mm, (torch.randn(128, 128, device=device, dtype=dtype),
                torch.randn(128, 128, device=device, dtype=dtype) / 12)
'''


# Each eager op writes a fresh 48 MiB tensor: above glibc's largest dynamic mmap
# threshold (32 MiB), so with the default allocator every one is mmapped and
# faulted in, and held steady none is; compiled, the chain and its sum are one
# loop with no large buffer. The flag must come out whatever the machine's load.
LARGE_INTERMEDIATES = '''
"""Pointwise ops over a 48 MiB tensor, then a sum."""
import torch


def chain(x):
    for _ in range(4):
        x = x * 1.001 + 0.5
    return x.sum()


def build(device, dtype):
    torch.manual_seed(0)
    return chain, (torch.randn(12 * 1024 * 1024, device=device, dtype=dtype),)
'''


def _run(target: str, iters: int = 20) -> Session:
    r = run_worker(RunSettings(target=target, iters=iters, reps=7, threads=1))
    assert r.returncode == 0, r.stderr
    return Session.from_events(r.events)


@pytest.mark.slow
def test_large_intermediates_fault_in_eager_and_the_workload_is_allocator_sensitive(tmp_path):
    path = tmp_path / "large_intermediates.py"
    path.write_text(textwrap.dedent(LARGE_INTERMEDIATES).lstrip())
    session = _run(str(path), iters=3)
    run = session.latest_run
    a = fa.contrast(run)
    assert a is not None and a.steady is not None, run.unavailable
    assert fb.clearly_more_faults(a.faults.eager, a.faults.compiled), a.faults
    # Held steady, the eager buffers stay mapped: the faults go.
    assert fb.clearly_more_faults(a.faults.eager, a.steady_faults.eager), a
    assert "mallopt" in a.how and a.allocator.endswith("default thresholds")
    assert a.verdict == fa.SENSITIVE, a.sentence
    assert a.steady.speedup < a.default.speedup
    bench = build_report(build_model(session))["runs"][0]["benchmark"]
    assert set(bench["page_faults_per_call"]) == {"eager", "compiled"}
    steady = bench["steady_allocator"]
    assert {"eager_ms", "compiled_ms", "speedup", "how"} <= set(steady)
    # Null when the steady repetitions split into two clusters: no median of a mix.
    one = a.steady.one_speedup
    assert steady["speedup"] == (pytest.approx(one) if one is not None else None)
    assert bench["allocator_sensitive"] is True and bench["steady_allocator_why"] is None


def test_a_compute_bound_workload_is_not_flagged(tmp_path):
    path = tmp_path / "matmuls.py"
    path.write_text(textwrap.dedent(COMPUTE_BOUND).lstrip())
    a = fa.contrast(_run(str(path)).latest_run)
    assert a is not None and a.steady is not None
    assert a.verdict != fa.SENSITIVE, a.sentence
    assert not fb.clearly_more_faults(a.faults.eager, a.steady_faults.eager), a
