"""The compile-CPU probe (worker/probes/compile_cpu.py): each compile's CPU
seconds from Dynamo's start and end callbacks, and what it says without them."""

from __future__ import annotations

import types
from typing import Any

from dlcprof import events as ev
from dlcprof.session import Session
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import compile_cpu as C


class Args:
    def __init__(self, cid: str, trigger: str) -> None:
        self.compile_id, self.callback_trigger = cid, types.SimpleNamespace(name=trigger)


def test_a_compile_is_timed_in_cpu_seconds_a_lazy_backward_under_its_own_id():
    sink = ListEmitter()
    probe = C.CompileCpu(sink, lambda: "r")
    for cid, trigger in (("0/0", "DYNAMO"), ("0/0", "LAZY_BACKWARD")):
        probe.start(Args(cid, trigger))
        sum(i * i for i in range(200_000))  # CPU spent inside the compile
        probe.end(Args(cid, trigger))
    probe.end(Args("1/0", "DYNAMO"))  # an end without its start says nothing
    measured: list[Any] = sink.events  # CompileCpuMeasured, read by their fields
    got = [(e.compile_id, e.cpu_s > 0) for e in measured]
    assert got == [("0/0", True), ("0/0 (bwd)", True)]
    s = Session.from_events(sink.events)
    assert [c.cpu_s is not None for c in s.runs["r"].compiles.values()] == [True, True]


def test_without_dynamos_callbacks_it_says_so_once(monkeypatch):
    sink = ListEmitter()
    notes = ProbeNotes(sink, "r")
    monkeypatch.setattr(C, "when_imported", lambda name, hook: hook(types.ModuleType(name)))
    C.install(C.CompileCpu(sink, lambda: "r"), notes)
    (said,) = sink.events
    assert isinstance(said, ev.ProbeUnavailable) and said.probe == "compile-cpu"


def test_a_handler_without_clear_is_used_and_the_reset_it_cannot_follow_said(monkeypatch):
    """Another torch's handler with no ``clear`` to follow: the probe still
    registers, and says once that a reset may drop it."""
    sink = ListEmitter()
    handler = types.SimpleNamespace(starts=[], ends=[])
    handler.register_start_callback = handler.starts.append
    handler.register_end_callback = handler.ends.append
    module = types.SimpleNamespace(callback_handler=handler)
    monkeypatch.setattr(C, "when_imported", lambda name, hook: hook(module))
    probe = C.CompileCpu(sink, lambda: "r")
    C.install(probe, ProbeNotes(sink, "r"))
    assert handler.starts == [probe.start] and handler.ends == [probe.end]
    (said,) = sink.events
    assert isinstance(said, ev.ProbeUnavailable) and "after torch._dynamo.reset()" in said.reason


def test_a_compiler_subprocess_and_inductors_compile_workers_are_said_apart():
    """g++ stands for any compiler child the compile waits for; the workers are
    Inductor's own subprocess pool, doing CPU work while the "compile" runs."""
    import functools
    import hashlib
    import subprocess
    import sys

    from torch._inductor.compile_worker.subproc_pool import SubprocPool

    from dlcprof.figures import phases as fp

    sink = ListEmitter()
    probe = C.CompileCpu(sink, lambda: "r")
    pool = SubprocPool(1)
    try:
        probe.start(Args("0/0", "DYNAMO"))
        spin = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass"
        subprocess.run([sys.executable, "-c", spin], check=True)
        work = functools.partial(hashlib.pbkdf2_hmac, "sha256", b"x", b"y", 300_000)
        pool.submit(work).result()
        probe.end(Args("0/0", "DYNAMO"))
    finally:
        pool.shutdown()
    (cpu,) = sink.events
    assert isinstance(cpu, ev.CompileCpuMeasured)
    assert cpu.compilers_s is not None and cpu.compilers_s >= 0.25
    assert cpu.cpu_s >= cpu.compilers_s  # the children it waited for are inside
    assert cpu.workers_s is not None and cpu.workers_s > 0  # the pool's are apart
    (c,) = Session.from_events(sink.events).runs["r"].compiles.values()
    words = fp.cpu_words(c)
    assert words is not None and "compiler subprocesses" in words and "compile workers" in words
    assert C.workers_delta({}, {}) is None  # no pool seen: n/a, never 0


RESET_BETWEEN = """
import json, torch
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import compile_cpu as C

sink = ListEmitter()
C.install(C.CompileCpu(sink, lambda: "r"), ProbeNotes(sink, "r"))
for n in range(2):
    torch.compile(lambda x: x.sin() + n, backend="eager")(torch.ones(3))
    torch._dynamo.reset()
print(json.dumps([[type(e).__name__, getattr(e, "cpu_s", None)] for e in sink.events]))
"""


def test_it_survives_torch_dynamo_reset_in_a_real_process():
    """reset() clears Dynamo's callback handler (the pytest plugin, the sweep and
    a user's program reset): the probe registers again, so the compile after a
    reset has its CPU seconds too."""
    import json
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", RESET_BETWEEN], capture_output=True, text=True, check=True
    ).stdout
    got = json.loads(out.splitlines()[-1])
    assert [name for name, _ in got] == ["CompileCpuMeasured"] * 2
    assert all(cpu > 0 for _, cpu in got)


def test_an_id_measured_again_after_a_reset_adds_up_as_its_records_do():
    """A program's reset restarts torch's compile ids: its second 0/0 is another
    compile under the same id, whose records the session adds; its CPU too."""
    events: list[ev.Event] = [
        ev.CompileCpuMeasured(run_id="r", compile_id="0/0", cpu_s=s, compilers_s=c, workers_s=w)
        for s, c, w in ((1.0, 0.5, None), (2.0, 0.25, 1.0))
    ]
    (c,) = Session.from_events(events).runs["r"].compiles.values()
    assert c.cpu is not None and (c.cpu_s, c.cpu.compilers_s, c.cpu.workers_s) == (3.0, 0.75, None)
