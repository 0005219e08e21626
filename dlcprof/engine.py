"""A live run: one worker plus the monitors on its pid, merged into one stream.

``emit`` is called from a background thread for every event (worker and
monitors alike); callers make it thread-safe (a queue, or Textual's
``call_from_thread``/``post_message``).
"""

from __future__ import annotations

import queue
import tempfile
import threading
from collections.abc import Callable, Sequence
from pathlib import Path

from dlcprof import events as ev
from dlcprof.attach.program import AttachedProgram, start_program
from dlcprof.data import data
from dlcprof.monitors.process import Monitor, ProcessMonitors, monitors_on
from dlcprof.runner import DEFAULT_IDLE_TIMEOUT_S, WorkerProcess
from dlcprof.session import Session
from dlcprof.settings import RunSettings

Emit = Callable[[ev.Event], None]


def _cuda_index(settings: RunSettings) -> int | None:
    return None if settings.device == "cpu" else 0


def monitors_for(
    settings: RunSettings, pid: int, emit: Emit, device: bool = True, profile: bool = True
) -> list[Monitor]:
    """The monitors a run gets, not yet started (benchmarks/overhead.py measures these)."""
    return monitors_on(pid, emit, _cuda_index(settings), device, profile)


class LiveRun:
    """Run ``settings`` in ``worker`` (or a fresh one) on a background thread."""

    def __init__(
        self,
        settings: RunSettings,
        emit: Emit,
        worker: WorkerProcess | None = None,
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        monitors: bool = True,
        profile: bool = True,
    ) -> None:
        self.settings = settings
        self.emit = emit
        if worker is None or worker.cache != settings.cache:
            if worker is not None:
                worker.dismiss()
            worker = WorkerProcess(cache=settings.cache, idle_timeout_s=idle_timeout_s)
        self.worker = worker
        self.run_id: str | None = None
        self._watch = ProcessMonitors(
            worker.pid, emit, _cuda_index(settings), monitors, profile and settings.hotspots
        )
        self._thread = threading.Thread(target=self._pump, name="dlcprof-run", daemon=True)

    def start(self) -> str:
        # With monitors on, the worker asks before it times and we pause them
        # (py-spy and the CPU sampler; NVML goes on sampling the busy GPU).
        self.run_id = self.worker.start(self.settings, quiet=bool(self._watch.monitors))
        self._watch.start(self.run_id)
        self._thread.start()
        return self.run_id

    def _pump(self) -> None:
        for event in self.worker.events():
            self._watch.see(event)
            if isinstance(event, ev.WorkerExited):
                # Monitors report last (the saved profile, the hot frames), before the end marker.
                self._watch.stop()
            self.emit(event)
            if isinstance(event, ev.TimingStarted):
                # The worker waits for this answer before its first timed call.
                self.worker.answer_quiet(self._watch.pause())
            elif isinstance(event, ev.TimingEnded):
                self._watch.resume()

    def cancel(self, reason: str = "cancelled by user") -> None:
        self.worker.cancel(reason)

    def wait(self, timeout: float | None = None) -> bool:
        """True once every event has been emitted."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()


SPAWN_WAIT_S = 10.0  # the most take() and close() wait for a standby worker's process to start


class Standby:
    """Keeps one warm worker with torch already imported, so pressing compile
    starts compiling at once instead of paying the ~1.5 s import.

    ``prepare`` (a thread) and ``take`` (the UI) may race: a worker still
    importing torch is handed out too (a second worker would import torch
    again, seconds of CPU on a machine the first is already loading); its run
    reads its events once ``prepare`` has read its WorkerReady
    (WorkerProcess.events), so the stream has one reader at a time."""

    def __init__(self) -> None:
        self._worker: WorkerProcess | None = None
        self._importing: WorkerProcess | None = None  # spawned, torch not imported yet
        self._lock = threading.Lock()
        self._spawned = threading.Condition(self._lock)
        self._preparing = self._closed = False
        self._spawning = False  # its process started, not yet recorded as importing

    def prepare(self) -> ev.WorkerReady | None:
        """Spawn a worker and block until torch is imported there: its
        WorkerReady (device, torch version) is the caller's to show, also when
        take() handed the worker to a run meanwhile. None when one is ready or
        being prepared already, or the worker died."""
        with self._lock:
            alive = self._worker is not None and self._worker.proc.poll() is None
            if self._closed or self._preparing or alive:
                return None
            self._preparing = self._spawning = True
        try:
            worker = WorkerProcess(cache="warm")
        except BaseException:
            with self._lock:
                self._preparing = self._spawning = False
                self._spawned.notify_all()
            raise
        with self._lock:
            # close() kills it while it imports: a daemon thread dies with the
            # app, and a worker left waiting here would outlive it.
            closed = self._closed
            self._importing = None if closed else worker
        if closed:  # close() came during the spawn: it waits for this kill
            worker.cancel("standby closed")
        with self._lock:
            self._spawning = False
            self._spawned.notify_all()
        ready = None if closed else worker.wait_ready()
        with self._lock:
            taken = not closed and self._importing is not worker
            self._preparing, self._importing = False, None
            if taken:
                return ready  # take() handed it to a run, which owns it now
            if ready is not None and not self._closed:
                self._worker = worker
                return ready
        worker.cancel("standby closed")
        return None

    def take(self) -> WorkerProcess | None:
        """The ready or importing worker (if alive), handing ownership to the
        caller; one being spawned is waited for (moments), not doubled."""
        with self._lock:
            self._spawned.wait_for(lambda: not self._spawning, timeout=SPAWN_WAIT_S)
            worker = self._worker or self._importing
            self._worker = self._importing = None
        if worker is not None and worker.proc.poll() is not None:
            return None
        return worker

    def close(self) -> None:
        """Kill the standby's worker; one whose process is starting is waited
        for (moments), so none is alive once this returns."""
        with self._lock:
            self._closed = True
            self._spawned.wait_for(lambda: not self._spawning, timeout=SPAWN_WAIT_S)
            worker, self._worker = self._worker, None
            importing = self._importing
        if importing is not None:
            importing.cancel("standby closed")  # its wait_ready() then returns None
        if worker is not None:
            worker.dismiss()
            worker.cancel("standby closed")


def follow(
    inbox: queue.Queue[ev.Event],
    on_event: Callable[[ev.Event | None], None],
    until: type[ev.Event],
    tick: Callable[[], None] = lambda: None,
    poll_s: float = 0.1,
) -> None:
    """The one headless loop, for a workload's run and an attached program
    alike: hand each event its threads put in ``inbox`` to ``on_event`` on
    this thread, up to the first ``until`` (WorkerExited, ProgramExited);
    ``on_event(None)`` when ``poll_s`` passed without one, ``tick()`` before
    each wait (a stop to pass on)."""
    while True:
        tick()
        try:
            event = inbox.get(timeout=poll_s)
        except queue.Empty:
            on_event(None)
            continue
        on_event(event)
        if isinstance(event, until):
            return


def run_headless(
    settings: RunSettings,
    on_event: Emit,
    stops: Sequence[object] = (),
    worker: WorkerProcess | None = None,
    idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
    monitors: bool = True,
) -> str | None:
    """Run ``settings`` to its end, handing every event to ``on_event`` on this
    thread (``follow``); returns the run id. The worker (and its compiler
    children) is stopped when ``stops`` fills (signals.stop_on_signals) and,
    whatever happens, when this returns. ``monitors`` False: no device
    sampler, no py-spy."""
    inbox: queue.Queue[ev.Event] = queue.Queue()
    live = LiveRun(
        settings,
        inbox.put,
        worker=worker,
        idle_timeout_s=idle_timeout_s,
        monitors=monitors,
        profile=monitors,
    )
    cancelling = False

    def pass_stop_on() -> None:
        nonlocal cancelling
        if stops and not cancelling:
            cancelling = True
            live.cancel(f"stopped by {getattr(stops[0], 'said', 'a signal')}")

    def each(event: ev.Event | None) -> None:
        if event is not None:
            on_event(event)

    try:
        live.start()
        follow(inbox, each, ev.WorkerExited, pass_stop_on)
    finally:
        live.cancel("dlcprof stopped")  # never leave a worker behind, whatever went wrong
    return live.run_id


def save_report(session: Session, directory: Path | None = None) -> Path:
    """Write ``session`` as a report folder (default: dlcprof-reports/<workload>-<time>).
    ReportError (one line) when it cannot be written; the session is untouched."""
    from dlcprof.report import default_report_dir, save_session

    return save_session(session, directory or default_report_dir(session))


def elsewhere(session: Session) -> Path:
    """Where to save when the usual place fails: the same name under the temp folder."""
    from dlcprof.report import default_report_dir

    return default_report_dir(session, Path(tempfile.gettempdir()) / "dlcprof-reports")


@data
class Engine:
    """What the TUI's controllers work with: real ones by default, scripted in tests."""

    live_run: Callable[..., LiveRun] = LiveRun
    program: Callable[..., AttachedProgram] = start_program  # an attached program, launched
    standby: Callable[[], Standby] = Standby
    save: Callable[[Session, Path | None], Path] = save_report
    elsewhere: Callable[[Session], Path] = elsewhere
