"""A scripted engine in place of a worker: ``ScriptedLiveRun`` stands in for
``dlcprof.engine.LiveRun`` and emits a script's events from a background
thread exactly like the real one, so batching, selection and error paths run
as they do live (the TUI's and the run controller's tests)."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, cast

from dlcprof import events as ev
from dlcprof.settings import RunSettings

if TYPE_CHECKING:
    from dlcprof.engine import LiveRun

KERNEL_SRC = (
    '#include "prefix.h"\nextern "C" void kernel(const float* in_ptr0, float* out_ptr0)\n{\n}\n'
)


def scripted_run(run_id: str, s: RunSettings, t: float = 1000.0) -> list[ev.Event]:
    """A plausible compile + benchmark (or sweep) of one run, in event order."""
    out: list[ev.Event] = [
        ev.WorkerReady(
            pid=1,
            schema=1,
            torch_version="2.13.0+cpu",
            python_version="3.11",
            cuda_available=False,
            device_name="Test CPU",
            cpu_count=4,
            t=t,
        ),
        ev.RunStarted(
            run_id=run_id,
            target=s.target,
            workload=s.target,
            mode=s.mode,
            dynamic=s.dynamic,
            backend=s.backend,
            device="cpu",
            device_name="Test CPU",
            dtype=s.dtype,
            size=s.size,
            cache=s.cache,
            threads=1,
            iters=20,
            shapes=[],
            sweep=s.sweeping,
            benchmark=s.benchmark,
            torch_version="2.13.0+cpu",
            t=t + 0.1,
        ),
        ev.WorkloadLoaded(
            run_id=run_id,
            name=s.target,
            description="test",
            sizes=[4, 8],
            has_inputs_for=True,
            t=t + 0.2,
        ),
        ev.PhaseStarted(run_id=run_id, compile_id=None, name="dynamo", thread=1, t=t + 0.3),
    ]
    for i, (name, start, dur) in enumerate(
        [
            ("bytecode_tracing", 0.31, 0.1),
            ("inductor_compile", 0.45, 0.4),
            ("GraphLowering.run", 0.46, 0.05),
            ("Scheduler.__init__", 0.52, 0.02),
            ("Scheduler.codegen", 0.55, 0.1),
            ("compile_file", 0.7, 0.12),
        ]
    ):
        out.append(
            ev.PhaseEnded(
                run_id=run_id,
                compile_id="0/0",
                name=name,
                thread=1 + (i == 5),
                start_t=t + start,
                duration_s=dur,
                t=t + start + dur,
            )
        )
    out += [
        ev.PhaseEnded(
            run_id=run_id,
            compile_id="0/0",
            name="dynamo",
            thread=1,
            start_t=t + 0.3,
            duration_s=0.6,
            t=t + 0.9,
        ),
        ev.KernelGenerated(
            run_id=run_id,
            compile_id="0/0",
            name="cpp_fused_cos_mul_sin_0",
            kind="pointwise",
            fused_ops=["aten.sin", "aten.cos", "aten.mul"],
            source=KERNEL_SRC,
            source_lines=["chain.py:3 y = x.sin() * x.cos()"],
            order=0,
            t=t + 0.85,
        ),
        ev.CompileFinished(
            run_id=run_id,
            compile_id="0/0",
            wall_s=0.6,
            start_t=t + 0.3,
            is_backward=False,
            recompile_reason=None,
            fail_type=None,
            fail_reason=None,
            graph_op_count=3,
            guard_count=2,
            cache="miss",
            metrics={},
            t=t + 0.9,
        ),
    ]
    if s.sweep:
        steps = [0.5, 0.5] if s.dynamic == "false" else [0.5, 0.1]
        for i, (size, cost) in enumerate(zip([4, 8], steps, strict=True)):
            out.append(
                ev.ShapeStepMeasured(
                    run_id=run_id,
                    size=size,
                    recompiled=True,
                    transition_s=cost,
                    latency_ms=1.0,
                    reason=None,
                    t=t + 1 + i,
                )
            )
        out.append(
            ev.SweepFinished(run_id=run_id, cumulative_transition_s=sum(steps), compiles=2, t=t + 3)
        )
    if s.benchmark:
        out.append(
            ev.BenchmarkMeasured(
                run_id=run_id,
                eager_ms=2.0,
                compiled_ms=0.5,
                eager_spread_ms=0.1,
                compiled_spread_ms=0.05,
                reps=7,
                iters=20,
                warmup=5,
                compile_s=0.6,
                threads=1,
                load_avg=[0.1, 0.1, 0.1],
                timer="perf_counter",
                t=t + 2,
            )
        )
        kernel = {
            "compile_id": "0/0",
            "graph": None,
            "name": "cpp_fused_cos_mul_sin_0",
            "order": 0,
            "time_ms": 0.3,
            "spread_ms": 0.01,
            "launches": 1,
            "bytes": 8192,
            "eager_ms": 1.5,
            "why": {},
        }
        out += [
            ev.ProfilingStarted(run_id=run_id, method="perf_counter", t=t + 2.1),
            ev.KernelsProfiled(
                run_id=run_id,
                method="perf_counter",
                calls=35,
                wall_s=0.5,
                kernels=[kernel],
                compiled_ms=0.5,
                call_ms=0.51,
                eager_ms=2.0,
                eager_nodes_ms=1.8,
                copy_gbps=10.0,
                t=t + 2.6,
            ),
        ]
    out.append(ev.RunFinished(run_id=run_id, status="ok", wall_s=3.0, t=t + 3))
    return out


class ScriptedLiveRun:
    """Stands in for dlcprof.engine.LiveRun: same interface, events from a script."""

    instances: list[ScriptedLiveRun] = []
    script: Callable[[str, RunSettings], list[ev.Event]] = staticmethod(scripted_run)
    hold = False  # stop before the run finishes, until cancelled
    exit_event: ev.WorkerExited | None = None  # how the worker ends (default: clean)
    pause_s = 0.002  # between events; 0 floods

    def __init__(
        self,
        settings: RunSettings,
        emit: Callable[[ev.Event], None],
        worker: object = None,
        **_: object,
    ) -> None:
        self.settings, self.emit, self.worker = settings, emit, worker
        self.run_id: str | None = None
        self.reason = ""
        self._cancelled = threading.Event()
        self._thread = threading.Thread(target=self._pump, daemon=True)
        type(self).instances.append(self)

    def start(self) -> str:
        self.run_id = f"run{len(type(self).instances)}"
        self._thread.start()
        return self.run_id

    def _pump(self) -> None:
        assert self.run_id is not None
        for e in type(self).script(self.run_id, self.settings):
            if self._cancelled.is_set() or (type(self).hold and isinstance(e, ev.RunFinished)):
                break
            self.emit(e)
            if type(self).pause_s:
                time.sleep(type(self).pause_s)
        if type(self).hold:
            self._cancelled.wait(10)
        if self._cancelled.is_set():
            self.emit(
                ev.WorkerExited(
                    returncode=-15, signal="SIGTERM", message=self.reason, cancelled=True
                )
            )
        else:
            self.emit(type(self).exit_event or ev.WorkerExited(0, None, "worker finished"))

    def cancel(self, reason: str = "cancelled by user") -> None:
        self.reason = reason
        self._cancelled.set()

    def wait(self, timeout: float | None = None) -> bool:
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


def fold_until(c, inbox: queue.Queue, done, timeout_s: float = 10.0) -> None:
    """Fold events as the app's tick would, until ``done()``."""
    deadline = time.monotonic() + timeout_s
    while not done():
        assert time.monotonic() < deadline, "condition not met in time"
        try:
            c.apply(inbox.get(timeout=0.05))
        except queue.Empty:
            pass


def live_runs(cls: type[ScriptedLiveRun]) -> Callable[..., LiveRun]:
    """The class as ``Engine.live_run`` takes it: a stand-in with LiveRun's interface."""
    return cast("Callable[..., LiveRun]", cls)
