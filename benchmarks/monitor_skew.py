"""Do dlcprof's monitors move the latency it reports? Which one, and why?

    python benchmarks/monitor_skew.py [--quick] [--part diagnose,product,harness]

Three parts, each side by side in one run:

diagnose  One timing process (benchmarks/timing_child.py, no dlcprof inside) per
          workload; between timed blocks the parent attaches one monitor
          configuration to it, UNPAUSED, rotating the order each round:
          off, the device sampler alone (psutil /proc reads, 4 Hz), py-spy as
          dlcprof used to run it (100 Hz, blocking, 1 s windows re-attached),
          the same in one window (no re-attach), py-spy as dlcprof runs it now
          (PySpySampler's defaults: non-blocking), and both monitors as issue 15
          measured them. Per call: wall, on-CPU and stopped ms (timing_child.py).
product   dlcprof's own benchmark through LiveRun as a user gets it (monitors on,
          paused while timing) ÷ LiveRun with no monitors, alternating fresh
          workers: eager and compiled each, goal ≤1.03; and the worker's on-CPU
          plus stopped seconds through the timed window, read from outside
          (moves far less with background load than the latencies).
harness   dlcprof's default speedup ÷ an independent harness's (fresh processes,
          same threads, same allocator setting), on three bundled workloads:
          goal within 10%.

Workloads: the compute-heavy pointwise stack of issue 15
(benchmarks/workloads/heavy_pointwise.py, 2M floats) and pointwise-chain, at
1 thread with glibc's allocator pinned (benchmarks/common.py).
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from common import (  # noqa: E402
    PINNED_ALLOCATOR,
    ROOT,
    load_line,
    machine,
    median,
    ratio_line,
    ratios,
    rotated,
    spread,
)

from dlcprof import events as ev  # noqa: E402
from dlcprof.engine import LiveRun  # noqa: E402
from dlcprof.monitors.device import DeviceSampler  # noqa: E402
from dlcprof.monitors.hotspots import PySpySampler  # noqa: E402
from dlcprof.runner import WorkerProcess  # noqa: E402
from dlcprof.session import Session  # noqa: E402
from dlcprof.settings import RunSettings  # noqa: E402
from dlcprof.workloads import resolve  # noqa: E402

HEAVY = str(ROOT / "benchmarks" / "workloads" / "heavy_pointwise.py")
SKEW_WORKLOADS = {"heavy-pointwise": HEAVY, "pointwise-chain": "pointwise-chain"}
HARNESS_WORKLOADS = ("pointwise-chain", "layernorm-residual", "gelu-mlp")
THREADS = 1
GOAL_LATENCY = 1.03
GOAL_AGREEMENT = 0.10

# --- diagnose: each monitor alone, unpaused, on one timing process ------------------

Monitor = DeviceSampler | PySpySampler
# py-spy as dlcprof ran it when issue 15 was measured: 100 Hz, stopping the worker.
BLOCKING = {"rate_hz": 100, "nonblocking": False}
CONFIGS: dict[str, Callable[[int, Callable], list[Monitor]]] = {
    "off": lambda pid, emit: [],
    "device sampler": lambda pid, emit: [DeviceSampler(pid, emit, cuda_index=None)],
    "py-spy 100 Hz blocking": lambda pid, emit: [PySpySampler(pid, emit, None, **BLOCKING)],
    "py-spy 100 Hz blocking, 1 window": lambda pid, emit: [
        PySpySampler(pid, emit, None, live_interval_s=0, **BLOCKING)
    ],
    "py-spy default (non-blocking)": lambda pid, emit: [PySpySampler(pid, emit, None)],
    "both, blocking (issue 15)": lambda pid, emit: [
        DeviceSampler(pid, emit, cuda_index=None),
        PySpySampler(pid, emit, None, **BLOCKING),
    ],
}


def timing_child(target: str) -> subprocess.Popen[str]:
    """benchmarks/timing_child.py on ``target``, allocator pinned, commands on its stdin."""
    path = target if target.endswith(".py") else str(resolve(target).path)
    return subprocess.Popen(
        [
            sys.executable,
            str(ROOT / "benchmarks" / "timing_child.py"),
            path,
            "--threads",
            str(THREADS),
        ],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
        env={**_env(), "PYTHONWARNINGS": "ignore"},
    )


def diagnose(name: str, target: str, rounds: int, reps: int, iters: int) -> None:
    child = timing_child(target)
    assert child.stdin is not None and child.stdout is not None
    ready = json.loads(child.stdout.readline())
    print(
        f"\n{name}: one timing process, {ready['tasks']} OS threads, {THREADS} torch thread; "
        f"{rounds} rounds × {reps} reps × {iters} calls per configuration"
    )
    # config -> kind -> per round: medians over the reps of (wall, cpu, stopped) ms per call
    results: dict[str, dict[str, list[tuple[float, float, float]]]] = {
        c: {"eager": [], "compiled": []} for c in CONFIGS
    }
    try:
        for rnd in range(rounds):
            for config in rotated(list(CONFIGS), rnd):
                attached: queue.Queue[bool] = queue.Queue()

                def emit(e: ev.Event, attached: queue.Queue[bool] = attached) -> None:
                    if isinstance(e, ev.MonitorStatus):
                        attached.put(e.available)

                monitors = CONFIGS[config](child.pid, emit)
                for m in monitors:
                    m.start()
                for _ in monitors:  # every monitor has said it samples
                    if not attached.get(timeout=60):
                        raise SystemExit(f"{config}: a monitor could not attach")
                child.stdin.write(json.dumps({"cmd": "time", "reps": reps, "iters": iters}) + "\n")
                child.stdin.flush()
                out = json.loads(child.stdout.readline())
                for m in monitors:
                    m.stop()
                for kind in ("eager", "compiled"):
                    keys = ("ms", "cpu_ms", "stopped_ms")
                    row = tuple(median([b[k] for b in out[kind]]) for k in keys)
                    results[config][kind].append(row)
    finally:
        child.stdin.write(json.dumps({"cmd": "quit"}) + "\n")
        child.stdin.close()
        child.wait(30)
    _print_diagnosis(results)


def _print_diagnosis(results: dict[str, dict[str, list[tuple[float, float, float]]]]) -> None:
    """Per configuration and kind: wall ms per call and its ratio to off (moves with
    the load), CPU ms and stopped ms per call (do not), and (cpu + stopped) ÷ off's,
    the latency ratio to expect on an idle machine."""
    print(
        f"  {'configuration':<33} {'':<8} {'wall ms':>8} {'÷ off':>6} {'cpu ms':>8}"
        f" {'stopped':>8} {'(cpu+stopped) ÷ off':>20}"
    )
    off = results["off"]
    for config, kinds in results.items():
        for kind, rows in kinds.items():
            base = off[kind]
            wall = ratios([r[0] for r in rows], [b[0] for b in base])
            quiet = ratios([r[1] + r[2] for r in rows], [b[1] + b[2] for b in base])
            print(
                f"  {config:<33} {kind:<8} {median([r[0] for r in rows]):8.2f} {median(wall):6.3f}"
                f" {median([r[1] for r in rows]):8.2f} {median([r[2] for r in rows]):8.3f}"
                f" {median(quiet):8.3f} ({spread(quiet)})"
            )


# --- product and harness: dlcprof runs in fresh workers ------------------------------


def _env() -> dict[str, str]:
    return {**os.environ, **PINNED_ALLOCATOR}


def _schedstat(pid: int) -> tuple[float, float, float]:
    """(wall, on-CPU, waiting-for-a-CPU) seconds now, of ``pid``'s main thread."""
    with open(f"/proc/{pid}/task/{pid}/schedstat") as f:
        run, wait, _ = f.read().split()
    return time.time(), int(run) / 1e9, int(wait) / 1e9


