"""``dlcprof import`` at scale, beside ``tlparse --all-ranks-html`` and the
floor on the same folder (issues 31 and 42), as benchmarks/RESULTS.md
sections 12 and 22 report.

    nice -n 5 python benchmarks/import_scale.py [--ranks 256 1024 4096] [--no-tui]

First tlparse's own multi-rank inputs (its ``tests/inputs/multi_rank_*``,
kept in tests/fixtures/tlparse: real jobs' logs, 0.5 to 11 MB), each folder
as it is. Then a real 2-rank gloo job's TORCH_TRACE logs (tests/fixtures/torch_trace/
ddp_odd_batch) widened to N ranks as ``tests/helpers/torch_trace.py``'s
``one_rank_apart`` widens them: every rank recompiles frames 0 and 4 on a
failed id guard but one, and each copy has its own rank, pid and object
addresses, as real processes do (not copies of one log); named as torch
names them so tlparse finds every rank. For each N, one run each, side by
side: ``dlcprof import``, ``tlparse --all-ranks-html``, and the floor (a
plain parse of every record's JSON header and every JSON payload of the same
files, in one process per core: ``--floor DIR``); wall, CPU of the whole
process tree, peak RSS of the tree (summed over its processes, sampled every
20 ms) and MB of log per CPU second, then the ratios. Then (unless
``--no-tui``) the TUI on the largest imported session beside the 2-rank
job's, alternating: process start to its first frame (the saved folder
replayed, headless, as benchmarks/tui_latency.py times it), and keys on the
Ranks view (press to screen idle, through Textual's pilot). Every process
runs as an installed one does, its bytecode cached (this sandbox's
``PYTHONDONTWRITEBYTECODE`` would have each compile its sources again).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from common import ROOT, load_line, machine, median  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from helpers.torch_trace import apart_rank, one_rank_apart  # noqa: E402

TLPARSE = Path(sys.executable).parent / "tlparse"
CORPUS = ROOT / "tests" / "fixtures" / "tlparse"
# As an installed copy runs: its bytecode cached, not compiled again each process.
ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}

FIRST_FRAME = """
import sys
from pathlib import Path
from dlcprof.report.load import load_session
from dlcprof.tui.app import DlcprofApp

class Timed(DlcprofApp):
    def on_ready(self) -> None:  # sent once the first frame is on screen
        print("READY", flush=True)
        self.exit()

