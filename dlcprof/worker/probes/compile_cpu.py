"""The one adapter to Dynamo's compile callbacks (``torch._dynamo.callback``):
the CPU seconds of each compile, for a compile-time figure that does not move
with how busy the machine is (a CI runner shared with other jobs).

Dynamo runs the start callbacks when the outermost compile of a frame begins
and the end callbacks when it ends (a lazy backward's compile likewise, with
its own trigger), naming the compile id. Between them this counts the
process's CPU time (every thread: the compile runs on the calling thread but
may hand work to others) and the CPU of the children it waited for (g++). A
child pool that outlives the compile (Inductor's compile workers) is not
counted in it (docs/ci.md says so) but measured apart: the CPU its processes
took over the compile, read from /proc."""

from __future__ import annotations

import os
import resource
import time
from collections.abc import Callable
from types import ModuleType
from typing import Any

from dlcprof import events as ev
from dlcprof import proc_tree
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

PROBE = "compile-cpu"
CALLBACKS = "torch._dynamo.callback"


# How Inductor's subprocess pool names its process (torch/_inductor/compile_worker).
WORKER_MODULE = b"torch._inductor.compile_worker"


def compilers_now() -> float:
    """The CPU seconds of the children this process waited for (g++)."""
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return kids.ru_utime + kids.ru_stime


def _cpu_of(pid: int) -> float | None:
    """A process's CPU seconds and its waited-for children's, from /proc."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()
    except (OSError, IndexError):
        return None
    return sum(int(x) for x in fields[11:15]) / os.sysconf("SC_CLK_TCK")


def workers_now() -> dict[int, float] | None:
    """The CPU seconds of each process of Inductor's compile-worker pool (the
    pool's process and everything under it); None without /proc."""
    if not os.path.isdir("/proc/self/task"):
        return None
    pools = []
    for pid in proc_tree.children(os.getpid()):
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as f:
                if WORKER_MODULE in f.read():
                    pools.append(pid)
        except OSError:
            continue
    out: dict[int, float] = {}
    for pid in [*pools, *proc_tree.descendants(*pools)]:
        cpu = _cpu_of(pid)
        if cpu is not None:
            out[pid] = cpu
    return out


def workers_delta(before: dict[int, float] | None, after: dict[int, float] | None) -> float | None:
    """What the compile workers took between two readings (None: no pool seen)."""
    if before is None or after is None or not (before or after):
        return None
    return sum(max(0.0, cpu - before.get(pid, 0.0)) for pid, cpu in after.items())


class CompileCpu:
    """Emits ``CompileCpuMeasured`` at the end of each compile, for the run
    ``run_id()`` names then, its compile id after ``prefix()`` (the trace
    dispatcher's: a sweep's ids after its reset)."""

    def __init__(
        self, sink: ev.Sink, run_id: Callable[[], str], prefix: Callable[[], str] = lambda: ""
    ) -> None:
        self.sink, self.run_id, self.prefix = sink, run_id, prefix
        self._started: tuple[float, float, dict[int, float] | None] | None = None

    def start(self, args: Any) -> None:
        self._started = (time.process_time(), compilers_now(), workers_now())

    def end(self, args: Any) -> None:
        started, self._started = self._started, None
        if started is None:
            return
        own, compilers, workers = started
        cid = self.prefix() + str(getattr(args, "compile_id", "") or "?")
        if getattr(getattr(args, "callback_trigger", None), "name", "") == "LAZY_BACKWARD":
            cid = ev.backward_id(cid)
        compilers_s = compilers_now() - compilers
        self.sink.emit(
            ev.CompileCpuMeasured(
                run_id=self.run_id(),
                compile_id=cid,
                cpu_s=time.process_time() - own + compilers_s,
                compilers_s=compilers_s,
                workers_s=workers_delta(workers, workers_now()),
            )
        )


def install(probe: CompileCpu, notes: ProbeNotes) -> None:
    """Register ``probe`` with Dynamo's callback handler once Dynamo imports it
    (once per process: the registration outlives a fork), and again after each
    time the handler is cleared: ``torch._dynamo.reset()`` clears it, and the
    pytest plugin, the sweep and a user's program all reset."""

    def hook(module: ModuleType) -> None:
        handler = getattr(module, "callback_handler", None)
        if handler is None or not hasattr(handler, "register_start_callback"):
            notes.unavailable(
                PROBE, "torch._dynamo.callback.callback_handler not found: compile CPU seconds n/a"
            )
            return
        register(handler)
        clear = getattr(handler, "clear", None)
        if not callable(clear):
            notes.unavailable(
                PROBE,
                "torch._dynamo.callback.callback_handler.clear not found: compile CPU "
                "seconds may be n/a after torch._dynamo.reset()",
            )
            return

        def clear_and_register() -> None:
            try:
                clear()
            finally:  # clear raises when a compile is pending, after emptying the lists
                register(handler)

        handler.clear = clear_and_register

    def register(handler: Any) -> None:
        handler.register_start_callback(probe.start)
        handler.register_end_callback(probe.end)

    when_imported(CALLBACKS, hook)
