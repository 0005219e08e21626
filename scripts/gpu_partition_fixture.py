#!/usr/bin/env python
"""Record, on the CPU, a wrapper module with graph partitions (as a GPU compiles
it under CUDA graphs), for tests/unit/test_gpu_records.py.

    .venv/bin/python scripts/gpu_partition_fixture.py [OUT]

With CUDA graphs on (reduce-overhead, max-autotune), Inductor puts the launches
it can capture into module-level ``partition_N(args)`` functions that
``Runner.call`` calls through ``self.partitions[N]``; the ops it cannot
capture stay in ``call``. On the CPU nothing can be captured, so this script
makes torch's own ``Scheduler.should_partition`` say "capturable" for every
node but the extern matmul: a real wrapper, from torch's own codegen, with a
partition before the matmul, the matmul in ``call`` and a partition after it.
Its partitions run as plain functions (the CPU never records a CUDA graph), so
the same module also runs under the launch instrumenter.
"""

from __future__ import annotations

import logging
import sys
from pathlib import Path

import torch
import torch._inductor.config as config
import torch._logging._internal as torch_logging
from torch._inductor import ir, scheduler

OUT = Path(__file__).resolve().parent.parent / "tests/fixtures/partitions"


def model(x: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    return (torch.sin(x) @ w).relu() + 1


def main() -> int:
    out = Path(sys.argv[1]) if len(sys.argv) > 1 else OUT
    codes: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            if "inductor_output_code" in (getattr(record, "metadata", None) or {}):
                codes.append(record.payload)

    torch_logging.trace_log.handlers.insert(0, Keep())
    original = scheduler.Scheduler.should_partition

    def should_partition(self, node, *args, **kwargs):  # type: ignore[no-untyped-def]
        if isinstance(node.node, ir.ExternKernel):
            return original(self, node, *args, **kwargs)
        return None

    scheduler.Scheduler.should_partition = should_partition
    config.graph_partition = True
    config.triton.cudagraphs = True
    x, w = torch.randn(8, 8), torch.randn(8, 8)
    assert torch.allclose(torch.compile(model)(x, w), model(x, w))
    out.mkdir(parents=True, exist_ok=True)
    name = f"output_code_{torch.__version__.split('+')[0]}.txt"
    (out / name).write_text(codes[-1])
    print(f"{out / name}: {codes[-1].count('def partition_')} partitions")
    return 0


if __name__ == "__main__":
    sys.exit(main())
