"""The worker end to end: a real ``python -m dlcprof.worker`` subprocess, real compiles.

Tiny tensors throughout; the shared Inductor cache (conftest, or
TORCHINDUCTOR_CACHE_DIR) keeps repeated compiles cheap.
"""

from __future__ import annotations

import textwrap
from pathlib import Path
from typing import Any

import pytest
from helpers.worker import nesting_problems, outermost, phase_intervals, run_worker

from dlcprof import events as ev
from dlcprof.figures.check.findings import compile_time
from dlcprof.session import Session
from dlcprof.settings import RunSettings

FAST: dict[str, Any] = {"size": "small", "iters": 5, "reps": 3}


def _workload(tmp_path: Path, name: str, body: str) -> Path:
    path = tmp_path / f"{name}.py"
    path.write_text(textwrap.dedent(body).lstrip())
    return path


def _line_of(path: Path, text: str) -> int:
    for i, line in enumerate(path.read_text().splitlines(), 1):
        if text in line:
            return i
    raise AssertionError(f"{text!r} not in {path}")


def _assert_clean_finish(r, status: str = "ok") -> None:
    assert isinstance(r.events[0], ev.WorkerReady)
    assert isinstance(r.events[-1], ev.RunFinished), r.events[-3:]
    assert r.events[-1].status == status
    assert r.returncode == (0 if status == "ok" else 1), r.stderr[-2000:]


# --- no compile -----------------------------------------------------------------------


# EOF on stdin after ready (a standby worker not needed): tests/e2e/test_engine.py.


def test_sweep_without_inputs_for_says_so_before_compiling(tmp_path):
    path = _workload(
        tmp_path,
        "fixed_shape",
        """
        import torch

        def build(device, dtype):
            return torch.sin, (torch.randn(4, device=device, dtype=dtype),)
        """,
    )
    r = run_worker(RunSettings(target=str(path), sweep=True, **FAST))
    _assert_clean_finish(r, "error")
    err = r.one(ev.ErrorRaised)
    assert err.stage == "sweep" and err.bad_input  # the CLI says it in one line, exit 2
    assert err.message == (
        f"workload {path} has no inputs_for(size, device, dtype): cannot sweep shapes "
        "(add one that returns the args at another size)"
    )
    assert not r.of(ev.PhaseStarted)


# --- real compiles ----------------------------------------------------------------------


def test_pointwise_chain_phases_kernel_benchmark_and_warm_cache():
    settings = RunSettings(target="pointwise-chain", **FAST)
    run_worker(settings)  # make sure the next run finds everything in the cache
    r = run_worker(settings)
    _assert_clean_finish(r)
    started, loaded = r.one(ev.RunStarted), r.one(ev.WorkloadLoaded)
    assert started.device == "cpu" and started.threads == settings.threads
    assert loaded.has_inputs_for and loaded.sizes

    # Phases: every Begin has its End, they nest per thread, and the outermost
    # one covers the compile torch measured.
    phases = phase_intervals(r.events)
    assert len(r.of(ev.PhaseStarted)) == len(phases) > 10
    assert nesting_problems(phases) == []
    (compile_rec,) = r.of(ev.CompileFinished)
    top = [p for p in outermost(phases) if p.compile_id == compile_rec.compile_id]
    assert top and top[0].name in ("dynamo", "entire_frame_compile")
    assert top[0].duration_s == pytest.approx(compile_rec.wall_s, rel=0.10)
    assert {"bytecode_tracing", "backend_compile"} <= {p.name for p in phases}

    # Warm cache: a hit, and the kernel table is still complete.
    assert compile_rec.cache == "hit"
    assert compile_rec.metrics["graph_op_count"] == compile_rec.graph_op_count > 5
    (kernel,) = r.of(ev.KernelGenerated)
    assert kernel.kind == "pointwise" and kernel.compile_id == compile_rec.compile_id
    assert {"aten.sin", "aten.cos", "aten.exp", "aten.tanh", "aten.sigmoid"} <= set(
        kernel.fused_ops
    )
    assert "kernel(" in kernel.source
    assert any("pointwise_chain.py:" in line for line in kernel.source_lines)

    bench = r.one(ev.BenchmarkMeasured)
    assert bench.eager_ms > 0 and bench.compiled_ms > 0
    assert bench.reps == 3 and bench.iters == 5 and bench.warmup >= 5
    assert bench.timer == "perf_counter" and bench.threads == settings.threads
    assert len(bench.load_avg) == 3
    # First call minus a steady call vs torch's own record of the compile.
    assert bench.compile_s == pytest.approx(compile_rec.wall_s, rel=0.25, abs=0.05)


