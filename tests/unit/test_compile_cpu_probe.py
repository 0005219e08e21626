"""The compile-CPU probe (worker/probes/compile_cpu.py): each compile's CPU
seconds from Dynamo's start and end callbacks, and what it says without them."""

from __future__ import annotations

import types

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
    got = [(e.compile_id, e.cpu_s > 0) for e in sink.events]
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
