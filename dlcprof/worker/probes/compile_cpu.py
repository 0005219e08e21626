"""The one adapter to Dynamo's compile callbacks (``torch._dynamo.callback``):
the CPU seconds of each compile, for a compile-time figure that does not move
with how busy the machine is (a CI runner shared with other jobs).

Dynamo runs the start callbacks when the outermost compile of a frame begins
and the end callbacks when it ends (a lazy backward's compile likewise, with
its own trigger), naming the compile id. Between them this counts the
process's CPU time (every thread: the compile runs on the calling thread but
may hand work to others) and the CPU of the children it waited for (g++). A
child pool that outlives the compile (Inductor's compile workers) is not
counted: docs/ci.md says so."""

from __future__ import annotations

import resource
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from dlcprof import events as ev
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

PROBE = "compile-cpu"
CALLBACKS = "torch._dynamo.callback"


def cpu_now() -> float:
    """This process's CPU seconds and its waited-for children's."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return time.process_time() + kids.ru_utime + kids.ru_stime


class CompileCpu:
    """Emits ``CompileCpuMeasured`` at the end of each compile, for the run
    ``run_id()`` names then."""

    def __init__(self, sink: ev.Sink, run_id: Callable[[], str]) -> None:
        self.sink, self.run_id = sink, run_id
        self._started: float | None = None

    def start(self, args: Any) -> None:
        self._started = cpu_now()

    def end(self, args: Any) -> None:
        started, self._started = self._started, None
        if started is None:
            return
        cid = str(getattr(args, "compile_id", "") or "?")
        if getattr(getattr(args, "callback_trigger", None), "name", "") == "LAZY_BACKWARD":
            cid = ev.backward_id(cid)
        self.sink.emit(
            ev.CompileCpuMeasured(run_id=self.run_id(), compile_id=cid, cpu_s=cpu_now() - started)
        )


def install(probe: CompileCpu, notes: ProbeNotes) -> None:
    """Register ``probe`` with Dynamo's callback handler once Dynamo imports it
    (once per process: the registration outlives a fork)."""

    def hook(module: ModuleType) -> None:
        handler = getattr(module, "callback_handler", None)
        if handler is None or not hasattr(handler, "register_start_callback"):
            notes.unavailable(
                PROBE, "torch._dynamo.callback.callback_handler not found: compile CPU seconds n/a"
            )
            return
        handler.register_start_callback(probe.start)
        handler.register_end_callback(probe.end)

    when_imported(CALLBACKS, hook)