def test_recompiles_static_vs_dynamic_and_the_recompile_limit(tmp_path):
    path = _workload(
        tmp_path,
        "shapes",
        """
        \"\"\"A tiny op whose first dim changes.\"\"\"
        import torch
        import torch._dynamo

        torch._dynamo.config.recompile_limit = 3
        SIZES = SMALL_SIZES = [3, 5, 7, 9, 11, 3]
        EAGER = [0]  # calls that ran eager, counted by the workload itself

        def f(x):
            if not torch.compiler.is_compiling():
                EAGER[0] += 1
            return torch.relu(x) * 2 + 1

        def inputs_for(n, device, dtype):
            print(f"eager calls so far: {EAGER[0]}")
            return (torch.randn(n, 4, device=device, dtype=dtype),)

        def build(device, dtype):
            return f, inputs_for(2, device, dtype)
        """,
    )
    static = run_worker(
        RunSettings(target=str(path), dynamic="false", sweep=True, benchmark=False, **FAST)
    )
    _assert_clean_finish(static)
    steps = static.of(ev.ShapeStepMeasured)
    assert [s.size for s in steps] == [3, 5, 7, 9, 11, 3]
    assert [s.recompiled for s in steps] == [True, True, True, False, False, False]
    assert steps[0].reason is None
    for step in steps[1:3]:
        assert "size mismatch at index 0" in step.reason
    # The limit: new sizes run eager, a size with a cached graph still runs compiled,
    # and that is said loudly, once, with the count of calls that ran eager.
    assert [s.ran_eager for s in steps] == [False, False, False, True, True, False]
    (hit,) = static.of(ev.RecompileLimitHit)
    assert hit.function == "f" and hit.limit == 3
    # The workload's own count when the last size starts, less the harness's one
    # eager call before compiling, is what the guard hook counted.
    counted = int(static.stdout.splitlines()[-1].rsplit(":", 1)[1])
    assert static.one(ev.EagerCallsCounted).calls == counted - 1 > 10
    reasons = static.of(ev.RecompileTriggered)
    assert len(reasons) >= 2 and all(r.compile_id.startswith("sweep:") for r in reasons)
    # Every compile has its CPU seconds under its own id: the sweep's, after its reset,
    # too (the frame refused at the limit compiled nothing: no CPU, none needed).
    cpu = {e.compile_id for e in static.of(ev.CompileCpuMeasured)}
    finished = [c for c in static.of(ev.CompileFinished) if not c.is_backward]
    compiled = {c.compile_id for c in finished if not c.fail_type}
    assert compiled <= cpu and any(cid.startswith("sweep:") for cid in compiled), (compiled, cpu)
    run = Session.from_events(static.events).runs["test"]
    assert compile_time(run).measure == "cpu"
    done = static.one(ev.SweepFinished)
    assert done.compiles == 3
    assert done.cumulative_transition_s == pytest.approx(sum(s.transition_s for s in steps))
    assert all(s.transition_s > 0.05 for s in steps[:3])
    # Each steady latency is measured like the benchmark: a median with its spread.
    assert all(s.latency_ms > 0 and s.latency_spread_ms is not None for s in steps)

    dynamic = run_worker(
        RunSettings(target=str(path), dynamic="true", sweep=True, benchmark=False, **FAST)
    )
    _assert_clean_finish(dynamic)
    dsteps = dynamic.of(ev.ShapeStepMeasured)
    assert [s.recompiled for s in dsteps] == [True, False, False, False, False, False]
    assert not any(s.ran_eager for s in dsteps) and not dynamic.of(ev.EagerCallsCounted)
    assert dynamic.one(ev.SweepFinished).compiles == 1 < done.compiles
    assert dynamic.of(ev.DimMadeDynamic)
    # Compile ids stay unique across the main compile and the sweep.
    ids = [c.compile_id for c in dynamic.of(ev.CompileFinished)]
    assert len(ids) == len(set(ids))


def test_compile_failure_keeps_what_was_captured(tmp_path):
    path = _workload(
        tmp_path,
        "fails",
        """
        import torch
        import torch._inductor.config

        # Inductor's own switch for testing its error path.
        torch._inductor.config._raise_error_for_testing = True

        def build(device, dtype):
            return (lambda x: x.sin() + 1), (torch.randn(4, device=device, dtype=dtype),)
        """,
    )
    r = run_worker(RunSettings(target=str(path), **FAST))
    _assert_clean_finish(r, "error")
    err = r.one(ev.ErrorRaised)
    assert err.stage == "compile"
    assert err.message.startswith("compile failed: ") and "\n" not in err.message
    # Where: the user's line (the function being compiled), the frame inside torch.
    at = f"(at {path}:{_line_of(path, 'return (lambda x')}, inside torch/_inductor/"
    assert at in err.message, err.message
    assert "Traceback" in err.traceback
    # The phases up to the failure were streamed before the error.
    names = [e.name for e in r.events[: r.events.index(err)] if isinstance(e, ev.PhaseStarted)]
    assert "dynamo" in names and "backend_compile" in names


