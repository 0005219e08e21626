"""Per-kernel times in an attached program: the launch instrumentation the
profiling stage uses (dlcprof/worker/launches.py) on a few of the program's own
calls of each compiled graph, on the program's own thread.

A run's profiling stage calls the compiled function itself; an attached
program's calls are the user's (real data, an optimizer stepping), so none is
added: ``SAMPLED_WHICH`` (dlcprof/attach_contract.py) run with each launch of the
graph's code going through the worker's recorder (``GraphPlan``): on the CPU
``perf_counter`` around each launch; on a GPU a ``record_function`` range per
launch and torch.profiler's CUDA activity of that one call. The first call is
left alone (it may autotune, record CUDA graphs, fault pages in). Each sampled
call is one repetition; the kernels' figures are the stage's own
(``attribute_launches``), sent as the ``KernelsProfiled`` a run sends, every
graph of the process in it (with why where not sampled), again as each graph
is done and at exit.

The observer's cost: a sampled call is slower (a clock read or a range per
launch; on a GPU the profiler's start, synchronize and stop). graph_calls
times sampled calls apart from the others, so the time per call it reports
leaves them out and the cost is stated (figures/job/program.py).

Never in the program's way: one sampled call at a time; any failure of ours
makes that graph's kernel times n/a with the reason, and the call runs as it
would.
"""

from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable
from dataclasses import field
from typing import TYPE_CHECKING, Any

from dlcprof import events as ev
from dlcprof.attach_contract import (
    NOT_SAMPLED_YET,
    SAMPLE_AFTER_CALLS,
    SAMPLED_CALLS,
    SAMPLED_WHICH,
)
from dlcprof.data import data
from dlcprof.trace_records.kernels import CompiledGraph, KernelCollector
from dlcprof.worker.paused_gc import paused_gc
from dlcprof.worker.probes import ProbeNotes

if TYPE_CHECKING:
    from dlcprof.worker import launches

PROBE = "kernels.sample"
IN_PROGRAM = f", on {SAMPLED_WHICH} in the program"  # after the stage's method
EAGER_WHY = "not replayed in an attached program: dlcprof run FILE.py:FUNC replays them"
COPY_WHY = "not measured in an attached program: it would cost the program a large copy"
# Calls of a graph after which its kernels are no longer waited for.
WAIT_CALLS = 50


@data
class _Graph:
    """One compile id's sampling."""

    seen: int = 0  # calls so far
    plan: launches.GraphPlan | None = None
    gpu: bool = False
    sampled_s: float = 0.0  # the sampled calls, our setup and reading included
    kernels: list[dict[str, Any]] | None = None  # once done with times
    why: str | None = None  # once done without
    looked: int = 0  # calls that found no kernels reported yet

    @property
    def done(self) -> bool:
        return self.kernels is not None or self.why is not None


@data
class Window:
    """One sampled call in flight."""

    cid: str
    graph: _Graph
    t0: float
    stack: contextlib.ExitStack
    prof: Any = None
    before: list[int] = field(default_factory=list)  # launch counts (GPU)
    entered: int = 0  # calls of the graph's code() before this one


