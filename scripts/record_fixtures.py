#!/usr/bin/env python
"""Record real worker event streams as test fixtures.

    .venv/bin/python scripts/record_fixtures.py [--only NAME ...]

Writes ``tests/fixtures/<name>.jsonl`` (one event per line, as the UI receives
them: through ``dlcprof.runner`` when it is there, so the workload's output
lines and the final WorkerExited are included) for the Session, report and UI
tests, and ``tests/fixtures/trace/<name>.jsonl``: the raw structured-trace
records the worker's probes read during the run, for the probe unit tests.

Uses the shared test cache (TORCHINDUCTOR_CACHE_DIR, default
/tmp/dlcprof-test-cache), so compiles are mostly warm.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import textwrap
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dlcprof import events as ev  # noqa: E402
from dlcprof.runner import WorkerProcess  # noqa: E402
from dlcprof.settings import RunSettings  # noqa: E402

sys.path.insert(0, str(ROOT / "tests"))
from helpers.worker import clear_autotune_cache  # noqa: E402

FIXTURES = ROOT / "tests" / "fixtures"
TRACES = FIXTURES / "trace"
LIMIT_KB = 300
# Five real sequence lengths (default size): enough shapes for the static vs
# dynamic transition costs to separate, few enough for the size limit.
SWEEP = [32, 64, 128, 192, 256]

# A tiny workload that hits a lowered recompile limit (for the raw trace only).
LIMIT_WORKLOAD = '''
"""A pointwise op whose length changes every call; the recompile limit is lowered to 2."""
import torch
import torch._dynamo

torch._dynamo.config.recompile_limit = 2
SIZES = SMALL_SIZES = [3, 5, 7, 9]


def scale(x):
    return x * 2 + 1


def inputs_for(n, device, dtype):
    return (torch.randn(n, device=device, dtype=dtype),)


def build(device, dtype):
    return scale, inputs_for(2, device, dtype)
'''


# Float attributes and constants in tensor math: under dynamic=True Dynamo makes
# symbols of them besides the dims, and restarts its analysis once
# (TensorifyScalarRestartAnalysis). For the raw trace only.
SCALARS_WORKLOAD = '''
"""Float attributes and constants used in tensor math."""
import math

import torch
import torch.nn.functional as F
from torch import nn


class Block(nn.Module):
    def __init__(self):
        super().__init__()
        self.norm = nn.LayerNorm(16)
        self.p = 0.1
        self.scale = 0.5

    def forward(self, x):
        h = self.norm(x)
        h = 0.5 * h * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * h))
        return F.dropout(h, self.p, self.training) * self.scale


def build(device, dtype):
    return Block().to(device, dtype).eval(), (torch.randn(8, 16, device=device, dtype=dtype),)
'''


# A training step with a torch optimizer: Dynamo breaks inside opt.step()
# (torch/optim/optimizer.py), called from the user's line. For the raw trace only.
OPTIMIZER_WORKLOAD = '''
"""A linear layer trained by torch.optim.SGD."""
import torch
from torch import nn


def build(device, dtype):
    model = nn.Linear(8, 4).to(device, dtype)
    opt = torch.optim.SGD(model.parameters(), lr=0.1)

    def step(x):
        with torch.enable_grad():
            loss = model(x).square().mean()
            loss.backward()
        opt.step()
        opt.zero_grad()
        return loss.detach()

    return step, (torch.randn(4, 8, device=device, dtype=dtype),)
'''


# Four Linear layers: four library calls (extern_kernels.addmm) in one compiled
# call, each a launch of its own that every view must count.
LINEARS_WORKLOAD = '''
"""Four Linear layers with a ReLU between each."""
import torch
from torch import nn


def build(device, dtype):
    layers = [m for _ in range(4) for m in (nn.Linear(256, 256), nn.ReLU())]
    model = nn.Sequential(*layers).to(device, dtype).eval()
    return model, (torch.randn(64, 256, device=device, dtype=dtype),)
'''


Settings = RunSettings | list[RunSettings]


def runs(tmp: Path) -> list[tuple[str, Settings, bool, bool, dict[str, str | None]]]:
    """(name, settings (a list: one run each, one stream), write the event stream?,
    write the raw trace?, extra env; None removes a variable: glibc reads an empty
    MALLOC_MMAP_THRESHOLD_ as 0)."""
    limit = tmp / "recompile_limit.py"
    limit.write_text(textwrap.dedent(LIMIT_WORKLOAD).lstrip())
    scalars = tmp / "scalars.py"
    scalars.write_text(SCALARS_WORKLOAD.lstrip())
    optimizer = tmp / "optimizer_step.py"
    optimizer.write_text(OPTIMIZER_WORKLOAD.lstrip())
    linears = tmp / "stacked_linears.py"
    linears.write_text(LINEARS_WORKLOAD.lstrip())
    small = {"size": "small"}
    return [
        # Graph caches off: the stream shows Inductor's whole pipeline (lowering,
        # scheduler, codegen, the C++ build), not a cache load.
        (
            "pointwise_chain",
            RunSettings(target="pointwise-chain", **small),
            True,
            True,
            {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"},
        ),
        (
            "variable_length_static",
            RunSettings(target="variable-length", shapes=SWEEP, dynamic="false"),
            True,
            False,
            {},
        ),
        (
            "variable_length_dynamic",
            RunSettings(target="variable-length", shapes=SWEEP, dynamic="true"),
            True,
            False,
            {},
        ),
        ("graph_breaks", RunSettings(target="graph-breaks", **small), True, True, {}),
        # Default size: 4 MiB eager intermediates, page faults, and the benchmark
        # again with the allocator held steady (glibc's default allocator first).
        (
            "pointwise_chain_allocator",
            RunSettings(target="pointwise-chain", iters=10),
            True,
            False,
            {"MALLOC_MMAP_THRESHOLD_": None, "MALLOC_TRIM_THRESHOLD_": None, "LD_PRELOAD": None},
        ),
        # Every mode with freezing, after clearing the autotune cache: max-autotune
        # benchmarks its matmuls, max-autotune-no-cudagraphs then reads the cache.
        (
            "gelu_mlp_modes",
            RunSettings(target="gelu-mlp", freezing=True, iters=5, reps=3, **small).each_mode(),
            True,
            False,
            {},
        ),
        # The paper's findings (tests/unit/test_paper.py), in a folder of their own
        # (the report tests load every fixture at the top): a GEMM-bound and an
        # overhead-bound workload beside pointwise_chain_allocator, and that
        # workload compiled again on a fresh Inductor cache.
        ("paper/gelu_mlp", RunSettings(target="gelu-mlp", iters=10, reps=5), True, False, {}),
        ("paper/tiny_ops", RunSettings(target="tiny-ops", **small), True, False, {}),
        (
            "paper/pointwise_chain_fresh",
            RunSettings(target="pointwise-chain", cache="fresh", reps=3, iters=5),
            True,
            False,
            {},
        ),
        # Raw traces only: a cold compile (so the backward compiles lazily, with
        # its own bwd_compilation_metrics) and a recompile-limit hit.
        (
            "training_step",
            RunSettings(target="training-step", iters=5, reps=3, **small),
            False,
            True,
            {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"},
        ),
        ("stacked_linears", RunSettings(target=str(linears), **small), True, False, {}),
        (
            "dynamic_scalars",
            RunSettings(target=str(scalars), dynamic="true", benchmark=False, **small),
            False,
            True,
            {"TORCHINDUCTOR_FORCE_DISABLE_CACHES": "1"},
        ),
        (
            "optimizer_step",
            RunSettings(target=str(optimizer), benchmark=False, **small),
            False,
            True,
            {},
        ),
        (
            "recompile_limit",
            RunSettings(target=str(limit), sweep=True, dynamic="false", benchmark=False, **small),
            False,
            True,
            {},
        ),
    ]


def record(settings: Settings, env: dict[str, str | None]) -> list[ev.Event]:
    if isinstance(settings, list):
        clear_autotune_cache(os.environ["TORCHINDUCTOR_CACHE_DIR"])
        return [e for s in settings for e in record(s, env)]
    merged = {k: v for k, v in {**os.environ, **env}.items() if v is not None}
    worker = WorkerProcess(cache=settings.cache, env=merged)
    worker.start(settings)
    return list(worker.events())


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="record just these fixtures")
    args = parser.parse_args()
    os.environ.setdefault("TORCHINDUCTOR_CACHE_DIR", "/tmp/dlcprof-test-cache")
    FIXTURES.mkdir(parents=True, exist_ok=True)
    TRACES.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="dlcprof-fixtures-") as tmp:
        for name, settings, keep_events, keep_trace, extra_env in runs(Path(tmp)):
            if args.only and name not in args.only:
                continue
            trace_path = TRACES / f"{name}.jsonl"
            env = {"DLCPROF_TRACE_TEE": str(trace_path), **extra_env} if keep_trace else extra_env
            t0 = time.monotonic()
            events = record(settings, env)
            finished = [e for e in events if isinstance(e, ev.RunFinished)]
            bad = [e.status for e in finished if e.status != "ok"]
            status = (bad or [e.status for e in finished] or ["no RunFinished"])[0]
            line = f"{name}: {len(events)} events, {status}, {time.monotonic() - t0:.1f} s"
            if keep_events:
                path = FIXTURES / f"{name}.jsonl"
                path.parent.mkdir(parents=True, exist_ok=True)
                path.write_bytes(b"".join(ev.encode(e) for e in events))
                kb = path.stat().st_size / 1024
                line += f", {path.relative_to(ROOT)} {kb:.0f} KB"
                if kb > LIMIT_KB:
                    line += f" (over {LIMIT_KB} KB)"
            if keep_trace:
                kb = trace_path.stat().st_size / 1024
                line += f", {trace_path.relative_to(ROOT)} {kb:.0f} KB"
            print(line, flush=True)
            if status != "ok":
                errors = [e for e in events if isinstance(e, ev.ErrorRaised)]
                print(f"  {errors[-1].message if errors else 'see the stream'}", file=sys.stderr)
                return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
