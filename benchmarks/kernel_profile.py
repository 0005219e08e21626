"""The kernel profiling stage on the bundled workloads: how much of each call it explains.

Per workload, one real `dlcprof` run (worker subprocess, warm cache, benchmark
then profiling stage) and, from its figures:

- kernels timed / kernels generated;
- kernel coverage: sum of kernel times ÷ the compiled call timed alongside;
- eager coverage: the user's ops run one by one ÷ the eager call timed alongside;
- the instrumented call ÷ the plain one (what the timing hooks cost);
- the slowest fused kernel's fusion gain ÷ the run's speedup;
- how long the stage took.

Issue 10's bar on a CPU: every kernel timed, both coverages within 50–110%,
pointwise-chain's fused kernel's gain within ±25% of the measured speedup.

    python benchmarks/kernel_profile.py [--size small|default] [--workloads a,b] [--json out.json]
"""

from __future__ import annotations

import argparse
import json
import sys

from common import headless_run as run
from rich.table import Table

from dlcprof import text
from dlcprof.console import make_console
from dlcprof.figures import benchmark as fb
from dlcprof.figures import kernels as fk
from dlcprof.settings import RunSettings

WORKLOADS = "pointwise-chain,layernorm-residual,conv-bn-relu,attention,transformer-block"


def _within(x: float | None, lo: float, hi: float) -> bool:
    return x is not None and lo <= x <= hi


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawTextHelpFormatter)
    p.add_argument("--size", default="default")
    p.add_argument("--workloads", default=WORKLOADS)
    p.add_argument("--json", default=None)
    args = p.parse_args(argv)
    out = make_console()
    results: dict[str, dict] = {}
    t = Table(title=f"Kernel profiling stage (size={args.size}, warm cache)")
    cols = (
        "workload",
        "timed",
        "kernel cov",
        "eager cov",
        "hooks cost",
        "top kernel",
        "gain ÷ speedup",
        "stage",
        "bar",
    )
    for col in cols:
        t.add_column(col, justify="left" if col in ("workload", "top kernel") else "right")
    ok = True
    for name in args.workloads.split(","):
        r = run(RunSettings(target=name, size=args.size))
        s = fk.profile_summary(r)
        speed = fb.run_speed(r)
        if s is None or speed is None:
            t.add_row(name, text.na(fk.why_no_profile(r)), *[""] * (len(cols) - 2))
            ok = False
            continue
        timings = fk.kernel_timings(r)
        timed = sum(1 for x in timings.values() if x.time_ms is not None)
        top = fk.by_time(r.kernels, timings)[0]
        gain = timings[fk.kernel_key(top)].gain
        ratio = gain / speed.speedup if gain is not None and speed.speedup else None
        hooks = s.call_ms / s.compiled_ms if s.call_ms and s.compiled_ms else None
        passed = (
            timed == len(timings)
            and _within(s.coverage, 0.5, 1.1)
            and _within(s.eager_coverage, 0.5, 1.1)
            and (name != "pointwise-chain" or _within(ratio, 0.75, 1.25))
        )
        ok &= passed
        t.add_row(
            name,
            f"{timed}/{len(timings)}",
            text.pct(s.coverage),
            text.pct(s.eager_coverage),
            text.speedup(hooks),
            top.name[:40],
            text.speedup(ratio),
            text.secs(s.wall_s),
            "ok" if passed else "MISSED",
        )
        results[name] = {
            "kernels": len(timings),
            "timed": timed,
            "kernel_coverage": s.coverage,
            "eager_coverage": s.eager_coverage,
            "compiled_ms": s.compiled_ms,
            "instrumented_call_ms": s.call_ms,
            "eager_ms": s.eager_ms,
            "eager_nodes_ms": s.eager_nodes_ms,
            "speedup": speed.speedup,
            "top_kernel": top.name,
            "top_gain": gain,
            "gain_over_speedup": ratio,
            "copy_gbps": s.copy_gbps,
            "stage_s": s.wall_s,
            "passed": passed,
            "load_avg": list(r.benchmark.load_avg) if r.benchmark else None,
        }
    out.print(t)
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=2)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
