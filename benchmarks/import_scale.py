"""``dlcprof import`` at scale, beside ``tlparse --all-ranks-html`` on the same
folder (issue 31), as benchmarks/RESULTS.md section 12 reports.

    python benchmarks/import_scale.py [--ranks 64 256 1024] [--no-tlparse-above N]

A real 2-rank gloo job's TORCH_TRACE logs (tests/fixtures/torch_trace/
ddp_odd_batch: rank 1 recompiles alone) widened to N ranks by rewriting each
copy's rank and pid (rank 1's log for one rank, rank 0's for the rest), named
as torch names them so tlparse finds every rank. For each N, one run each,
side by side: wall, CPU of the whole process tree, peak RSS of the tree
(summed over its processes, sampled every 20 ms) and MB of log per CPU
second. Then the TUI on the largest imported session beside the 2-rank
job's, alternating: process start to its first frame (the saved folder
replayed, headless, as benchmarks/tui_latency.py times it), and keys on the
Ranks view (press to screen idle, through Textual's pilot).
"""

from __future__ import annotations

import argparse
import asyncio
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
from helpers.torch_trace import rank_logs, trace_logs, widen  # noqa: E402

TLPARSE = Path(sys.executable).parent / "tlparse"
ODD_RANK = 1

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
    proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def row(tool: str, ranks: int, mb: float, m: dict[str, float] | None, out: Path | None) -> str:
    if m is None:
        return f"| {ranks} | {tool} | {mb:.0f} | not run (see below) | | | | |"
    size = f"{folder_bytes(out) / 1e6:.1f} MB" if out is not None and out.exists() else "—"
    return (
        f"| {ranks} | {tool} | {mb:.0f} | {m['wall']:.2f} | {m['cpu']:.2f} | "
        f"{m['rss'] / 1e6:.0f} | {mb / m['cpu']:.1f} | {size} |"
    )


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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--ranks", type=int, nargs="+", default=[64, 256, 1024])
    parser.add_argument("--tlparse-timeout", type=float, default=600.0)
    parser.add_argument("--keep", type=Path, default=None, help="keep the largest import here")
    args = parser.parse_args()
    print(machine())
    work = Path(tempfile.mkdtemp(prefix="dlcprof-import-scale-"))
    try:
        logs = rank_logs(trace_logs("ddp_odd_batch", work / "recorded"))
        print("| ranks | tool | MB of logs | wall s | CPU s | peak RSS MB | MB/CPU s | output |")
        print("|---:|---|---:|---:|---:|---:|---:|---:|")
        last = None
        for n in args.ranks:
            wide = widen(logs, work / f"wide-{n}", n, {ODD_RANK: 1})
            mb = folder_bytes(wide) / 1e6
            out = work / f"import-{n}"
            dl = measured(
                [sys.executable, "-m", "dlcprof.cli", "import", str(wide), "-o", str(out)], 1800
            )
            print(row("dlcprof import", n, mb, dl, out), flush=True)
            tl_out = work / f"tlparse-{n}"
            tl = measured(
                [str(TLPARSE), "--all-ranks-html", str(wide), "-o", str(tl_out), "--overwrite"],
                args.tlparse_timeout,
            )
            print(row("tlparse --all-ranks-html", n, mb, tl, tl_out), flush=True)
            if tl is None:
                print(f"  tlparse at {n} ranks: stopped after {args.tlparse_timeout:.0f} s")
            shutil.rmtree(tl_out, ignore_errors=True)
            shutil.rmtree(wide, ignore_errors=True)
            last = out
        assert last is not None
        # The TUI on the largest session beside the recorded 2-rank job's,
        # alternating, so the machine's load weighs on both alike.
        small = work / "import-2"
        subprocess.run(
            [
                sys.executable,
                "-m",
                "dlcprof.cli",
                "import",
                str(work / "recorded"),
                "-o",
                str(small),
            ],
            check=True,
            stdout=subprocess.DEVNULL,
        )
        big = str(args.ranks[-1])
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
        print(
            f"first frame, {big} ranks ÷ 2 ranks: {median(frames[big]) / median(frames['2']):.2f}"
        )
        if args.keep is not None:
            shutil.copytree(last, args.keep, dirs_exist_ok=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(load_line())
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
