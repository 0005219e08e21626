"""How fast the TUI answers: first frame and key latency during a real compile.

    python benchmarks/tui_latency.py

1. First frame: process start to Textual's first frame (imports included),
   best of 5, with and without the standby worker being spawned.
2. Key latency: key press to its action running, while a real worker compiles
   pointwise-chain (size small, cold cache so the compile lasts).
"""

from __future__ import annotations

import asyncio
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

FIRST_FRAME = """
import sys
from dlcprof.tui.app import DlcprofApp

class Timed(DlcprofApp):
    def on_ready(self) -> None:  # sent once the first frame is on screen
        print("READY", flush=True)
        self.exit()

Timed(start_standby=%s).run(headless=True, size=(160, 48))
assert "torch" not in sys.modules
"""


def first_frame_s(standby: bool, tries: int = 5) -> list[float]:
    out = []
    for _ in range(tries):
        t0 = time.perf_counter()
        proc = subprocess.Popen(
            [sys.executable, "-c", FIRST_FRAME % standby], cwd=ROOT,
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
        )  # fmt: skip
        assert proc.stdout is not None
        line = proc.stdout.readline()
        out.append(time.perf_counter() - t0)
        _, err = proc.communicate(timeout=60)
        if line.strip() != "READY" or proc.returncode != 0:
            raise SystemExit(f"the app did not start: {err[-2000:]}")
    return out


async def key_latency_s(presses: int = 10) -> list[float]:
    from dlcprof.settings import RunSettings
    from dlcprof.tui.app import DlcprofApp

    settings = RunSettings(target="pointwise-chain", size="small", cache="cold", reps=3, iters=5)
    app = DlcprofApp(target="pointwise-chain", settings=settings, deterministic=True)
    handled: list[float] = []
    cycle = app.action_cycle

    def timed_cycle(name: str) -> None:
        handled.append(time.perf_counter())
        cycle(name)

    app.action_cycle = timed_cycle  # type: ignore[method-assign]
    latencies: list[float] = []
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.press("r")
        while app.worker_state()[0] != "compiling":
            await pilot.pause(0.05)
        for _ in range(presses):
            t0 = time.perf_counter()
            await pilot.press("d")
            latencies.append(handled[-1] - t0)
            await pilot.pause(0.2)
        still_compiling = app.worker_state()[0] == "compiling"
        await pilot.press("c")
    print(f"(worker still compiling after the presses: {still_compiling})")
    return latencies


def main() -> int:
    for standby in (False, True):
        times = first_frame_s(standby)
        print(
            f"first frame, standby={standby}: best {1e3 * min(times):.0f} ms, "
            f"median {1e3 * statistics.median(times):.0f} ms"
        )
    lat = asyncio.run(key_latency_s())
    print(
        f"key latency during a real compile: median {1e3 * statistics.median(lat):.1f} ms, "
        f"max {1e3 * max(lat):.1f} ms over {len(lat)} presses"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
