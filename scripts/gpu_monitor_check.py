"""Check the device monitors on a real NVIDIA GPU (runs in under 5 minutes).

Starts a child that torch.compiles a small transformer block on CUDA for a
few sequence lengths (fresh Inductor cache: every compile is real, Triton
included), then benchmarks each compiled shape for a few seconds. The parent
(this process, no torch) samples the child with DeviceSampler via NVML and
PySpySampler, prints utilization during compile vs benchmark, and asserts:

- NVML is available and gpu_util_pct / mem_used_mb are non-None in samples;
- the device memory rose once the child ran (and the benchmark used the GPU);
- py-spy sampled the child (hot frames arrived), when py-spy is there
  (without it, or with --no-pyspy, that check is skipped and said so).

The child is killed (its whole process group) --timeout seconds after it
started, whether or not it prints; its stderr goes to a file (a pipe nobody
reads could fill and stall it). Exits 2 with a clear message when there is no
GPU, 1 when a check fails.

Usage: python scripts/gpu_monitor_check.py [--seqs 128,256,512] [--bench-s 3]
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from dlcprof.events import DeviceSampled, Event, HotFramesSampled, MonitorStatus  # noqa: E402
from dlcprof.figures.device import summarize  # noqa: E402
from dlcprof.monitors import nvml  # noqa: E402
from dlcprof.monitors.device import DeviceSampler  # noqa: E402
from dlcprof.monitors.hotspots import PySpySampler  # noqa: E402
from dlcprof.monitors.pyspy import pyspy_status  # noqa: E402

CHILD = r"""
import json, sys, time
import torch
import torch.nn.functional as F

def say(**kw):
    print(json.dumps(kw), flush=True)

if not torch.cuda.is_available():
    say(event="error", message="torch sees no CUDA device (CPU-only build or no GPU)")
    sys.exit(3)
dev = torch.device("cuda", 0)
say(event="ready", device=torch.cuda.get_device_name(0), torch=torch.__version__)