class WindowWork:
    """The worker's main thread through its timed window, read from outside as the
    events arrive: on-CPU plus stopped seconds (see timing_child.timed_block),
    less the time it waited for the monitors to pause. Unlike the wall time it
    barely moves with the machine's load."""

    def __init__(self, pid: int, inbox: queue.Queue[ev.Event]) -> None:
        self.pid, self.inbox = pid, inbox
        self._start: tuple[ev.TimingStarted, tuple[float, float, float]] | None = None
        self.seconds: float | None = None

    def __call__(self, e: ev.Event) -> None:
        # The benchmark's window only: the kernel profile and the steady-allocator
        # benchmark that follow time other work.
        if isinstance(e, ev.TimingStarted) and e.what == "benchmark":
            self._start = (e, _schedstat(self.pid))
        elif isinstance(e, ev.TimingEnded) and e.what == "benchmark" and self._start:
            started, (t0, r0, w0) = self._start
            t1, r1, w1 = _schedstat(self.pid)
            handshake = max(0.0, e.start_t - started.t)
            stopped = max(0.0, (t1 - t0) - (r1 - r0) - (w1 - w0) - handshake)
            self.seconds = (r1 - r0) + stopped
        self.inbox.put(e)


def dlcprof_run(
    target: str, monitors: bool, reps: int, iters: int
) -> tuple[ev.BenchmarkMeasured, float | None]:
    """One LiveRun in a fresh worker (allocator pinned), as `dlcprof run` starts it:
    its benchmark and its timed window's work (WindowWork)."""
    settings = RunSettings(target=target, threads=THREADS, reps=reps, iters=iters).validate()
    inbox: queue.Queue[ev.Event] = queue.Queue()
    worker = WorkerProcess(env=_env())
    work = WindowWork(worker.pid, inbox)
    live = LiveRun(settings, work, worker=worker, monitors=monitors, profile=monitors)
    live.start()
    session = Session()
    while not isinstance(e := inbox.get(), ev.WorkerExited):
        session.apply(e)
    live.wait(30)
    b = session.runs[live.run_id].benchmark
    if b is None:
        errors = [x.message for x in session.runs[live.run_id].errors]
        raise SystemExit(f"dlcprof run of {target} measured nothing: {errors}")
    return b, work.seconds


