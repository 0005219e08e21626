"""Sessions for the report tests.

Real recorded streams (``tests/fixtures``, written by the worker; loaded by
``conftest.load_fixture``) are found by what they contain, not by file name.
``synthetic_events`` is a small hand-made stream shaped like a real one, for
edge cases the recordings lack.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import partial

import pytest

from dlcprof import events as ev
from dlcprof.session import Run, Session
from helpers.events import run_started
from helpers.paper import paper_events
from helpers.paths import FIXTURES
from helpers.recorded import fixture_names, load_fixture

# --- real recordings ------------------------------------------------------------------


def recorded(name: str) -> Session:
    return Session.from_events(load_fixture(name))


def recorded_run(name: str) -> tuple[Session, Run]:
    """A recorded session and its latest run."""
    session = recorded(name)
    return session, session.latest_run


def recorded_sessions() -> dict[str, Callable[[], Session]]:
    """Every recorded stream on its own, the paper session they make together,
    and the hand-made stream, by a file-safe name."""
    out: dict[str, Callable[[], Session]] = {
        n.replace("/", "-"): partial(recorded, n) for n in fixture_names()
    }
    out["paper-session"] = lambda: Session.from_events(paper_events())
    out["synthetic"] = lambda: Session.from_events(synthetic_events())
    return out


def find_fixture(pred: Callable[[Session], bool]) -> Session | None:
    for name in fixture_names():
        s = recorded(name)
        if pred(s):
            return s
    return None


def has_benchmark(s: Session) -> bool:
    return any(r.benchmark is not None for r in s.runs.values())


def sweep_run(s: Session, dynamic: str) -> Run | None:
    for r in s.runs.values():
        if r.sweep and r.settings is not None and r.settings.dynamic == dynamic:
            return r
    return None


def has_graph_breaks(s: Session) -> bool:
    return any(r.graph_breaks for r in s.runs.values())


# --- a hand-made stream -------------------------------------------------------------

MAIN, POOL = 140245011, 140244977  # thread idents, as Python reports them
T0 = 1_764_500_000.0

KERNEL_SRC = """\
#include <ATen/native/cpu/vec_reduce_ops.h>
#include "/tmp/torchinductor_root/pi/cpicxudqmdsjh5cm4klbtbrvy2cxwr7whxl3md2zzdjdf3orvfdf.h"
extern "C"  void kernel(const float* in_ptr0, float* out_ptr0)
{
    #pragma omp parallel num_threads(1)
    {
        for(int64_t x0=0L; x0<static_cast<int64_t>(ks0*1024L); x0+=16L)
        {
            auto tmp0 = at::vec::Vectorized<float>::loadu(in_ptr0 + x0, 16L);
            auto tmp1 = tmp0.sin();
            auto tmp2 = tmp0.cos();
            auto tmp3 = tmp1 * tmp2;
            tmp3.store(out_ptr0 + static_cast<int64_t>(x0));
        }
    }
}
"""

CHAIN_OPS = [
    "aten.sin",
    "aten.cos",
    "aten.mul",
    "aten.relu",
    "aten.add",
    "aten.abs",
    "aten.neg",
    "aten.exp",
    "aten.tanh",
    "aten.sigmoid",
    "aten.div",
]


class _Stream:
    def __init__(self, t: float = T0) -> None:
        self.t = t
        self.events: list[ev.Event] = []

    def add(self, e: ev.Event, at: float | None = None) -> None:
        e.t = self.t if at is None else at
        self.events.append(e)

    def tick(self, dt: float) -> None:
        self.t += dt


def _phases(
    s: _Stream, run_id: str, cid: str, scale: float, cache: str = "miss"
) -> list[ev.PhaseEnded]:
    """A compile's phase tree, as torch's chromium events nest it."""
    t = s.t
    tree = [  # name, start offset, duration, thread, cache_state
        ("dynamo", 0.0, 1.90, MAIN, None),
        ("entire_frame_compile", 0.01, 1.88, MAIN, None),
        ("bytecode_tracing", 0.02, 0.12, MAIN, None),
        ("backend_compile", 0.15, 1.65, MAIN, None),
        ("create_aot_dispatcher_function", 0.16, 1.62, MAIN, None),
        ("aot_trace_joint_graph", 0.17, 0.10, MAIN, None),
        ("inductor_compile", 0.30, 1.45, MAIN, cache),
        ("GraphLowering.run", 0.32, 0.05, MAIN, None),
        ("Scheduler.__init__", 0.38, 0.03, MAIN, None),
        ("Scheduler.codegen", 0.42, 0.06, MAIN, None),
        ("PythonWrapperCodegen.generate", 0.49, 0.02, MAIN, None),
        ("async_compile.wait", 0.52, 1.10, MAIN, None),
        ("compile_file", 0.53, 1.05, POOL, None),
        ("PyCodeCache.load_by_key_path", 1.64, 0.06, MAIN, None),
        ("build_guards", 1.82, 0.04, MAIN, None),
    ]
    ends = []
    for name, off, dur, thread, cache_state in tree:
        s.add(ev.PhaseStarted(run_id, None, name, thread), at=t + off * scale)
        ends.append(
            ev.PhaseEnded(
                run_id,
                None if thread == POOL else cid,  # pool threads carry no id
                name,
                thread,
                start_t=t + off * scale,
                duration_s=dur * scale,
                cache_state=cache_state,
            )
        )
        ends[-1].t = t + (off + dur) * scale
    # End events arrive in end order, as they do live.
    for e in sorted(ends, key=lambda e: e.t):
        s.add(e, at=e.t)
    s.t = t + 1.92 * scale
    return ends


def _compile(
    s: _Stream,
    run_id: str,
    cid: str,
    scale: float = 1.0,
    reason: str | None = None,
    kernels: list[tuple[str, str, list[str]]] | None = None,
    cache: str = "miss",
) -> None:
    start = s.t
    _phases(s, run_id, cid, scale, cache)
    for order, (name, kind, ops) in enumerate(kernels or []):
        src = KERNEL_SRC if kind != "extern" else ""
        lines = [f"workloads/pointwise_chain.py:{12 + order} y = torch.sin(x) * torch.cos(x)"]
        s.add(ev.KernelGenerated(run_id, cid, name, kind, ops, src, lines, order))
    s.add(
        ev.CompileFinished(
            run_id,
            cid,
            wall_s=s.t - start,
            start_t=start,
            is_backward=False,
            recompile_reason=reason,
            fail_type=None,
            fail_reason=None,
            graph_op_count=11,
            guard_count=9,
            cache=cache,
            metrics={"entire_frame_compile_time_s": 1.88 * scale, "ir_count": 40},
        )
    )


def _start(s: _Stream, run_id: str, workload: str, target: str, **kw: object) -> None:
    s.add(ev.WorkerReady(4242, ev.SCHEMA_VERSION, "2.13.0+cpu", "3.11.9", False, "AMD EPYC", 2))
    s.tick(0.05)
    fields = dict(run_id=run_id, target=target, workload=workload, device_name="AMD EPYC 7B13")
    s.add(run_started(**{**fields, **kw}))
    s.tick(0.02)
    s.add(ev.WorkloadLoaded(run_id, workload, "A chain of pointwise ops", [64, 128], True))
    s.tick(0.05)


def _finish(s: _Stream, run_id: str, started: float) -> None:
    s.tick(0.01)
    s.add(ev.RunFinished(run_id, "ok", s.t - started))
    s.tick(0.05)
    s.add(ev.WorkerExited(0, None, "worker exited normally"))


def _benchmark_run(s: _Stream, run_id: str = "a1b2c3d4") -> None:
    started = s.t
    _start(s, run_id, "pointwise_chain", "pointwise_chain")
    name = "cpp_fused_abs_add_cos_div_exp_mul_neg_relu_sigmoid_sin_tanh_0"
    _compile(s, run_id, "0/0", kernels=[(name, "pointwise", CHAIN_OPS)])
    s.tick(0.3)
    s.add(
        ev.BenchmarkMeasured(
            run_id,
            eager_ms=11.8,
            compiled_ms=1.9,
            eager_spread_ms=0.4,
            compiled_spread_ms=0.05,
            reps=7,
            iters=20,
            warmup=5,
            compile_s=1.93,
            threads=1,
            load_avg=[0.41, 0.3, 0.2],
            timer="perf_counter",
        )
    )
    _finish(s, run_id, started)


def _sweep_run(s: _Stream, run_id: str, dynamic: str) -> None:
    started = s.t
    sizes = [64, 128, 256, 512, 1024]
    _start(s, run_id, "pointwise_chain", "pointwise_chain", dynamic=dynamic, shapes=sizes)
    name = "cpp_fused_abs_add_cos_div_exp_mul_neg_relu_sigmoid_sin_tanh_0"
    prev = None
    for i, size in enumerate(sizes):
        recompiled, reason = i == 0, None
        if dynamic == "false" and i > 0:
            reason = (
                f"0/{i - 1}: tensor 'x' size mismatch at index 0. expected {prev}, actual {size}"
            )
            s.add(ev.RecompileTriggered(run_id, None, reason))
            recompiled = True
        elif dynamic == "true" and i == 1:
            recompiled = False
        step_start = s.t
        if recompiled:
            cid = f"0/{i}"
            _compile(
                s, run_id, cid, scale=0.6, reason=reason, kernels=[(name, "pointwise", CHAIN_OPS)]
            )
            if dynamic == "true" and i == 0:
                s.add(ev.DimMadeDynamic(run_id, cid, "s0", "L['x'].size()[0]"))
        else:
            s.tick(0.01)
        transition = s.t - step_start
        latency = size * 0.0115 * (1.15 if dynamic == "true" else 1.0)
        s.tick(latency * 7 / 1000)
        s.add(ev.ShapeStepMeasured(run_id, size, recompiled, transition, latency, reason))
        prev = size
    total = sum(
        e.transition_s
        for e in s.events
        if isinstance(e, ev.ShapeStepMeasured) and e.run_id == run_id
    )
    s.add(
        ev.SweepFinished(
            run_id,
            total,
            sum(1 for e in s.events if isinstance(e, ev.CompileFinished) and e.run_id == run_id),
        )
    )
    _finish(s, run_id, started)


def _graph_break_run(s: _Stream, run_id: str = "9f8e7d6c") -> None:
    started = s.t
    _start(s, run_id, "branchy", "examples/branchy.py:forward")
    s.add(
        ev.GraphBroken(
            run_id,
            "0/0",
            "Data-dependent branching",
            "examples/branchy.py:14",
            ["Use torch.cond to express dynamic control flow."],
        )
    )
    _compile(
        s,
        run_id,
        "0/0",
        0.5,
        kernels=[("cpp_fused_add_mul_0", "pointwise", ["aten.add", "aten.mul"])],
    )
    _compile(
        s,
        run_id,
        "1/0",
        0.4,
        kernels=[
            ("cpp_fused_relu_sum_0", "reduction", ["aten.relu", "aten.sum"]),
            ("extern_kernels.mm", "extern", ["aten.mm"]),
        ],
    )
    s.add(ev.LogEmitted(run_id, "warning", "torch", "Graph break from `Tensor.item()`"))
    s.tick(0.2)
    s.add(
        ev.BenchmarkMeasured(
            run_id,
            eager_ms=0.21,
            compiled_ms=0.34,
            eager_spread_ms=0.01,
            compiled_spread_ms=0.02,
            reps=7,
            iters=20,
            warmup=5,
            compile_s=1.7,
            threads=1,
            load_avg=[0.6, 0.4, 0.3],
            timer="perf_counter",
        )
    )
    _finish(s, run_id, started)


def synthetic_events(
    benchmark: bool = True, sweeps: bool = True, graph_breaks: bool = True, monitors: bool = True
) -> list[ev.Event]:
    s = _Stream()
    if monitors:
        s.add(ev.MonitorStatus("nvml", False, "no NVIDIA GPU (NVMLError_LibraryNotFound)"))
        s.add(ev.MonitorStatus("cpu", True, "CPU utilization via psutil"))
        s.add(ev.MonitorStatus("py-spy", True, "py-spy 0.4.0 attached"))
    if benchmark:
        _benchmark_run(s)
    if sweeps:
        _sweep_run(s, "5a5a0001", "false")
        _sweep_run(s, "5a5a0002", "true")
    if graph_breaks:
        _graph_break_run(s)
    if monitors:
        end = s.t
        t, i = T0, 0
        samples = []
        while t < end:
            # Shaped like dlcprof.monitors.device on a CPU machine.
            compiling = i % 9 < 5
            values: dict[str, float | None] = {
                "worker_cpu_pct": 98.0 if compiling else 100.0 - 40 * (i % 2),
                "worker_rss_mb": 610.0 + 2.5 * i,
                "cxx_compilers": 1.0 if compiling and i % 3 else 0.0,
                "children_cpu_pct": 95.0 if compiling and i % 3 else 0.0,
                "system_cpu_pct": 97.0 if compiling else 55.0,
            }
            samples.append(ev.DeviceSampled("cpu", values))
            samples[-1].t = t
            t += 0.25
            i += 1
        s.events.extend(samples)
        s.events.sort(key=lambda e: e.t)
        s.add(
            ev.HotFramesSampled(
                412,
                [
                    {
                        "function": "_compile_file",
                        "file": "torch/_inductor/cpp_builder.py",
                        "line": 334,
                        "thread": "MainThread",
                        "own": 160,
                        "total": 175,
                        "phase": "async_compile.wait",
                    },
                    {
                        "function": "run_node",
                        "file": "torch/_inductor/graph.py",
                        "line": 1123,
                        "thread": "MainThread",
                        "own": 41,
                        "total": 95,
                        "phase": "GraphLowering.run",
                    },
                    {
                        "function": "<lambda>",
                        "file": "torch/_dynamo/symbolic_convert.py",
                        "line": 870,
                        "thread": "MainThread",
                        "own": 22,
                        "total": 60,
                        "phase": "bytecode_tracing",
                    },
                ],
            )
        )
    return s.events


def synthetic_session(**kw: bool) -> Session:
    return Session.from_events(synthetic_events(**kw))


# --- what the report tests run on ------------------------------------------------------


def _require(pred: Callable[[Session], bool], what: str) -> Session:
    found = find_fixture(pred)
    if found is None:
        # Real recordings are the ground truth for these tests: never stand in for them.
        pytest.fail(f"no recorded fixture in {FIXTURES} with {what} (scripts/record_fixtures.py)")
    return found


def benchmark_session() -> Session:
    """A plain recorded run: one compile, a benchmark, no sweep, no graph break."""
    return _require(
        lambda s: (
            len(s.runs) == 1
            and has_benchmark(s)
            and not has_graph_breaks(s)
            and not any(r.sweep for r in s.runs.values())
        ),
        "one run with a benchmark and no sweep",
    )


def sweep_sessions() -> tuple[Session, Session]:
    """(static, dynamic) recorded sessions that swept the same workload over shapes."""
    static = _require(lambda s: sweep_run(s, "false") is not None, "a dynamic=false sweep")
    dynamic = _require(
        lambda s: sweep_run(s, "true") is not None or sweep_run(s, "auto") is not None,
        "a dynamic=true sweep",
    )
    return static, dynamic


def graph_break_session() -> Session:
    return _require(has_graph_breaks, "graph breaks")


def full_session() -> Session:
    """Every top-level recording in one session (several runs, as in a TUI session)."""
    names = [n for n in fixture_names() if "/" not in n]
    if not names:
        pytest.fail(f"no recorded fixtures in {FIXTURES}")
    return Session.from_events([e for n in names for e in load_fixture(n)])


def with_monitors(session: Session) -> Session:
    """A recorded session plus monitor events shaped like dlcprof.monitors emits
    (the worker recordings carry none): device samples over the session,
    monitor statuses, a hot-frames aggregate of the latest run.

    The samples and statuses carry no run id, as in reports written before
    monitor events did: the Session places them by time."""
    events = list(session.events)
    t0, t1 = min(e.t for e in events), max(e.t for e in events)
    monitor = synthetic_events(benchmark=False, sweeps=False, graph_breaks=False)
    extra: list[ev.Event] = [e for e in monitor if isinstance(e, ev.MonitorStatus)]
    for e in extra:
        e.t = t0
    # The run started last (the stream is replayed in time order).
    started = sorted((e for e in events if isinstance(e, ev.RunStarted)), key=lambda e: e.t)
    for e in monitor:
        if isinstance(e, ev.HotFramesSampled):
            e.t, e.run_id = t1, started[-1].run_id if started else None
            extra.append(e)
    # Sampled every 0.25 s, or coarser over a session of fixtures recorded days apart.
    step = max(0.25, (t1 - t0) / 2000)
    i, t = 0, t0
    while t <= t1:
        compiling = i % 9 < 5
        values: dict[str, float | None] = {
            "worker_cpu_pct": 98.0 if compiling else 60.0,
            "worker_rss_mb": 610.0 + 2.5 * i,
            "cxx_compilers": 1.0 if compiling and i % 3 else 0.0,
            "system_cpu_pct": 97.0 if compiling else 55.0,
            "gpu_util_pct": None,
        }
        extra.append(ev.DeviceSampled("cpu", values, t=t))
        i, t = i + 1, t + step
    return Session.from_events(sorted(events + extra, key=lambda e: e.t))
