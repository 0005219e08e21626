"""Check saved `--mode all` sessions (scripts/gpu_check.sh runs them).

For each session (one workload, the four modes):

- every run finished ok, on the device asked for;
- kernels were generated (``triton_`` names on CUDA, ``cpp_`` on the CPU);
- the profiling stage timed every kernel of the default mode, and (CUDA) the
  device was busy for a share of the instrumented call in (0, 1.1];
- the same kernels in a mode with CUDA graphs as in the same mode without
  (default vs reduce-overhead, max-autotune-no-cudagraphs vs max-autotune);
- (CUDA) NVML saw the GPU busy (gpu_util_pct > 0) after the compile;
- reduce-overhead states a CUDA-graph status for its graphs (graphed, with
  replays; or torch's reason not to);
- (CUDA) for a workload with matmuls (``--gemm``): max-autotune's autotune
  table is not empty, each op with two or more choices and a winner;
- the report folder holds report.html and session.json;
- (CUDA, ``--fixtures``) a kineto trace was kept for every profiled run.

Prints one table to paste (a row per workload and mode), then each failure;
exits 1 on a failure. Reads only the saved sessions: no torch.

Usage: python scripts/gpu_check.py REPORT_DIR [REPORT_DIR ...] [--device cuda|cpu]
       [--gemm NAME ...] [--fixtures DIR]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from rich.console import Console  # noqa: E402
from rich.table import Table  # noqa: E402

from dlcprof import text  # noqa: E402
from dlcprof.figures import benchmark as fb  # noqa: E402
from dlcprof.figures import device as fd  # noqa: E402
from dlcprof.figures import modes as fm  # noqa: E402
from dlcprof.report import load_session  # noqa: E402
from dlcprof.session import Run  # noqa: E402
from dlcprof.settings import MODES  # noqa: E402

# A mode with CUDA graphs and the same mode without: the same generated kernels.
PAIRS = (("default", "reduce-overhead"), ("max-autotune-no-cudagraphs", "max-autotune"))


def busy_after_compile(run: Run) -> float | None:
    """The highest NVML GPU utilization sampled after the compile (the benchmark)."""
    spans = fd.activity_spans(run)
    row = fd.summarize(run.device_samples, spans).get("after compile", {}) if spans else {}
    return row.get("gpu_util_pct.max")


def kernel_timing(run: Run, device: str) -> tuple[str, list[str]]:
    """(timed/listed and the device-busy share, failures) of the profiling stage."""
    prof = run.kernel_profile
    if prof is None:
        return text.NA, ["no kernel profile"]
    kernels = prof.kernels
    timed = [k for k in kernels if k.get("time_ms") is not None]
    fails = [
        f"{k['name']}: no time ({k.get('why', {}).get('time_ms')})"
        for k in kernels
        if k.get("time_ms") is None
    ]
    cell = f"{len(timed)}/{len(kernels)}"
    if device == "cuda":
        busy = prof.device_busy_ms / prof.call_ms if prof.device_busy_ms and prof.call_ms else None
        if busy is None or not 0 < busy <= 1.1:
            fails.append(f"device busy {prof.device_busy_ms} ms of a {prof.call_ms} ms call")
        cell += f", busy {busy:.0%}" if busy is not None else ", busy n/a"
    return cell, fails


def check(folder: Path, gemm: bool, device: str) -> tuple[list[list[str]], list[str]]:
    rows: list[list[str]] = []
    fails: list[str] = []
    for name in ("report.html", "session.json"):
        if not (folder / name).is_file():
            fails.append(f"{folder}: no {name} in the saved report")
    if not (folder / "session.json").is_file():
        return rows, fails
    session = load_session(folder / "session.json")
    runs = {r.settings.mode: r for r in session.runs.values() if r.settings}
    if sorted(runs) != sorted(MODES):
        fails.append(f"{folder.name}: modes {sorted(runs)}, expected all four")
    prefix = "triton_" if device == "cuda" else "cpp_"
    for mode in MODES:
        run = runs.get(mode)
        if run is None:
            continue
        where = f"{run.name} {mode}"
        s = run.settings
        if run.status != "ok":
            fails.append(f"{where}: status {run.status}: {[e.message for e in run.errors]}")
        if s is None or s.device != device:
            fails.append(f"{where}: ran on {s.device if s else '?'}, not {device}")
        generated = [k.name for k in run.kernels if k.name.startswith(prefix)]
        if not generated:
            fails.append(f"{where}: no {prefix} kernel among {[k.name for k in run.kernels]}")
        timing, timing_fails = kernel_timing(run, device)
        if mode == "default":
            fails += [f"{where}: {f}" for f in timing_fails]
        util = busy_after_compile(run)
        if device == "cuda" and not util:
            fails.append(f"{where}: NVML gpu_util_pct after the compile was {util} (want > 0)")
        a, cg, speed = fm.autotune(run), fm.cudagraphs(run), fb.run_speed(run)
        if mode == "reduce-overhead":
            if not cg.graphs:
                fails.append(f"{where}: no CUDA-graph status: {cg.line}")
            elif cg.verdict == "yes" and not cg.replays:
                fails.append(f"{where}: CUDA-graphed but no replay counted")
        if mode == "max-autotune" and gemm and device == "cuda":
            if not a.ops:
                fails.append(f"{where}: empty autotune table: {a.line}")
            for op in a.ops:
                if len(op.choices) < 2 or op.winner is None:
                    fails.append(f"{where}: {op.op} had {len(op.choices)} choice(s), no winner")
        best = ", ".join(f"{op.op}: {op.winner.name}" for op in a.ops if op.winner) or "—"
        rows.append(
            [
                run.name,
                mode,
                fm.with_autotune(speed.compile_s if speed else None, a.seconds),
                text.ms(speed.compiled_ms) if speed else text.NA,
                text.speedup_verdict(speed.speedup, speed.measurable) if speed else text.NA,
                f"{len(generated)}/{len(run.kernels)}",
                timing,
                cg.line,
                text.count(cg.replays),
                best,
                text.metric("gpu_util_pct", util),
            ]
        )
    for plain, graphed in PAIRS:
        if plain in runs and graphed in runs:
            a_names = sorted({k.name for k in runs[plain].kernels})
            b_names = sorted({k.name for k in runs[graphed].kernels})
            if a_names != b_names:
                fails.append(
                    f"{folder.name}: kernels differ, {plain} {a_names} vs {graphed} {b_names}"
                )
    return rows, fails


def check_fixtures(where: Path, expected: int) -> list[str]:
    """Each profiled CUDA run kept its kineto trace and its graphs' output code."""
    kept = sorted(where.glob("*/trace.json")) if where.is_dir() else []
    fails = [] if len(kept) >= expected else [f"{len(kept)} kineto trace(s) kept, {expected} runs"]
    for trace in kept:
        if not list(trace.parent.glob("output_code_*.txt")):
            fails.append(f"{trace.parent.name}: no output code kept")
    return fails


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--device", default="cuda", choices=("cuda", "cpu"))
    parser.add_argument("--gemm", nargs="*", default=[], help="workloads that must autotune")
    parser.add_argument("--fixtures", type=Path, default=None, help="DLCPROF_GPU_TRACE_DIR")
    args = parser.parse_args()
    table = Table(title=f"dlcprof --mode all on {args.device}", title_justify="left")
    for col in (
        "workload",
        "mode",
        "compile (autotune)",
        "steady",
        "speedup",
        "generated",
        "timed kernels",
        "CUDA graphs",
        "replays",
        "autotune winner",
        "GPU util after compile",
    ):
        table.add_column(col)
    failures: list[str] = []
    for folder in args.folders:
        rows, fails = check(folder, gemm=folder.name in args.gemm, device=args.device)
        for row in rows:
            table.add_row(*row)
        failures += fails
    if args.device == "cuda" and args.fixtures is not None:
        failures += check_fixtures(args.fixtures, expected=len(args.folders) * len(MODES))
    out = Console(width=200, highlight=False)
    out.print(table)
    for f in failures:
        out.print(f"FAIL {f}")
    out.print("gpu_check: ok" if not failures else f"gpu_check: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
