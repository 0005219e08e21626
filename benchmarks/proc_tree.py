"""What finding a watched program's processes costs dlcprof, as the host's process
count grows: psutil's ``children(recursive=True)`` (which reads every process on
the host) beside ``dlcprof/proc_tree.descendants`` (the kernel's lists of each
thread's children), on the same tree, alternating.

The watched tree: a Python process with a thread pool and four children, one of
which has two children of its own (a rank with compile workers and a compiler).
The host's other processes: idle ``sleep`` processes started here, so the
count is known. Each sampler of an attached program's process asks four times
a second; eight ranks ask 32 times.

    .venv/bin/python benchmarks/proc_tree.py [--hosts 0,1000,3000] [--calls 50]
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import time

import psutil
from common import load_line, machine, median

from dlcprof import proc_tree

TREE = """
import subprocess, sys, threading, time
threads = [threading.Thread(target=time.sleep, args=(600,), daemon=True) for _ in range(16)]
for t in threads: t.start()
kids = [subprocess.Popen(["sleep", "600"]) for _ in range(3)]
kids.append(subprocess.Popen([sys.executable, "-c",
    "import subprocess; [subprocess.Popen(['sleep', '600']) for _ in range(2)]; "
    "import time; time.sleep(600)"]))
print("ready", flush=True)
time.sleep(600)
"""


def timed_ms(fn, calls: int) -> float:
    """Median ms of one call."""
    times = []
    for _ in range(calls):
        t0 = time.perf_counter()
        fn()
        times.append((time.perf_counter() - t0) * 1e3)
    return median(times)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--hosts", default="0,1000,3000", help="idle processes to add")
    parser.add_argument("--calls", type=int, default=50)
    args = parser.parse_args()
    if not proc_tree.SUPPORTED:
        sys.exit("this kernel lists no /proc/PID/task/TID/children: nothing to compare")
    print(machine())
    root = subprocess.Popen([sys.executable, "-c", TREE], stdout=subprocess.PIPE, text=True)
    idle: list[subprocess.Popen] = []
    try:
        assert root.stdout is not None and root.stdout.readline().strip() == "ready"
        time.sleep(0.5)  # the grandchildren started
        proc = psutil.Process(root.pid)
        want = sorted(p.pid for p in proc.children(recursive=True))
        assert sorted(proc_tree.descendants(root.pid)) == want, "the two disagree"
        print(f"watched tree: {len(want) + 1} processes, {proc.num_threads()} threads at its root")
        print(f"{'host processes':>15} {'psutil ms':>10} {'proc_tree ms':>13} {'ratio':>7}", end="")
        print(f" {'psutil, 32/s':>15} {'proc_tree, 32/s':>18}")
        for extra in (int(x) for x in args.hosts.split(",")):
            while len(idle) < extra:
                idle.append(subprocess.Popen(["sleep", "600"]))
            host = len(psutil.pids())
            fns = {
                "psutil": lambda: proc.children(recursive=True),
                "proc_tree": lambda: proc_tree.descendants(root.pid),
            }
            ms: dict[str, list[float]] = {k: [] for k in fns}
            for order in (("psutil", "proc_tree"), ("proc_tree", "psutil")):
                for k in order:
                    ms[k].append(timed_ms(fns[k], args.calls))
            a, b = median(ms["psutil"]), median(ms["proc_tree"])
            print(
                f"{host:>15,} {a:>10.2f} {b:>13.3f} {a / b:>6.0f}x"
                f" {a * 32 / 1e3:>13.1%} core {b * 32 / 1e3:>15.2%} core"
            )
    finally:
        for p in idle:
            p.kill()
        for p in psutil.Process(root.pid).children(recursive=True):
            p.kill()
        root.kill()
        for p in [*idle, root]:
            p.wait()
    print(load_line())


if __name__ == "__main__":
    main()
