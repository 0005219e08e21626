"""The monitors on an attached program's processes (dlcprof/monitors/program.py):
which processes get them, when they stop, and what a process past the cap
says. The monitors themselves are faked here (their own tests are
test_monitors*.py); the real ones run in tests/e2e/test_attach.py."""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Callable
from typing import Any, cast

from helpers.program import process_attached, program_started

from dlcprof import events as ev
from dlcprof.figures import observer as fo
from dlcprof.monitors.process import ProcessMonitors
from dlcprof.monitors.program import ProgramMonitors, not_watched
from dlcprof.session import Session


class FakeWatch:
    """Records what ProgramMonitors asks of one process's monitors."""

    made: list[FakeWatch] = []

    def __init__(self, pid, emit, cuda_index, device=True, hotspots=True) -> None:
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
    return process_attached(pid, local_rank=local_rank)


def ended(
    run_id: str, name: str = "inductor_compile", start: float = 0.0, s: float = 1.0
) -> ev.PhaseEnded:
    return ev.PhaseEnded(run_id, "0/0", name, thread=1, start_t=start, duration_s=s)


def monitors(**kwargs: Any) -> tuple[ProgramMonitors, list[Any]]:
    """The monitors over FakeWatch, and the events they said (read by their fields)."""
    FakeWatch.made = []
    out: list[Any] = []
    watch = cast(Callable[..., ProcessMonitors], FakeWatch)  # a stand-in
    return ProgramMonitors(out.append, watch=watch, **kwargs), out


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


def test_process_monitors_stamp_their_run_and_place_samples_in_phases() -> None:
    """The unit a run's worker and each attached process share
    (monitors/process.py), on a real Python with a real py-spy: every event
    carries the run, and the final hot frames fall in the phase seen."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    out: list[Any] = []
    watch = ProcessMonitors(child.pid, out.append, None, device=True, hotspots=True)
    try:
        t0 = time.time()
        watch.start("pid9")
        deadline = time.monotonic() + 60
        while not any(isinstance(e, ev.HotFramesSampled) for e in out):
            assert time.monotonic() < deadline, out
            time.sleep(0.1)
        watch.see(ended("pid9", "inductor_compile", t0, time.time() - t0 + 60))
        watch.see(ended("pid9", "not_a_compile_phase", t0, 100.0))
        watch.stop()
        watch.stop()  # once
    finally:
        child.kill()
        child.wait()
    assert {e.run_id for e in out} == {"pid9"}
    assert {e.monitor for e in out if isinstance(e, ev.MonitorStatus)} == {"cpu", "py-spy"}
    final = [e for e in out if isinstance(e, ev.HotFramesSampled)][-1]
    assert final.rows and {r["phase"] for r in final.rows} == {"inductor_compile"}


def test_the_monitors_are_imported_at_the_first_compile_not_before_the_program_starts() -> None:
    code = (
        "import sys, dlcprof.attach.program; "
        "bad = [m for m in ('dlcprof.monitors.process', 'dlcprof.monitors.hotspots') "
        "if m in sys.modules]; sys.exit(f'imported {bad}' if bad else 0)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr


def test_no_hotspots_on_the_command_line_reaches_the_programs_monitors() -> None:
    from dlcprof.attach.program import start_program
    from dlcprof.cli.parser import attach_parser

    assert attach_parser().parse_args([]).hotspots
    args = attach_parser().parse_args(["--no-hotspots"])
    program = start_program(["true"], lambda e: None, output="capture", hotspots=args.hotspots)
    assert program.wait(30)
    assert not program.monitors.hotspots and program.monitors.device


def test_the_tui_form_takes_no_hotspots_too(monkeypatch) -> None:
    import dlcprof.cli.attach as attach
    from dlcprof.cli import main
    from dlcprof.exit_codes import EXIT_USAGE

    seen: list[tuple[list[str], bool, str | None]] = []
    monkeypatch.setattr(
        attach, "cmd_attach_tui", lambda args, cmd: seen.append((cmd, args.hotspots, args.theme))
    )
    main(["tui", "--no-hotspots", "--", "true"])
    main(["--", "true"])
    main(["tui", "--theme", "textual-light", "--", "true"])
    assert seen == [
        (["true"], False, None),
        (["true"], True, None),
        (["true"], True, "textual-light"),
    ]
    assert main(["tui", "--bogus", "--", "true"]) == EXIT_USAGE