def harness_run(target: str, reps: int, iters: int) -> tuple[float, float]:
    """The independent harness in a fresh process: (eager ms, compiled ms), medians."""
    child = timing_child(target)
    out, _ = child.communicate(
        json.dumps({"cmd": "time", "reps": reps, "iters": iters}) + "\n", timeout=900
    )
    lines = out.strip().splitlines()
    r = json.loads(lines[-1])
    return median([b["ms"] for b in r["eager"]]), median([b["ms"] for b in r["compiled"]])


def product(name: str, target: str, pairs: int, reps: int, iters: int) -> None:
    rows: dict[bool, list[ev.BenchmarkMeasured]] = {True: [], False: []}
    work: dict[bool, list[float]] = {True: [], False: []}
    for k in range(pairs):
        for on in (True, False) if k % 2 == 0 else (False, True):
            b, seconds = dlcprof_run(target, on, reps, iters)
            rows[on].append(b)
            work[on].append(seconds if seconds is not None else float("nan"))
    on, off = rows[True], rows[False]
    print(
        f"\n{name}: dlcprof run, monitors on (the default) ÷ off, {pairs} pairs of fresh "
        f"workers, {reps} reps × {iters} calls"
    )
    print(
        f"  off: eager {median([b.eager_ms for b in off]):.2f} ms, compiled "
        f"{median([b.compiled_ms for b in off]):.2f} ms"
    )
    for kind in ("eager_ms", "compiled_ms"):
        r = ratios([getattr(b, kind) for b in on], [getattr(b, kind) for b in off])
        print("  " + ratio_line(f"{kind.removesuffix('_ms')} on ÷ off", r, GOAL_LATENCY))
    # The same question, answered without the load's noise: the worker's on-CPU +
    # stopped seconds through the whole timed window (warm-up, eager and compiled).
    r = ratios(work[True], work[False])
    print("  " + ratio_line("timed window, cpu+stopped on ÷ off", r, GOAL_LATENCY))


def harness(target: str, pairs: int, reps: int, iters: int) -> None:
    ours, theirs = [], []
    for k in range(pairs):
        for mine in (True, False) if k % 2 == 0 else (False, True):
            if mine:
                b, _ = dlcprof_run(target, True, reps, iters)
                ours.append(b.eager_ms / b.compiled_ms)
            else:
                e, c = harness_run(target, reps, iters)
                theirs.append(e / c)
    a, b = median(ours), median(theirs)
    verdict = "met" if abs(a / b - 1) <= GOAL_AGREEMENT else "MISSED"
    print(
        f"  {target:<20} dlcprof {a:5.2f}x  harness {b:5.2f}x  ratio {a / b:5.3f}  "
        f"(dlcprof {min(ours):.2f}–{max(ours):.2f}, harness {min(theirs):.2f}–{max(theirs):.2f})"
        f"  goal within {GOAL_AGREEMENT:.0%}: {verdict}"
    )


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="fewer rounds and pairs: proves it runs")
    ap.add_argument("--part", default="diagnose,product,harness")
    a = ap.parse_args()
    parts = a.part.split(",")
    rounds, pairs = (2, 2) if a.quick else (6, 5)
    reps, iters = (5, 5) if a.quick else (7, 20)
    print(machine())
    print(f"threads={THREADS}, allocator pinned ({', '.join(PINNED_ALLOCATOR)})")
    t0 = time.time()
    for name, target in SKEW_WORKLOADS.items():
        if "diagnose" in parts:
            diagnose(name, target, rounds, reps, iters)
        if "product" in parts:
            product(name, target, pairs, reps, iters)
    if "harness" in parts:
        print(
            f"\ndlcprof's default speedup ÷ an independent harness's, {pairs} pairs of fresh "
            f"processes, {reps} reps × {iters} calls, threads={THREADS}:"
        )
        for target in HARNESS_WORKLOADS:
            harness(target, pairs, reps, iters)
    print(f"\n{time.time() - t0:.0f} s; {load_line()}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
