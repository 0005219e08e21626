"""Reproduce the paper's three findings (arXiv 2611.04273) on this machine, side by side.

1. Fusion: speedup per bundled workload (fusion-friendly vs GEMM-bound ...).
2. Compile cost: compile seconds and break-even runs per workload.
3. Dynamic shapes: cumulative shape-transition cost of a sweep under
   dynamic=false vs true vs auto, and the steady-state latency ratio. Each
   setting gets a fresh Inductor cache dir, so every (re)compile builds its
   kernels for real (a warm kernel cache hides most of a static recompile);
   the one-time precompiled header under $TMPDIR stays warm for all three.

Every number comes from a real `dlcprof` run (worker subprocess, warm cache):

    python benchmarks/paper_findings.py [--size small|default] [--workloads a,b|none]
        [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import queue
import statistics
import sys
import tempfile

from rich.console import Console
from rich.table import Table

from dlcprof import events as ev
from dlcprof import text
from dlcprof.engine import LiveRun
from dlcprof.figures import allocator as fa
from dlcprof.figures.benchmark import break_even_text, speed, speedup_text
from dlcprof.figures.recompiles import sweep_total
from dlcprof.runner import WorkerProcess
from dlcprof.session import Run, Session
from dlcprof.settings import RunSettings
from dlcprof.workloads import list_bundled


def run(settings: RunSettings, worker: WorkerProcess | None = None) -> Run:
    inbox: queue.Queue[ev.Event] = queue.Queue()
    live = LiveRun(settings.validate(), inbox.put, worker=worker, monitors=False, profile=False)
    live.start()
    session = Session()
    while True:
        event = inbox.get()
        session.apply(event)
        if isinstance(event, ev.WorkerExited):
            return session.runs[live.run_id]


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="default")
    p.add_argument("--workloads", default=None, help="comma-separated (default: all bundled)")
    p.add_argument("--sweep-workload", default="variable-length")
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    out = Console(highlight=False)
    if args.workloads == "none":
        names = []
    elif args.workloads:
        names = args.workloads.split(",")
    else:
        names = [w.name for w in list_bundled()]
    results: dict[str, dict] = {"benchmark": {}, "sweep": {}}

    t = Table(title=f"Findings 1-2: eager vs compiled (size={args.size}, warm cache)")
    for col in ("workload", "eager ms", "compiled ms", "speedup", "compile s", "break-even",
                "steady alloc.", "break-even steady"):  # fmt: skip
        t.add_column(col, justify="right" if col != "workload" else "left")
    for name in names:
        r = run(RunSettings(target=name, size=args.size))
        b, a = r.benchmark, fa.contrast(r)
        if b is None or a is None:
            t.add_row(name, "n/a", "n/a", "n/a", "n/a", f"run {r.status}", "n/a", "n/a")
            continue
        sp, st = speed(b), a.steady
        results["benchmark"][name] = {
            "eager_ms": b.eager_ms, "compiled_ms": b.compiled_ms, "speedup": sp.speedup,
            "compile_s": b.compile_s, "break_even_runs": sp.break_even,
            "steady_speedup": st.speedup if st else None,
            "steady_break_even_runs": st.break_even if st else None,
            "allocator_verdict": a.verdict,
        }  # fmt: skip
        t.add_row(
            name, text.ms(b.eager_ms), text.ms(b.compiled_ms), speedup_text(sp),
            text.secs(b.compile_s), break_even_text(sp),
            speedup_text(st) if st else text.na(a.steady_why),
            break_even_text(st) if st else text.NA,
        )  # fmt: skip
        out.print(f"  {name}: {text.speedup(sp.speedup)}", style="dim")
    if names:
        out.print(t)

    sweeps: dict[str, Run] = {}
    for dynamic in ("false", "true", "auto"):
        fresh = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": tempfile.mkdtemp(prefix="dlcprof-bench-")}
        sweeps[dynamic] = run(
            RunSettings(target=args.sweep_workload, size=args.size, dynamic=dynamic,
                        sweep=True, benchmark=False),
            worker=WorkerProcess(env=fresh),
        )  # fmt: skip
    static = sweeps["false"]
    s = Table(
        title=f"Finding 3: shape transitions, {args.sweep_workload} ({len(static.sweep)} sizes)"
    )
    for col in (
        "dynamic",
        "compiles",
        "cumulative transition s",
        "vs static",
        "steady latency vs static",
    ):
        s.add_column(col, justify="right")
    for dynamic, r in sweeps.items():
        total = sweep_total(r) or 0.0
        cut = 1 - total / sweep_total(static) if sweep_total(static) else None
        ratios = [
            a.latency_ms / b.latency_ms
            for a, b in zip(r.sweep, static.sweep, strict=True)
            if b.latency_ms > 0
        ]
        slow = statistics.median(ratios) if ratios else None
        compiles = sum(st.recompiled for st in r.sweep)
        results["sweep"][dynamic] = {
            "cumulative_transition_s": total, "compiles": compiles,
            "reduction_vs_static": cut, "median_latency_ratio_vs_static": slow,
        }  # fmt: skip
        s.add_row(
            dynamic, str(compiles), f"{total:.2f}",
            "—" if dynamic == "false" or cut is None else f"{-cut:+.0%}",
            "—" if dynamic == "false" or slow is None else f"{slow:.2f}x",
        )  # fmt: skip
    out.print(s)
    if args.json:
        with open(args.json, "w") as f:
            json.dump(results, f, indent=1)
    return 0


if __name__ == "__main__":
    sys.exit(main())
