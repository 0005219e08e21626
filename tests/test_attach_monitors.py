"""The monitors on an attached program's processes (dlcprof/attach/monitors.py):
which processes get them, when they stop, and what a process past the cap
says. The monitors themselves are faked here (their own tests are
test_monitors*.py); the real ones run in tests/test_attach.py."""

from __future__ import annotations

import threading

from program_helpers import program_started

from dlcprof import events as ev
from dlcprof.attach.monitors import ProgramMonitors, not_watched
from dlcprof.figures import observer as fo
from dlcprof.session import Session


class FakeWatch:
    """Records what ProgramMonitors asks of one process's monitors."""

    made: list[FakeWatch] = []

    def __init__(self, pid, emit, cuda_index, device=True, hotspots=True) -> None:  # type: ignore[no-untyped-def]
        self.pid, self.cuda_index = pid, cuda_index
        self.device, self.hotspots = device, hotspots
        self.run_id: str | None = None
        self.seen: list[ev.Event] = []
        self.stopped = threading.Event()
        FakeWatch.made.append(self)

    def start(self, run_id: str) -> None:
        self.run_id = run_id

    def see(self, event: ev.Event) -> None:
        self.seen.append(event)

    def stop(self) -> None:
        self.stopped.set()


def attached(pid: int, local_rank: int | None = None) -> ev.ProcessAttached:
    return ev.ProcessAttached(
        run_id=f"pid{pid}",
        pid=pid,
        ppid=1,
        argv=["train.py"],
        host="h",
        started_t=None,
        torch_version="2.13",
        python_version="3.11",
        local_rank=local_rank,
    )


def ended(run_id: str) -> ev.PhaseEnded:
    return ev.PhaseEnded(run_id, "0/0", "inductor", thread=1, start_t=0.0, duration_s=1.0)


def monitors(**kwargs) -> tuple[ProgramMonitors, list[ev.Event]]:  # type: ignore[no-untyped-def]
    FakeWatch.made = []
    out: list[ev.Event] = []
    return ProgramMonitors(out.append, watch=FakeWatch, **kwargs), out


def test_each_process_is_watched_until_its_end_and_at_most_cap_at_once() -> None:
    m, out = monitors(cap=2)
    m.see(attached(1))
    m.see(attached(2, local_rank=1))
    m.see(attached(3))  # past the cap: says so in its run, for each monitor it goes without
    first, second = FakeWatch.made
    assert (first.run_id, first.cuda_index) == ("pid1", 0)
    assert (second.run_id, second.cuda_index) == ("pid2", 1)  # a rank's own GPU
    assert [(e.monitor, e.run_id, e.available) for e in out] == [
        ("py-spy", "pid3", False),
        ("cpu", "pid3", False),
    ]
    assert out[0].message == not_watched(2)

    phase = ended("pid1")
    m.see(phase)
    m.see(ended("pid3"))
    assert first.seen == [phase] and second.seen == []
    m.see(ev.RunFinished(run_id="pid1", status="ok", wall_s=1.0))
    assert first.stopped.wait(5) and not second.stopped.is_set()
    m.see(attached(4))  # a place came free
    assert FakeWatch.made[-1].run_id == "pid4"

    m.close()  # the program ended, or dlcprof detached: every monitor stops
    assert all(w.stopped.is_set() for w in FakeWatch.made)
    m.see(attached(5))
    assert len(FakeWatch.made) == 3  # nothing starts after close


def test_no_hotspots_leaves_py_spy_out() -> None:
    m, out = monitors(cap=1, hotspots=False)
    m.see(attached(1))
    m.see(attached(2))
    (watch,) = FakeWatch.made
    assert watch.device and not watch.hotspots
    assert [e.monitor for e in out] == ["cpu"]  # no word about a py-spy that was not asked for
    m, out = monitors(hotspots=False, device=False)
    m.see(attached(1))
    assert FakeWatch.made == [] and out == []


def test_the_observer_line_of_an_attached_process_says_it_never_paused() -> None:
    events = [
        *program_started(),
        ev.MonitorStatus("py-spy", True, "py-spy sampling pid 7", "pid7", how="25 Hz"),
        ev.MonitorCostMeasured("py-spy", cpu_s=0.5, active_s=10.0, run_id="pid7"),
    ]
    run = Session.from_events(events).runs["pid7"]
    line = fo.line(run)
    assert line.startswith("observer: program probes (")
    assert "py-spy 25 Hz (5.0% of a core)" in line and fo.ATTACHED_WATCH in line
    assert "benchmark" not in line
    assert "never paused" in (fo.short(run) or "")
