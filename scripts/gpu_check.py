"""Check saved `--mode all --device cuda` sessions (scripts/gpu_check.sh runs them).

For each session (one workload, the four modes):

- every run finished ok, on CUDA;
- Triton kernels were generated (kernel names start with ``triton_``);
- NVML saw the GPU busy (gpu_util_pct > 0) after the compile, in the benchmark;
- reduce-overhead states a CUDA-graph status for its graphs (graphed, with
  replays; or torch's reason not to);
- for a workload with matmuls (``--gemm``): max-autotune's autotune table is not
  empty, each op with two or more choices and a winner;
- the report folder holds report.html and session.json.

Prints one table to paste (a row per workload and mode), then each failure;
exits 1 on a failure. Reads only the saved sessions: no torch.

Usage: python scripts/gpu_check.py REPORT_DIR [REPORT_DIR ...] [--gemm NAME ...]
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


def busy_after_compile(run: Run) -> float | None:
    """The highest NVML GPU utilization sampled after the compile (the benchmark)."""
    spans = fd.activity_spans(run)
    row = fd.summarize(run.device_samples, spans).get("after compile", {}) if spans else {}
    return row.get("gpu_util_pct.max")


def check(folder: Path, gemm: bool) -> tuple[list[list[str]], list[str]]:
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
    for mode in MODES:
        run = runs.get(mode)
        if run is None:
            continue
        where = f"{run.name} {mode}"
        s = run.settings
        if run.status != "ok":
            fails.append(f"{where}: status {run.status}: {[e.message for e in run.errors]}")
        if s is None or s.device != "cuda":
            fails.append(f"{where}: ran on {s.device if s else '?'}, not cuda")
        triton = [k.name for k in run.kernels if k.name.startswith("triton_")]
        if not triton:
            fails.append(f"{where}: no Triton kernel among {[k.name for k in run.kernels]}")
        util = busy_after_compile(run)
        if not util:
            fails.append(f"{where}: NVML gpu_util_pct after the compile was {util} (want > 0)")
        a, cg, speed = fm.autotune(run), fm.cudagraphs(run), fb.run_speed(run)
        if mode == "reduce-overhead":
            if not cg.graphs:
                fails.append(f"{where}: no CUDA-graph status: {cg.line}")
            elif cg.verdict == "yes" and not cg.replays:
                fails.append(f"{where}: CUDA-graphed but no replay counted")
        if mode == "max-autotune" and gemm:
            if not a.ops:
                fails.append(f"{where}: empty autotune table: {a.line}")
            for op in a.ops:
                if len(op.choices) < 2 or op.winner is None:
                    fails.append(f"{where}: {op.op} had {len(op.choices)} choice(s), no winner")
        best = ", ".join(f"{op.op}: {op.winner.name}" for op in a.ops if op.winner) or "—"
        rows.append([
            run.name, mode, fm.with_autotune(speed.compile_s if speed else None, a.seconds),
            text.ms(speed.compiled_ms) if speed else text.NA,
            text.speedup_verdict(speed.speedup, speed.measurable) if speed else text.NA,
            f"{len(triton)}/{len(run.kernels)}", cg.line,
            text.count(cg.replays), best, text.metric("gpu_util_pct", util),
        ])  # fmt: skip
    return rows, fails


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("folders", nargs="+", type=Path)
    parser.add_argument("--gemm", nargs="*", default=[], help="workloads that must autotune")
    args = parser.parse_args()
    table = Table(title="dlcprof --mode all on CUDA", title_justify="left")
    for col in ("workload", "mode", "compile (autotune)", "steady", "speedup", "triton/kernels",
                "CUDA graphs", "replays", "autotune winner", "GPU util after compile"):
        table.add_column(col)  # fmt: skip
    failures: list[str] = []
    for folder in args.folders:
        rows, fails = check(folder, gemm=folder.name in args.gemm)
        for row in rows:
            table.add_row(*row)
        failures += fails
    out = Console(width=200, highlight=False)
    out.print(table)
    for f in failures:
        out.print(f"FAIL {f}")
    out.print("gpu_check: ok" if not failures else f"gpu_check: {len(failures)} failure(s)")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