class KernelSampler:
    """``begin(cid, inputs)`` before a graph's call (a Window when this call is
    sampled), ``end(window, ok)`` after it; ``send`` gets KernelsProfiled."""

    def __init__(
        self,
        run_id: str,
        send: Callable[[ev.Event], None],
        collector: Callable[[], KernelCollector | None],
        notes: Callable[[], ProbeNotes],
    ) -> None:
        self.send = send
        self.collector = collector
        self.notes = notes
        self.restart(run_id)

    def restart(self, run_id: str) -> None:
        """Start over (a forked child samples its own calls)."""
        self.run_id = run_id
        self._graphs: dict[str, _Graph] = {}
        self._busy = threading.Lock()
        self._sent: tuple[int, int, bool] = (0, 0, False)

    # --- around each call ------------------------------------------------------------

    def begin(self, cid: str, inputs: Any) -> Window | None:
        g = self._graphs.get(cid)
        if g is None:
            g = self._graphs[cid] = _Graph()
        if g.done:
            return None
        g.seen += 1
        if g.seen <= SAMPLE_AFTER_CALLS or not self._busy.acquire(blocking=False):
            return None
        t0 = time.perf_counter()
        try:
            with paused_gc():
                window = self._open(cid, g, inputs, t0)
        except Exception as e:  # noqa: BLE001 - never in the program's way
            self._fail(g, f"could not instrument its call: {type(e).__name__}: {e}")
            window = None
        if window is None:
            self._busy.release()
        return window

    def end(self, window: Window, ok: bool) -> None:
        with paused_gc():
            self._end(window, ok)

    def _end(self, window: Window, ok: bool) -> None:
        # Not at import: most processes never sample.
        from dlcprof.worker import gpu_trace, launches

        g = window.graph
        try:
            window.stack.close()
            rec = g.plan.recorder if g.plan is not None else None
            if rec is None:
                return
            if ok and rec.entered == window.entered:  # replayed by a CUDA graph
                self._fail(g, launches.NOT_TIMED)
                return
            if window.prof is not None:
                assert isinstance(rec, launches.GpuRecorder)  # a profiled window's
                if ok:
                    times = gpu_trace.device_times(launches.chrome_trace(window.prof), rec.label)
                    rec.window(times, 1, window.before)
            elif ok:
                rec.rep_ms.append([s * 1e3 for s in rec.seconds])
            g.sampled_s += time.perf_counter() - window.t0
            if len(rec.rep_ms) >= SAMPLED_CALLS:
                self._done(g)
        except Exception as e:  # noqa: BLE001
            self._fail(g, f"could not read its sampled calls: {type(e).__name__}: {e}")
        finally:
            self._busy.release()

    def _open(self, cid: str, g: _Graph, inputs: Any, t0: float) -> Window | None:
        from dlcprof.worker import launches  # not at import: most processes never sample

        if g.plan is None:
            graph = self._compiled(cid)
            if graph is None:
                g.looked += 1
                if g.looked >= WAIT_CALLS:
                    self._fail(g, f"its kernels were not reported in its first {g.seen} calls")
                return None
            g.gpu = any(getattr(x, "is_cuda", False) for x in inputs or ())
            g.plan = launches.plan_graph(graph, f"{launches.RANGE_PREFIX}{cid}", g.gpu)
            if g.plan.recorder is None:
                self._fail(g, g.plan.why or "its code cannot be instrumented")
                return None
            g.plan.recorder.capture = False  # the program's inputs are not ours to keep
        rec = g.plan.recorder
        assert rec is not None
        window = Window(cid, g, t0, contextlib.ExitStack())
        try:
            if g.gpu:
                import torch

                acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
                # Entered first, left last: the profiler stops after the synchronize.
                window.prof = window.stack.enter_context(torch.profiler.profile(activities=acts))
                window.stack.callback(torch.cuda.synchronize)
                window.before = list(rec.count)
            rec.seconds = [0.0] * len(rec.seconds)
            window.entered = rec.entered
            window.stack.enter_context(launches.instrumented([g.plan]))
        except BaseException:
            window.stack.close()
            raise
        return window

    def _compiled(self, cid: str) -> CompiledGraph | None:
        collector = self.collector()
        graphs = collector.graphs if collector is not None else []
        return next((c for c in reversed(graphs) if call_id(c) == cid), None)

    def _fail(self, g: _Graph, why: str) -> None:
        g.why, g.plan = why, None
        self.notes().unavailable(PROBE, why)
        self.report()

    def _done(self, g: _Graph) -> None:
        from dlcprof.worker import launches  # not at import: most processes never sample

        plan = g.plan
        assert plan is not None
        results = [launches.KernelResult() for _ in plan.graph.kernels]
        launches.attribute_launches([plan], [results], launches.Timed())
        g.kernels = _with_eager_why(launches.kernel_dicts([plan.graph], [results]))
        g.plan = None
        self.report()

    # --- what is sent ------------------------------------------------------------------

    def report(self, final: bool = False) -> None:
        """Every compiled graph of the process: its sampled kernels, or why not."""
        try:
            with paused_gc():
                self._report(final)
        except Exception as e:  # noqa: BLE001 - never in the program's way
            self.notes().unavailable(f"{PROBE}.report", f"{type(e).__name__}: {e}")

    def _report(self, final: bool) -> None:
        collector = self.collector()
        graphs = list(collector.graphs) if collector is not None else []
        if not graphs:
            return
        from dlcprof.worker import launches  # not at import: most processes never sample

        kernels: list[dict[str, Any]] = []
        for c in graphs:
            g = self._graphs.get(call_id(c))
            if g is not None and g.kernels is not None:
                kernels += g.kernels
                continue
            why = g.why if g is not None and g.why else _not_sampled(g, final)
            results = [
                launches.KernelResult(why=dict.fromkeys(("time_ms", "bytes"), why))
                for _ in c.kernels
            ]
            kernels += _with_eager_why(launches.kernel_dicts([c], [results]))
        done = [g for g in self._graphs.values() if g.kernels is not None]
        state = (len(graphs), sum(g.done for g in self._graphs.values()), final)
        if state == self._sent or (
            final and state[:2] == self._sent[:2] and len(graphs) == len(done)
        ):
            return  # nothing new to say
        self._sent = state
        self.send(
            ev.KernelsProfiled(
                run_id=self.run_id,
                method=(launches.GPU_METHOD if any(g.gpu for g in done) else launches.CPU_METHOD)
                + IN_PROGRAM,
                calls=SAMPLED_CALLS * len(done),
                wall_s=sum(g.sampled_s for g in done),
                kernels=kernels,
                eager_why=EAGER_WHY,
                copy_why=COPY_WHY,
            )
        )


def call_id(graph: CompiledGraph) -> str:
    """The id graph_calls names a compiled graph's calls by: a backward graph's
    kernels come under its compile's id, its calls under the backward's."""
    if graph.code.graph == "backward":
        return ev.backward_id(graph.compile_id)
    return graph.compile_id


def _not_sampled(g: _Graph | None, final: bool) -> str:
    if not final:
        return NOT_SAMPLED_YET
    calls = g.seen if g is not None else 0
    return f"called {calls} time{'' if calls == 1 else 's'}: {SAMPLED_WHICH} are sampled"


def _with_eager_why(kernels: list[dict[str, Any]]) -> list[dict[str, Any]]:
    for k in kernels:
        k["why"].setdefault("eager_ms", EAGER_WHY)
    return kernels