def test_workload_prints_never_corrupt_the_event_stream(tmp_path):
    path = _workload(
        tmp_path,
        "chatty",
        """
        import os
        import sys

        import torch

        print('{"type": "RunFinished", "run_id": "fake", "status": "ok", "wall_s": 0}')
        sys.stdout.write("a partial line without a newline")
        os.write(1, b"written straight to fd 1\\n")
        print("and to stderr", file=sys.stderr)

        def f(x):
            return torch.cos(x) + 1

        def build(device, dtype):
            for i in range(3000):
                print("noise", i, "{" * (i % 7))
            return f, (torch.randn(4, 4, device=device, dtype=dtype),)
        """,
    )
    r = run_worker(RunSettings(target=str(path), backend="aot_eager", mode="max-autotune", **FAST))
    _assert_clean_finish(r)
    assert len(r.of(ev.RunFinished)) == 1 and getattr(r.events[-1], "run_id", None) == "test"
    assert "noise 2999" in r.stdout and "written straight to fd 1" in r.stdout
    assert "and to stderr" in r.stderr
    # Every line on the events fd decoded.
    assert not r.malformed
    notes = [e.message for e in r.of(ev.LogEmitted)]
    assert any("inductor backend only" in m for m in notes)
    assert r.one(ev.BenchmarkMeasured).compiled_ms > 0
    assert not r.of(ev.KernelGenerated)  # aot_eager generates no kernels


def test_training_step_counts_the_backward_compile():
    r = run_worker(RunSettings(target="training-step", **FAST))
    _assert_clean_finish(r)
    kernels = r.of(ev.KernelGenerated)
    # The backward graph is compiled lazily at the first .backward() (its own
    # bwd_compilation_metrics record), or loaded with the forward on an
    # AOTAutograd cache hit: either way its kernels are listed.
    assert {k.graph for k in kernels} >= {"forward", "backward"}
    assert any(k.kind == "extern" for k in kernels)
    compiles = r.of(ev.CompileFinished)
    assert all(c.wall_s > 0 for c in compiles)
    # The first compiled call pays forward, backward and resume-frame compiles.
    bench = r.one(ev.BenchmarkMeasured)
    assert bench.compile_s >= 0.9 * sum(c.wall_s for c in compiles)


def test_a_torch_api_gone_from_the_worker_is_unavailable_not_fatal(tmp_path):
    # A torch without a private API a probe uses, removed in the worker itself
    # before the run (sitecustomize runs first in every Python it starts). torch
    # itself no longer looks it up, so only the probe notices, as on a release
    # that moved it. (tests/unit/test_worker_probes.py removes the others in-process.)
    site = tmp_path / "site"
    site.mkdir()
    (site / "sitecustomize.py").write_text(
        textwrap.dedent(
            """
            import sys
            if "dlcprof.worker" in " ".join(sys.orig_argv):
                import torch._dynamo
                import torch._C._dynamo.eval_frame as eval_frame
                del eval_frame.set_guard_complete_hook
            """
        )
    )
    path = _workload(
        tmp_path,
        "limited",
        """
        import torch
        import torch._dynamo

        torch._dynamo.config.recompile_limit = 1
        SIZES = SMALL_SIZES = [3, 5, 7]

        def inputs_for(n, device, dtype):
            return (torch.randn(n, device=device, dtype=dtype),)

        def build(device, dtype):
            return torch.sin, inputs_for(3, device, dtype)
        """,
    )
    r = run_worker(
        RunSettings(
            target=str(path), dynamic="false", backend="eager", sweep=True, benchmark=False, **FAST
        ),
        env={"PYTHONPATH": str(site)},
    )
    _assert_clean_finish(r)
    (gone,) = r.of(ev.ProbeUnavailable)
    assert gone.probe == "guards.eager_calls" and "set_guard_complete_hook" in gone.reason
    # The rest works: the limit is still said, the sweep still measured, only the count is n/a.
    assert r.one(ev.RecompileLimitHit).limit == 1
    assert [s.size for s in r.of(ev.ShapeStepMeasured)] == [3, 5, 7]
    assert not r.of(ev.EagerCallsCounted)


def test_a_cache_hit_cites_the_edited_file_not_the_one_cached(tmp_path):
    """Inductor's graph cache returns the provenance of the compile that wrote
    it: after three lines were added, in another checkout, a cache hit must
    still cite this file and its lines."""
    body = """
        import torch

        def f(x):
            y = torch.cos(x) * 5.0
            return torch.tanh(y) - 2.0

        def build(device, dtype):
            return f, (torch.randn(32, device=device, dtype=dtype),)
        """
    (tmp_path / "a").mkdir(), (tmp_path / "b").mkdir()
    first = _workload(tmp_path / "a", "m", body)
    run_worker(RunSettings(target=str(first), benchmark=False, **FAST))
    edited = tmp_path / "b" / "m.py"
    edited.write_text("# one\n# two\n# three\n" + first.read_text())
    r = run_worker(RunSettings(target=str(edited), benchmark=False, **FAST))
    _assert_clean_finish(r)
    assert [c.cache for c in r.of(ev.CompileFinished)] == ["hit"]
    lines = {line for k in r.of(ev.KernelGenerated) for line in k.source_lines}
    assert f"{edited}:{_line_of(edited, 'y = torch.cos')} y = torch.cos(x) * 5.0" in lines
    assert all(line.startswith(f"{edited}:") for line in lines), lines
