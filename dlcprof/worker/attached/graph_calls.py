"""Each compiled graph's life in an attached program: calls so far and the
time spent inside the compiled code, timed around the compiled callable.

torch adapter (``torch._inductor.output_code.CompiledFxGraph``, 2.13):
``post_compile`` runs once per graph, fresh or from a cache, inside the
compile (its compile id is current; ``graph_kwargs["is_backward"]`` names a
backward graph): the graph is tagged there. ``__call__`` runs the compiled
code for each call: two ``perf_counter`` reads and a dict update around it
(and, on a few calls of each graph, the kernel sampler: kernel_sample.py).
Hooked when torch imports the module (``probes.lazy``), so a process that
never compiles pays nothing. Inductor's graphs only: another backend's
callables are not timed.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from dlcprof import events as ev
from dlcprof.worker.paused_gc import paused_gc
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

if TYPE_CHECKING:
    from dlcprof.worker.attached.kernel_sample import KernelSampler

PROBE = "graph_calls"
MODULE = "torch._inductor.output_code"
_TAG = "_dlcprof_compile_id"
# How often, at most, the running totals travel to dlcprof (checked on a call).
REPORT_EVERY_S = 1.0


class GraphCalls:
    """Totals per compile id; ``send(event)`` gets a snapshot at most every
    REPORT_EVERY_S, from the calling thread (a non-blocking send). The calls
    ``sampler`` times kernel by kernel (kernel_sample.py) are counted apart:
    ``inside_s`` is the other calls' time, so the observer does not move it."""

    def __init__(
        self, run_id: str, send: Callable[[ev.Event], None], sampler: KernelSampler | None = None
    ) -> None:
        self.send = send
        self.sampler = sampler
        self.restart(run_id)

    def restart(self, run_id: str) -> None:
        """Start over (a forked child: the parent's totals are the parent's)."""
        self.run_id = run_id
        self._lock = threading.Lock()
        self._graphs: dict[str, dict[str, float]] = {}
        self._last_sent = 0.0
        self._changed = False

    def called(self, compile_id: str, start: float, seconds: float, sampled: bool = False) -> None:
        with self._lock:
            g = self._graphs.get(compile_id)
            if g is None:
                g = self._graphs[compile_id] = {
                    "calls": 0,
                    "inside_s": 0.0,
                    "first_t": time.time() - seconds,
                    "first_s": seconds,
                    "sampled": 0,
                    "sampled_s": 0.0,
                }
            g["calls"] += 1
            if sampled:
                g["sampled"] += 1
                g["sampled_s"] += seconds
            else:
                g["inside_s"] += seconds
            self._changed = True
            due = start - self._last_sent >= REPORT_EVERY_S
        if due:
            self.report()

    def report(self) -> None:
        with paused_gc(), self._lock:
            if not self._changed:
                return
            self._changed = False
            self._last_sent = time.perf_counter()
            graphs = {k: dict(v) for k, v in self._graphs.items()}
        self.send(ev.GraphCallsTimed(run_id=self.run_id, graphs=graphs))


def install(calls: GraphCalls, notes: ProbeNotes) -> None:
    when_imported(MODULE, lambda module: _wrap(module, calls, notes))


def _wrap(module: Any, calls: GraphCalls, notes: ProbeNotes) -> None:
    cls = getattr(module, "CompiledFxGraph", None)
    post, call = getattr(cls, "post_compile", None), getattr(cls, "__call__", None)  # noqa: B004
    if cls is None or post is None or call is None:
        notes.unavailable(PROBE, f"{MODULE}.CompiledFxGraph not found: calls per graph n/a")
        return

    def post_compile(graph: Any, example_inputs: Any, constants: Any, graph_kwargs: Any) -> Any:
        try:
            from torch._guards import CompileContext

            cid = str(CompileContext.current_compile_id())
            if graph_kwargs.get("is_backward"):
                cid = ev.backward_id(cid)
            setattr(graph, _TAG, cid)
        except Exception as e:  # noqa: BLE001 - never break the compile
            notes.unavailable(PROBE, f"could not name a compiled graph: {e!r}")
        return post(graph, example_inputs, constants, graph_kwargs)

    def timed_call(graph: Any, inputs: Any) -> Any:
        cid = getattr(graph, _TAG, None)
        if cid is None:
            return call(graph, inputs)
        start = time.perf_counter()
        sampler = calls.sampler
        window = sampler.begin(cid, inputs) if sampler is not None else None
        ok = False
        try:
            out = call(graph, inputs)
            ok = True
            return out
        finally:
            if window is not None and sampler is not None:  # the window's
                sampler.end(window, ok)
            calls.called(cid, start, time.perf_counter() - start, window is not None)

    cls.post_compile = post_compile
    cls.__call__ = timed_call
