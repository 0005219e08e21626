"""Check the many-ranks plan's sessions (``scripts/gpu_check.sh --ranks``; NEEDS 2
GPUs on CUDA, or rehearsed on the CPU with ``--device cpu``).

The split job (ddp_train.py --width 512 --depth 4 --bucket-cap-mb 1, 2 ranks):

- both ranks attached (rank 0 and 1), each ok;
- each rank's graph split by DDPOptimizer into 4 pieces, 4 forward + 4
  backward Inductor graphs; kernels are ``triton_`` on CUDA, ``cpp_`` on the CPU;
- Dynamo's DDP mode read ("ddp_optimizer").

The diverge job (--diverge-rank 1):

- rank 1 recompiled (with torch's guard reason), rank 0 did not;
- each rank's compile count stated.

Prints a table to paste, then each failure; exit 1 on a failure. Reads the
saved sessions only: no torch.

Usage: python scripts/gpu_ranks_check.py SPLIT.json DIVERGE.json [--device cuda|cpu]
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from dlcprof.figures.job import ddp as fddp  # noqa: E402
from dlcprof.report import load_session  # noqa: E402
from dlcprof.session import Run, Session  # noqa: E402


def ranks(session: Session) -> dict[int, Run]:
    return {
        r.process.rank: r
        for r in session.runs.values()
        if r.process is not None and r.process.rank is not None
    }


def check_split(session: Session, device: str, fails: list[str]) -> list[str]:
    rows = []
    prefix = "triton_" if device == "cuda" else "cpp_"
    by_rank = ranks(session)
    if sorted(by_rank) != [0, 1]:
        fails.append(f"split: ranks attached {sorted(by_rank)}, want [0, 1]")
    for rank, run in sorted(by_rank.items()):
        splits = fddp.splits(run)
        pieces = [(s.pieces, s.event.forward_graphs, s.backward_graphs) for s in splits]
        kernels = [k.name for k in run.kernels if k.name.startswith(prefix)]
        mode = run.compile_settings.optimize_ddp if run.compile_settings else None
        rows.append(
            f"split rank {rank}: status {run.status}, pieces/fwd/bwd {pieces}, "
            f"{len(kernels)} {prefix} kernels, optimize_ddp {mode}"
        )
        if run.status != "ok":
            fails.append(f"split rank {rank}: status {run.status}")
        if pieces != [(4, 4, 4)]:
            fails.append(f"split rank {rank}: pieces/forward/backward {pieces}, want [(4, 4, 4)]")
        if not kernels:
            fails.append(f"split rank {rank}: no {prefix} kernels")
        if mode != "ddp_optimizer":
            fails.append(f"split rank {rank}: optimize_ddp {mode}")
    return rows


def check_diverge(session: Session, fails: list[str]) -> list[str]:
    by_rank = ranks(session)
    rows = []
    for rank, run in sorted(by_rank.items()):
        reasons = [rc.reason for rc in run.recompiles]
        rows.append(
            f"diverge rank {rank}: status {run.status}, {len(run.compiles)} compiles, "
            f"recompiles {reasons[:1] or 'none'}"
        )
    if sorted(by_rank) != [0, 1]:
        fails.append(f"diverge: ranks attached {sorted(by_rank)}, want [0, 1]")
    elif by_rank[0].recompiles or not by_rank[1].recompiles:
        fails.append("diverge: want a recompile on rank 1 alone")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("split")
    parser.add_argument("diverge")
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    fails: list[str] = []
    rows: list[str] = []
    for path, check in (
        (args.split, lambda s: check_split(s, args.device, fails)),
        (args.diverge, lambda s: check_diverge(s, fails)),
    ):
        try:
            rows += check(load_session(path))
        except Exception as e:  # noqa: BLE001 - a missing session is one failure, not a crash
            fails.append(f"{path}: {type(e).__name__}: {e}")
    print("\n".join(rows))
    print("\n".join(f"FAIL {f}" for f in fails) or "all many-ranks checks passed")
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
