"""An attached program's wall under the TUI ÷ under `dlcprof run` (headless)
÷ bare (issue 29 item 12: the TUI is held to the same ≤1.05 as headless).

    .venv/bin/python benchmarks/tui_overhead.py [--rounds N] [--steps N]

The program, tests/programs/steady_train.py (a compile, then a few seconds of
training steps), runs three ways on one Inductor cache warmed by an untimed
bare run: bare; `dlcprof run --quiet -- PROGRAM`; `dlcprof -- PROGRAM`, the
TUI, in a real terminal (a tmux session of 160×48, as a user's). Order rotated
by round. Each run is timed by the program's own clock (this file run as the
program's wrapper: from its first line to the program's return, so Python's
start and dlcprof's own start and exit are left out: the TUI stays open after
the program ends, until it is quit), and its CPU seconds read the same way
(the program's own process, children included). Beside them, the CPU seconds
dlcprof's side spent while the program ran (the dlcprof process and its
monitors, the program's own process tree left out), read the moment the
program wrote its clock.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import resource
import runpy
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

PROGRAM = Path(__file__).resolve().parent.parent / "tests" / "programs" / "steady_train.py"
VARIANTS = ("bare", "headless", "tui")
WALL_FILE = "DLCPROF_BENCH_WALL_FILE"


def as_wrapper() -> None:
    """The program, run in this process, its wall and CPU written to a file."""
    t0, c0 = time.perf_counter(), time.process_time()
    sys.argv = [str(PROGRAM), *sys.argv[2:]]
    runpy.run_path(str(PROGRAM), run_name="__main__")
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = time.process_time() - c0 + kids.ru_utime + kids.ru_stime
    Path(os.environ[WALL_FILE]).write_text(f"{time.perf_counter() - t0} {cpu} {os.getpid()}")


def _wait_for(path: Path, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while not path.exists() or not path.read_text():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{path} was not written in {timeout_s:.0f} s")
        time.sleep(0.05)


def _observer_cpu(pid: int, program: int) -> float:
    """CPU seconds of process ``pid`` and its descendants, ``program``'s tree left out."""
    import psutil

    root = psutil.Process(pid)
    skip = {program} | {p.pid for p in psutil.Process(program).children(recursive=True)}
    total = 0.0
    for p in [root, *root.children(recursive=True)]:
        if p.pid not in skip:
            with contextlib.suppress(psutil.Error):
                t = p.cpu_times()
                total += t.user + t.system
    return total


def run(variant: str, env: dict[str, str], tmp: Path) -> tuple[float, float, float]:
    """(the program's wall, its CPU, dlcprof's CPU meanwhile) for one run."""
    out = tmp / f"{variant}.wall"
    out.unlink(missing_ok=True)
    env = {**env, WALL_FILE: str(out)}
    program = [sys.executable, str(Path(__file__).resolve()), "--as-program"]
    dlcprof = [sys.executable, "-m", "dlcprof.cli"]
    quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
    observer = 0.0
    if variant == "bare":
        subprocess.run(program, env=env, check=True, **quiet)
    elif variant == "headless":
        argv = [*dlcprof, "run", "--quiet", "--json", str(tmp / "h.json"), "--", *program]
        proc = subprocess.Popen(argv, env=env, **quiet)
        _wait_for(out, 600)
        observer = _observer_cpu(proc.pid, int(out.read_text().split()[2]))
        proc.wait(timeout=600)
    else:
        # A tmux server of its own, started with this environment, ended after.
        tmux = ["tmux", "-L", f"dlcprof-bench-{os.getpid()}"]
        size = ["new-session", "-d", "-x", "160", "-y", "48"]
        subprocess.run([*tmux, *size, shlex.join([*dlcprof, "--", *program])], env=env, check=True)
        try:
            pane = subprocess.run(
                [*tmux, "list-panes", "-F", "#{pane_pid}"], capture_output=True, text=True
            )
            _wait_for(out, 600)
            observer = _observer_cpu(int(pane.stdout.split()[0]), int(out.read_text().split()[2]))
        finally:
            subprocess.run([*tmux, "kill-server"], check=False)
    wall, cpu, _ = out.read_text().split()
    return float(wall), float(cpu), observer


def main() -> None:
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from common import ROOT, load_line, machine, median, ratio_line, ratios, rotated, spread

    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    if shutil.which("tmux") is None:
        sys.exit("tui_overhead: needs tmux (the TUI runs in a real terminal)")
    print(machine())
    walls: dict[str, list[float]] = {v: [] for v in VARIANTS}
    cpus: dict[str, list[float]] = {v: [] for v in VARIANTS}
    observers: dict[str, list[float]] = {v: [] for v in VARIANTS}
    with tempfile.TemporaryDirectory(prefix="dtui") as name:
        tmp = Path(name)
        env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
        env["TORCHINDUCTOR_CACHE_DIR"] = str(tmp / "cache")
        run("bare", env, tmp)  # warms the cache: every timed run hits it
        for rnd in range(args.rounds):
            for variant in rotated(VARIANTS, rnd):
                wall, cpu, observer = run(variant, env, tmp)
                walls[variant].append(wall)
                cpus[variant].append(cpu)
                observers[variant].append(observer)
            said = ", ".join(f"{v} {walls[v][-1]:.2f} s" for v in VARIANTS)
            print(f"round {rnd + 1}: {said}", flush=True)
    print(f"{PROGRAM.name}, {args.rounds} rounds, one warm cache, the program's own clock")
    for v in VARIANTS:
        print(f"  {v:<9} wall {median(walls[v]):.2f} s ({spread(walls[v])}),", end=" ")
        print(f"CPU {median(cpus[v]):.2f} s ({spread(cpus[v])}),", end=" ")
        print(f"dlcprof's CPU meanwhile {median(observers[v]):.2f} s ({spread(observers[v])})")
    for v in VARIANTS[1:]:
        cores = [o / w for o, w in zip(observers[v], walls[v], strict=True)]
        print(
            f"  dlcprof's cores while the program ran, {v}: {median(cores):.3f} ({spread(cores)})"
        )
    for num, den, goal in (("tui", "headless", 1.05), ("headless", "bare", 1.05)):
        for what, xs in (("wall", walls), ("CPU", cpus)):
            line = ratio_line(f"{num} ÷ {den}, {what}", ratios(xs[num], xs[den]), goal=goal)
            print("  " + line)
    print(load_line())


if __name__ == "__main__":
    if sys.argv[1:2] == ["--as-program"]:
        as_wrapper()
    else:
        main()