class Block(torch.nn.Module):
    def __init__(self, d=1024, heads=16, ff=4096):
        super().__init__()
        self.heads = heads
        self.ln1, self.ln2 = torch.nn.LayerNorm(d), torch.nn.LayerNorm(d)
        self.qkv, self.proj = torch.nn.Linear(d, 3 * d), torch.nn.Linear(d, d)
        self.up, self.down = torch.nn.Linear(d, ff), torch.nn.Linear(ff, d)

    def forward(self, x):
        b, s, d = x.shape
        q, k, v = self.qkv(self.ln1(x)).view(b, s, 3, self.heads, d // self.heads).unbind(2)
        a = F.scaled_dot_product_attention(
            q.transpose(1, 2), k.transpose(1, 2), v.transpose(1, 2), is_causal=True
        )
        x = x + self.proj(a.transpose(1, 2).reshape(b, s, d))
        return x + self.down(F.gelu(self.up(self.ln2(x))))

model = torch.nn.Sequential(*[Block() for _ in range(4)]).to(dev, torch.bfloat16).eval()
cm = torch.compile(model, dynamic=False)
seqs = [int(s) for s in sys.argv[1].split(",")]
bench_s = float(sys.argv[2])
with torch.inference_mode():
    for s in seqs:
        x = torch.randn(16, s, 1024, device=dev, dtype=torch.bfloat16)
        t = time.time()
        cm(x)
        torch.cuda.synchronize()
        say(event="phase", name="compile", seq=s, start=t, end=time.time())
        t = time.time()
        n = 0
        while time.time() - t < bench_s:
            for _ in range(10):
                cm(x)
            torch.cuda.synchronize()
            n += 10
        say(event="phase", name="benchmark", seq=s, start=t, end=time.time(), iters=n,
            ms=(time.time() - t) / n * 1e3, max_mem_mb=torch.cuda.max_memory_allocated() / 2**20)
"""

SHOW = [
    "gpu_util_pct",
    "mem_util_pct",
    "mem_used_mb",
    "proc_mem_mb",
    "proc_util_pct",
    "power_w",
    "temp_c",
    "sm_clock_mhz",
    "worker_cpu_pct",
    "cxx_compilers",
    "children_cpu_pct",
]


def run_child(
    argv: list[str],
    env: dict[str, str],
    err_path: Path,
    timeout_s: float,
    on_start: Callable[[int], None],
    on_line: Callable[[str], None],
) -> int | None:
    """Run ``argv`` in a process group of its own, each stdout line to ``on_line``,
    stderr to ``err_path``; its exit code, or None when ``timeout_s`` passed
    (then the whole group is killed, whether or not the child printed)."""
    with open(err_path, "w") as err:
        child = subprocess.Popen(
            argv, stdout=subprocess.PIPE, stderr=err, text=True, env=env, start_new_session=True
        )
    fired = threading.Event()

    def kill() -> None:
        fired.set()
        try:
            os.killpg(child.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass

    watchdog = threading.Timer(timeout_s, kill)
    watchdog.start()
    try:
        on_start(child.pid)
        assert child.stdout is not None
        for line in child.stdout:
            on_line(line)
        child.wait()
    finally:
        watchdog.cancel()
        if child.poll() is None:
            kill()
            child.wait()
    return None if fired.is_set() else child.returncode


def fmt(v: float | None) -> str:
    return "n/a" if v is None else f"{v:.1f}"


def main() -> int:
    ap = argparse.ArgumentParser(description="device monitor check on an NVIDIA GPU")
    ap.add_argument("--seqs", default="128,256,512")
    ap.add_argument("--bench-s", type=float, default=3.0)
    ap.add_argument("--timeout", type=float, default=270.0)
    ap.add_argument("--no-pyspy", action="store_true")
    args = ap.parse_args()
    console = Console()

    reason = nvml.init()
    if reason is not None:
        console.print(f"[red]no GPU to check: {reason}[/red] (run this on an NVIDIA GPU machine)")
        return 2
    nvml.shutdown()

    work = Path(tempfile.mkdtemp(prefix="dlcprof-gpu-check-"))
    env = dict(os.environ, TORCHINDUCTOR_CACHE_DIR=str(work / "inductor"), PYTHONUNBUFFERED="1")
    env["TRITON_CACHE_DIR"] = str(work / "triton")  # cold Triton too: real kernel compiles
    events: list[Event] = []
    lock = threading.Lock()

    def emit(e: Event) -> None:
        with lock:
            events.append(e)

    t0 = time.time()
    device: DeviceSampler | None = None
    spy: PySpySampler | None = None
    use_pyspy, pyspy_line = (False, "--no-pyspy") if args.no_pyspy else pyspy_status()
    if not use_pyspy:
        console.print(f"[yellow]note: no py-spy check ({pyspy_line})[/yellow]")
    lines: list[dict] = []

    def start(pid: int) -> None:
        nonlocal device, spy
        device = DeviceSampler(pid, emit, interval_s=0.1, cuda_index=0)
        device.start()
        if use_pyspy:
            spy = PySpySampler(pid, emit, work / "profile.speedscope.json")
            spy.start()

    def line(text: str) -> None:
        if text.startswith("{"):
            msg = json.loads(text)
            lines.append(msg)
            console.print(f"[dim]{time.time() - t0:6.1f}s child:[/dim] {msg}")

    err_path = work / "child.err"
    try:
        code = run_child(
            [sys.executable, "-c", CHILD, args.seqs, str(args.bench_s)],
            env,
            err_path,
            args.timeout,
            start,
            line,
        )
    finally:
        if device is not None:
            device.stop()
        if spy is not None:
            spy.stop()
    if code is None:
        console.print(f"[red]child did not finish within {args.timeout:.0f} s[/red]")
        return 1
    if code != 0:
        err = next((m["message"] for m in lines if m.get("event") == "error"), None)
        stderr = err_path.read_text(errors="replace").strip().splitlines()
        tail = err or (stderr or ["?"])[-1]
        console.print(f"[red]the compile child failed ({code}): {tail}[/red]")
        return 2 if code == 3 else 1

    statuses = [e for e in events if isinstance(e, MonitorStatus)]
    samples = [e for e in events if isinstance(e, DeviceSampled)]
    hot = [e for e in events if isinstance(e, HotFramesSampled)]
    phases = [m for m in lines if m.get("event") == "phase"]
    spans = [(m["name"], m["start"], m["end"]) for m in phases]
    summary = summarize(samples, spans)

    for s in statuses:
        console.print(f"status {s.monitor}: available={s.available} {s.message}")
    table = Table(title=f"{len(samples)} NVML samples, compile vs benchmark")
    table.add_column("value", no_wrap=True)
    for span in summary:
        n = int(summary[span]["samples"] or 0)
        table.add_column(f"{span} mean ({n})", justify="right")
        table.add_column(f"{span} max", justify="right")
    for key in SHOW:
        row = [key]
        for span in summary:
            row += [fmt(summary[span].get(f"{key}.mean")), fmt(summary[span].get(f"{key}.max"))]
        table.add_row(*row)
    console.print(table)
    for m in phases:
        if m["name"] == "benchmark":
            console.print(f"seq {m['seq']}: {m['ms']:.2f} ms/iter, peak {m['max_mem_mb']:.0f} MB")
    if hot:
        console.print(f"py-spy: {hot[-1].samples} samples; top own frames:")
        for r in hot[-1].rows[:8]:
            console.print(f"  {r['own']:6d} {r['total']:6d} {r['thread']:>6} {r['function']}")

    failures: list[str] = []
    nvml_status = next((s for s in statuses if s.monitor == "nvml"), None)
    if nvml_status is None or not nvml_status.available:
        failures.append(f"NVML not used: {nvml_status.message if nvml_status else 'no status'}")
    if not samples or any(s.source != "nvml" for s in samples):
        failures.append("samples did not come from NVML")
    for key in ("gpu_util_pct", "mem_used_mb", "mem_total_mb"):
        present = sum(s.values.get(key) is not None for s in samples)
        if present < 0.9 * max(1, len(samples)):
            failures.append(f"{key} is n/a in {len(samples) - present} of {len(samples)} samples")
    mem = [s.values.get("mem_used_mb") for s in samples if s.values.get("mem_used_mb") is not None]
    if not mem or max(mem) - mem[0] < 100:
        failures.append(f"device memory did not rise (first {mem[:1]}, max {max(mem or [0])})")
    bench = summary.get("benchmark", {})
    if not (bench.get("gpu_util_pct.max") or 0) > 0:
        failures.append("no GPU utilization while benchmarking")
    if bench.get("proc_mem_mb.max") is None:
        console.print(
            "[yellow]note: proc_mem_mb n/a (pid namespace or no per-process info)[/yellow]"
        )
    if spy is not None and not hot:
        failures.append("py-spy produced no hot frames")
    shutil.rmtree(work, ignore_errors=True)
    if failures:
        for f in failures:
            console.print(f"[red]FAIL[/red] {f}")
        return 1
    console.print(f"[green]OK[/green] device monitors work on this GPU ({time.time() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
