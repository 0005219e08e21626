"""The CPU speedup with glibc's default allocator and with the allocator held steady,
per bundled workload, side by side (issue 14's closing numbers).

Each workload runs as `dlcprof run` does (a fresh worker, warm cache, no
monitors), in fresh processes one after another:

  default   a worker with glibc's default allocator (MALLOC_* and LD_PRELOAD
            removed from its environment): the headline speedup, and, in the
            same worker, the speedup again after pinning glibc's mmap/trim
            thresholds with mallopt ("steady", dlcprof/worker/steady.py)
  pinned    a worker started with MALLOC_MMAP_THRESHOLD_/MALLOC_TRIM_THRESHOLD_
            set: the steady figure from an independent, fresh process
  tcmalloc, jemalloc
            a worker with that malloc preloaded, when it is installed: what a
            deployment that follows the usual advice would see

Also: eager page faults per call (default -> steady), whether dlcprof flags
the workload allocator-sensitive, and what the steady measurement added to
the run (its wall time; it runs after the default benchmark, in the same
worker). Repeat with --rounds to see the default figure move between
processes while the steady ones hold.

    python benchmarks/allocator.py [--size default|small] [--workloads a,b]
        [--rounds 1] [--iters N] [--reps N] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from common import headless_run as run
from rich.table import Table

from dlcprof import allocator, text
from dlcprof.console import make_console
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.runner import WorkerProcess
from dlcprof.settings import RunSettings
from dlcprof.workloads import list_bundled


def environments() -> dict[str, dict[str, str]]:
    """One environment per variant: glibc's default first."""
    base = {
        k: v
        for k, v in os.environ.items()
        if k != "LD_PRELOAD" and k not in allocator.STEADY_ENV and k != "MALLOC_CONF"
    }
    out = {"default": base, "pinned": {**base, **allocator.STEADY_ENV}}
    for name, path in allocator.installed().items():
        if name in ("tcmalloc", "jemalloc"):
            out[name] = {**base, "LD_PRELOAD": path}
    return out


def speedup_cell(s: fb.Speed | None) -> str:
    """Narrow: "2.91x", "1.79–4.82x" (repetitions in two clusters), "1.01x~" (no
    measurable difference)."""
    if s is None:
        return text.NA
    return fb.speedup_short(s) + ("~" if not s.measurable and not s.modes else "")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="default")
    p.add_argument("--workloads", default=None, help="comma-separated (default: all bundled)")
    p.add_argument("--rounds", type=int, default=1, help="fresh processes per variant")
    p.add_argument("--iters", type=int, default=None)
    p.add_argument("--reps", type=int, default=None)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    out = make_console()
    names = args.workloads.split(",") if args.workloads else [w.name for w in list_bundled()]
    envs = environments()
    extra: dict[str, Any] = {"size": args.size}
    if args.iters:
        extra["iters"] = args.iters
    if args.reps:
        extra["reps"] = args.reps

    t = Table(
        title=f"Speedup by allocator (size={args.size}, warm cache, fresh processes)",
        caption="default = glibc's default allocator (the headline); steady = the same worker "
        "after mallopt; pinned, tcmalloc, jemalloc = fresh workers. a–b: repetitions in two "
        "clusters; ~: no measurable difference. faults = eager page faults per call, default "
        "→ steady; +time = what the steady measurement added to the run.",
    )
    t.add_column("workload")
    t.add_column("default", justify="right")
    t.add_column("steady", justify="right")
    for name in envs:
        if name != "default":
            t.add_column(name, justify="right")
    t.add_column("faults", justify="right")
    t.add_column("allocator-sensitive")
    t.add_column("+time", justify="right")
    results: dict[str, list[dict[str, Any]]] = {}
    for name in names:
        for _ in range(args.rounds):
            row: dict[str, Any] = {}
            cells = [name]
            default: fa.AllocatorContrast | None = None
            for variant, env in envs.items():
                r = run(RunSettings(target=name, **extra), worker=WorkerProcess(env=env))
                a = fa.contrast(r)
                if a is None:
                    row[variant] = {"why": fb.why_none(r)}
                    cells.append(text.na(fb.why_none(r)))
                    if variant == "default":
                        cells.append(text.NA)
                    continue
                row[variant] = {
                    "speedup": a.default.speedup,
                    "modes": [m.speedup for m in a.default.modes],
                    "eager_reps_ms": r.benchmark.eager_reps_ms,  # type: ignore[union-attr]
                    "compiled_reps_ms": r.benchmark.compiled_reps_ms,  # type: ignore[union-attr]
                    "eager_faults": r.benchmark.eager_faults,  # type: ignore[union-attr]
                    "allocator": a.allocator,
                }
                cells.append(speedup_cell(a.default))
                if variant == "default":
                    row[variant] |= {
                        "steady_speedup": a.steady.speedup if a.steady else None,
                        "steady_why": a.steady_why,
                        "steady_eager_reps_ms": r.steady.eager_reps_ms if r.steady else None,
                        "faults": [a.faults.eager, a.steady_faults.eager],
                        "verdict": a.verdict,
                        "steady_wall_s": a.cost_s,
                    }
                    cells.append(speedup_cell(a.steady))
                    default = a
            if default is None:
                cells += [text.NA] * 3
            else:
                f, sf = default.faults.eager, default.steady_faults.eager
                cells += [
                    f"{text.faults(f)} → {text.faults(sf)}",
                    {fa.SENSITIVE: "yes", fa.NOT_SENSITIVE: "no"}.get(
                        default.verdict or "", default.verdict or text.na(default.steady_why)
                    ),
                    text.secs(default.cost_s),
                ]
            t.add_row(*cells)
            results.setdefault(name, []).append(row)
            out.print(f"  {name}: {' | '.join(cells[1:-3])}", style="dim")
    out.print(t)
    if args.json:
        Path(args.json).write_text(json.dumps(results, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