Timed(session=load_session(Path(sys.argv[1])), replay=True, start_standby=False).run(
    headless=True, size=(160, 48)
)
"""


def _tree(root: int) -> list[int]:
    children: dict[int, list[int]] = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            try:
                ppid = int(Path(f"/proc/{d}/stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, IndexError, ValueError):
                continue
            children.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        pid = todo.pop()
        out.append(pid)
        todo += children.get(pid, [])
    return out


def _rss(pid: int) -> int:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def measured(argv: list[str], timeout: float) -> dict[str, float] | None:
    """Wall, tree CPU and peak tree RSS of one command; None past ``timeout``."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, env=ENV)
    peak = 0
    while proc.poll() is None:
        if time.perf_counter() - start > timeout:
            for pid in reversed(_tree(proc.pid)):
                try:
                    os.kill(pid, 9)
                except OSError:
                    pass
            proc.wait()
            return None
        peak = max(peak, sum(_rss(p) for p in _tree(proc.pid)))
        time.sleep(0.02)
    wall = time.perf_counter() - start
    if proc.returncode != 0:
        raise SystemExit(f"{argv[:3]} failed: {proc.stderr.read().decode()[-500:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    return {"wall": wall, "cpu": cpu, "rss": peak}


def _parsed(path: str) -> int:
    """Every record of one log parsed as plainly as it can be: its header's JSON
    (after the glog prefix's "] ") and its payload's, where the payload is JSON.
    The records read."""
    records = 0
    payload: list[str] = []

    def payload_done() -> None:
        if payload and payload[0][:1] in "{[":
            try:
                json.loads("".join(payload))
            except ValueError:
                pass
        payload.clear()

    with open(path, encoding="utf-8", errors="replace") as f:
        for line in f:
            if line.startswith("\t"):
                payload.append(line[1:])
                continue
            payload_done()
            head = line.find("] ")
            if head >= 0:
                try:
                    json.loads(line[head + 2 :])
                    records += 1
                except ValueError:
                    pass
    payload_done()
    return records


def floor(folder: Path) -> int:
    """The floor: every log of ``folder`` parsed by ``_parsed``, one process per core."""
    from concurrent.futures import ProcessPoolExecutor

    logs = sorted(str(p) for p in folder.iterdir() if p.is_file())
    workers = os.cpu_count() or 1
    with ProcessPoolExecutor(max_workers=workers) as pool:
        return sum(pool.map(_parsed, logs, chunksize=max(1, len(logs) // (workers * 4))))


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def row(tool: str, logs: str, mb: float, m: dict[str, float] | None, out: Path | None) -> str:
    if m is None:
        return f"| {logs} | {tool} | {mb:.1f} | not run (see below) | | | | |"
    size = f"{folder_bytes(out) / 1e6:.1f} MB" if out is not None and out.exists() else "—"
    return (
        f"| {logs} | {tool} | {mb:.1f} | {m['wall']:.2f} | {m['cpu']:.2f} | "
        f"{m['rss'] / 1e6:.0f} | {mb / m['cpu']:.1f} | {size} |"
    )


def side_by_side(logs: str, folder: Path, work: Path, tl_timeout: float, said: list[str]) -> Path:
    """One run each of ``dlcprof import``, tlparse and the floor on ``folder``:
    their rows printed, their ratios added to ``said``; the import's folder."""
    mb = folder_bytes(folder) / 1e6
    out = work / f"import-{logs}"
    dl = measured(
        [sys.executable, "-m", "dlcprof.cli", "import", str(folder), "-o", str(out)], 1800
    )
    print(row("dlcprof import", logs, mb, dl, out), flush=True)
    tl_out = work / f"tlparse-{logs}"
    tl = measured(
        [str(TLPARSE), "--all-ranks-html", str(folder), "-o", str(tl_out), "--overwrite"],
        tl_timeout,
    )
    print(row("tlparse --all-ranks-html", logs, mb, tl, tl_out), flush=True)
    if tl is None:
        said.append(f"tlparse on {logs}: stopped after {tl_timeout:.0f} s")
    shutil.rmtree(tl_out, ignore_errors=True)
    fl = measured([sys.executable, __file__, "--floor", str(folder)], 1800)
    print(row("floor (JSON of every record)", logs, mb, fl, None), flush=True)
    said.append(
        f"{logs}: dlcprof CPU / floor CPU {ratio(dl, fl, 'cpu')}, wall / floor wall "
        f"{ratio(dl, fl, 'wall')}; dlcprof wall / tlparse wall {ratio(dl, tl, 'wall')}, "
        f"CPU / tlparse CPU {ratio(dl, tl, 'cpu')}"
    )
    return out


async def keys(folder: Path) -> tuple[float, list[float]]:
    """Seconds to open the Ranks view (R), and each of five rank steps (])."""
    from dlcprof.report.load import load_session
    from dlcprof.tui.app import DlcprofApp

    app = DlcprofApp(session=load_session(folder), replay=True, start_standby=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        t = time.perf_counter()
        await pilot.press("R")
        await pilot.pause()
        ranks_s = time.perf_counter() - t
        steps = []
        for _ in range(5):
            t = time.perf_counter()
            await pilot.press("right_square_bracket")
            await pilot.pause()
            steps.append(time.perf_counter() - t)
    return ranks_s, steps


def first_frame(folder: Path) -> float:
    t = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", FIRST_FRAME, str(folder)],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    assert proc.stdout is not None
    for line in proc.stdout:
        if line.strip() == "READY":
            break
    wall = time.perf_counter() - t
    proc.wait(timeout=60)
    return wall


def ratio(a: dict[str, float] | None, b: dict[str, float] | None, key: str) -> str:
    return f"{a[key] / b[key]:.2f}" if a and b else "n/a (not measured)"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[256, 1024, 4096])
    parser.add_argument("--tlparse-timeout", type=float, default=1200.0)
    parser.add_argument("--no-tui", action="store_true", help="leave out the TUI's timings")
    parser.add_argument("--keep", type=Path, default=None, help="keep the largest import here")
    parser.add_argument("--floor", type=Path, default=None, help=argparse.SUPPRESS)
    parser.add_argument("--no-corpus", action="store_true", help="leave out tlparse's inputs")
    args = parser.parse_args()
    if args.floor is not None:  # the floor's own process, measured by the parent
        print(floor(args.floor))
        return 0
    print(machine())
    work = Path(tempfile.mkdtemp(prefix="dlcprof-import-scale-"))
    try:
        # Untimed: each tool's first process caches its bytecode.
        warm = one_rank_apart(work / "warm", 2, 1)
        for argv in (
            [sys.executable, "-m", "dlcprof.cli", "import", str(warm), "-o", str(work / "w")],
            [sys.executable, __file__, "--floor", str(warm)],
        ):
            subprocess.run(argv, env=ENV, check=True, stdout=subprocess.DEVNULL)
        print("| logs | tool | MB of logs | wall s | CPU s | peak RSS MB | MB/CPU s | output |")
        print("|---|---|---:|---:|---:|---:|---:|---:|")
        last, said = None, []
        corpus = [] if args.no_corpus else sorted(CORPUS.glob("multi_rank_*"))
        for folder in corpus:
            side_by_side(folder.name, folder, work, args.tlparse_timeout, said)
        for n in args.ranks:
            wide = one_rank_apart(work / f"job-{n}", n, apart_rank(n))
            last = side_by_side(f"{n} ranks", wide, work, args.tlparse_timeout, said)
            shutil.rmtree(work / f"job-{n}", ignore_errors=True)
        print("\n".join(said))
        assert last is not None
        if not args.no_tui:
            tui(work, last, str(args.ranks[-1]))
        if args.keep is not None:
            shutil.copytree(last, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(load_line())
    return 0


def tui(work: Path, last: Path, big: str) -> None:
    """The TUI on the largest session beside the recorded 2-rank job's,
    alternating, so the machine's load weighs on both alike."""
    from helpers.torch_trace import trace_logs

    small = work / "import-2 ranks"
    recorded = trace_logs("ddp_odd_batch", work / "recorded")
    subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "import", str(recorded), "-o", str(small)],
        check=True,
        stdout=subprocess.DEVNULL,
    )
    frames: dict[str, list[float]] = {"2": [], big: []}
    for _ in range(3):
        frames["2"].append(first_frame(small))
        frames[big].append(first_frame(last))
    for n, folder in (("2", small), (big, last)):
        fs = sorted(frames[n])
        ranks_s, steps = asyncio.run(keys(folder))
        print(
            f"TUI, {n}-rank session: first frame {median(fs):.2f} s "
            f"({', '.join(f'{f:.2f}' for f in fs)}); Ranks view (R) {ranks_s * 1000:.0f} ms; "
            f"] x5 {', '.join(f'{s * 1000:.0f}' for s in steps)} ms"
        )
    print(f"first frame, {big} ranks ÷ 2 ranks: {median(frames[big]) / median(frames['2']):.2f}")


if __name__ == "__main__":
    raise SystemExit(main())
