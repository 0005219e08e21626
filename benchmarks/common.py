"""What every benchmark here shares: the machine line, the allocator setting,
alternating order, and medians with their spread.

Each script measures its variants side by side in one run, alternating
(rotated each repetition, so a drift in background load hits every variant
alike), and prints ratios to a baseline with the spread of the ratio.
"""

from __future__ import annotations

import os
import platform
import random
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

# glibc's allocator pinned (docs/torch-notes.md §7): without it eager latency is
# bimodal across processes, which would swamp a few-percent difference.
PINNED_ALLOCATOR = {
    "MALLOC_MMAP_THRESHOLD_": "1073741824",
    "MALLOC_TRIM_THRESHOLD_": "1073741824",
}


def rotated(variants: Sequence[str], rep: int) -> list[str]:
    k = rep % len(variants)
    return [*variants[k:], *variants[:k]]


def median(xs: Sequence[float]) -> float:
    return statistics.median(xs) if xs else float("nan")


def spread(xs: Sequence[float]) -> str:
    """'min–max' of a sample (all of it: with 5 pairs a quartile is one point)."""
    return f"{min(xs):.3f}–{max(xs):.3f}" if xs else "n/a"


def median_ci(xs: Sequence[float], level: float = 0.95, draws: int = 10_000) -> tuple[float, float]:
    """A bootstrap confidence interval of the median (percentile method, fixed
    seed): how far the median of pairs this noisy could be from the truth."""
    rng = random.Random(0)
    meds = sorted(statistics.median(rng.choices(xs, k=len(xs))) for _ in range(draws))
    tail = (1 - level) / 2
    return meds[int(tail * draws)], meds[min(draws - 1, int((1 - tail) * draws))]


def ratios(num: Sequence[float], den: Sequence[float]) -> list[float]:
    """Per-pair ratios of two series measured side by side."""
    return [a / b for a, b in zip(num, den, strict=True)]


def ratio_line(name: str, ratios: Sequence[float], goal: float | None = None) -> str:
    """'name  1.012 (0.98–1.04, 5 pairs; median 0.99–1.03)  no measurable
    difference  goal ≤1.03: met' for per-pair ratios: the spread of the pairs,
    the median's bootstrap interval, and "no measurable difference" where
    that interval holds 1."""
    med = median(ratios)
    lo, hi = median_ci(ratios)
    line = (
        f"{name:<34} {med:6.3f}  ({spread(ratios)}, {len(ratios)} pairs; median {lo:.3f}–{hi:.3f})"
    )
    if lo <= 1.0 <= hi:
        line += "  no measurable difference"
    if goal is not None:
        if max(ratios) <= goal:
            verdict = "met"
        elif med <= goal:
            verdict = "met by the median, not by every pair"
        else:
            verdict = f"MISSED by {med / goal - 1:+.1%}"
        line += f"  goal ≤{goal:.2f}: {verdict}"
    return line


def timed(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the whole process tree, dlcprof's included)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(
        argv,
        env=env,
        check=True,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        timeout=1800,
    )
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime


def load_avg() -> str:
    try:
        return " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "n/a"


def load_line() -> str:
    return f"load average at the end: {load_avg()}"


def machine() -> str:
    """One line: the machine, torch, py-spy, and the load right now."""
    try:
        torch = (
            subprocess.run(
                [sys.executable, "-c", "import torch; print(torch.__version__)"],
                capture_output=True,
                text=True,
                timeout=120,
                check=False,
            ).stdout.strip()
            or "n/a"
        )
    except (OSError, subprocess.SubprocessError):
        torch = "n/a"
    from dlcprof.monitors.pyspy import pyspy_status
    from dlcprof.worker.run import cpu_name  # imports no torch at module level

    ok, pyspy = pyspy_status()
    pyspy = pyspy.split(" (")[0] if ok else "py-spy n/a"
    return (
        f"machine: {cpu_name()}, {os.cpu_count()} cores · Python {platform.python_version()} · "
        f"torch {torch} · {pyspy} · load average {load_avg()}"
    )


def headless_run(settings, worker=None):  # type: ignore[no-untyped-def]
    """One run to its end in a fresh worker with no monitors: its folded Run."""
    from dlcprof.engine import run_headless
    from dlcprof.session import Session

    session = Session()
    run_id = run_headless(settings.validate(), session.apply, worker=worker, monitors=False)
    return session.run(run_id or "")
