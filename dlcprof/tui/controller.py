"""The runs of a live TUI session: queue, standby worker, cancel, save. No Textual.

The app routes keys here and renders what this holds; the controller never
touches a widget. Its slow work (spawning the standby worker, killing a
worker group, writing a report) runs on threads of its own, and what the
user must hear about comes back as ``Notice``s the app drains on its tick.
Events go through ``emit``, the app's thread-safe inbox.
"""

from __future__ import annotations

import dataclasses
import threading
from collections import deque
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from dlcprof import events as ev
from dlcprof import text, workloads
from dlcprof.data import data
from dlcprof.session import Run, Session
from dlcprof.settings import RunSettings, SettingsError

if TYPE_CHECKING:
    from dlcprof.engine import Engine, LiveRun, Standby

Emit = Callable[[ev.Event], None]
Severity = Literal["information", "warning", "error"]  # Textual's notify's


@data(frozen=True)
class Notice:
    severity: Severity
    message: str
    logged: bool = False  # the session holds it already (an event said it)
    topic: str = ""  # a later notice of the same topic replaces this one's error


class NotRunnable(Exception):
    """The sidebar's choices cannot run: one line saying what to fix."""

    def __init__(self, why: str, bad_path: bool = False) -> None:
        self.why, self.bad_path = why, bad_path
        super().__init__(f"{why} — fix the path, or pick a bundled workload" if bad_path else why)


def initial_settings(
    target: str | None, settings: RunSettings | None, session: Session
) -> RunSettings:
    """What the sidebar starts with: the target given, else the settings', else
    the session's last run's, else the default workload; the rest from ``settings``."""
    latest = session.latest_run
    target = target or (settings.target if settings else None)
    if target is None and latest is not None and latest.target:
        target = latest.target
    target = target or workloads.DEFAULT_WORKLOAD
    return dataclasses.replace(settings or RunSettings(target=target), target=target)


def default_engine() -> Engine:
    """The real engine, imported on first use: it brings the monitors, psutil
    and NVML with it, which the TUI's first frame does not wait for."""
    from dlcprof.engine import Engine

    return Engine()


def save_after_stop(engine: Engine, session: Session, said: str) -> str | None:
    """Save a session a stop signal cut short where reports go, else under the
    temp folder; the line that says where (or why not). None: nothing to save."""
    if not session.events:
        return None
    try:
        saved = engine.save(session, None)
    except Exception as first:  # noqa: BLE001 - ReportError (tui/ never imports report/)
        try:
            saved = engine.save(session, engine.elsewhere(session))
        except Exception as e:  # noqa: BLE001
            return f"dlcprof: error: {said}: the session could not be saved ({first}; {e})"
    return f"dlcprof: {said}: the session is saved to {saved.resolve()}"


class RunController:
    def __init__(
        self,
        session: Session,
        emit: Emit,
        engine: Engine | None = None,
        standby: bool = True,
        settings: RunSettings | None = None,
    ) -> None:
        self.session = session
        # The settings the command line gave: the sidebar's choices go on top.
        self.settings = settings or initial_settings(None, None, session)
        self.emit = emit
        self._engine = engine
        self.live: LiveRun | None = None
        self.queue: list[RunSettings] = []
        self.cancelling = False
        self.standby_ready = False
        self.last_saved: Path | None = None
        self.save_failed: str | None = None  # why the last save failed: the next one asks where
        self.notices: deque[Notice] = deque()
        self._with_standby = standby
        self._standby: Standby | None = None  # made by prepare_standby

    @property
    def engine(self) -> Engine:
        """Imported on first use, after the TUI's first frame (prepare_standby)."""
        self._engine = self._engine or default_engine()
        return self._engine

    # --- state --------------------------------------------------------------------

    @property
    def busy(self) -> bool:
        return self.live is not None

    def live_run(self) -> Run | None:
        if self.live is None or self.live.run_id is None:
            return None
        return self.session.runs.get(self.live.run_id)

    def state(self, now: float | None) -> tuple[str, str]:
        """(state, detail) for the status bar; ``now`` None shows no elapsed times."""
        live = self.live
        if live is not None:
            run = self.live_run()
            where = f"run {live.run_id}"
            if run is not None and run.started_t is not None and now is not None:
                where += f" {text.secs(now - run.started_t)}"
            if self.queue:
                where += f" ({len(self.queue)} queued)"
            if self.cancelling:
                return "cancelling", where
            if run is None or run.status == "pending":
                return "starting worker", where
            phase = run.running_phase
            if phase is not None:
                elapsed = f" {text.secs(now - phase.t)}" if now is not None else ""
                return "compiling", f"{where} · {phase.name}{elapsed}"
            if live.settings.sweeping:
                step = f" · size {run.sweep[-1].size} done" if run.sweep else ""
                return "sweeping shapes", where + step
            compiled = any(c.finished for c in run.compiles.values())
            if live.settings.benchmark and compiled and run.benchmark is None:
                return "benchmarking", where
            if run.profiling is not None and run.kernel_profile is None:
                elapsed = f" {text.secs(now - run.profiling.t)}" if now is not None else ""
                return "profiling kernels", f"{where} · after the benchmark{elapsed}"
            if run.benchmark is not None and run.steady is None and run.status == "running":
                if "steady_allocator" not in run.unavailable:
                    return "benchmarking", f"{where} · {text.STEADY_ALLOC}"
            return "running", where
        last = self.session.latest_run
        if last is not None and last.status == "crashed":
            return "crashed", f"run {last.run_id}"
        if last is not None and last.status == "error":
            return "failed", f"run {last.run_id}"
        if last is not None and last.status in ("ok", "cancelled"):
            # Plainly over; the panes keep the run to browse (sort, filter, e).
            again = " · r compiles again at once" if self.standby_ready else ""
            word = "run complete" if last.status == "ok" else "run cancelled"
            return word, f"run {last.run_id} {last.status}: every pane keeps it{again}"
        if self.standby_ready:
            return "standby ready", "r compiles at once"
        return "idle", ""

    # --- runs ---------------------------------------------------------------------

    def settings_for(self, target: str, values: dict[str, Any], **overrides: Any) -> RunSettings:
        """The next run's settings: ``target`` and the sidebar's ``values`` over
        the command line's, then ``overrides``; checked before any worker starts
        (raises NotRunnable with the one line to show)."""
        try:
            spec = workloads.resolve(target)
        except workloads.WorkloadError as e:
            raise NotRunnable(str(e), bad_path=True) from e
        try:
            s = dataclasses.replace(self.settings, target=target, **{**values, **overrides})
            s.validate()
            if s.sweeping:  # what the source shows is said now, not after a compile
                workloads.check_sweep(spec, s.shapes)
        except (SettingsError, workloads.WorkloadError) as e:
            raise NotRunnable(str(e)) from e
        return s

    def start(self, queue: list[RunSettings]) -> str | None:
        """Run ``queue`` one after another; the id of the first run, None when
        no worker could start (a notice says why)."""
        if self.live is not None or not queue:
            return None
        self.queue = list(queue[1:])
        return self._launch(queue[0])

    def _launch(self, settings: RunSettings) -> str | None:
        worker = self._standby.take() if self._standby is not None else None
        self.standby_ready = False
        try:
            live = self.engine.live_run(settings, self.emit, worker=worker)
            run_id = live.start()
        except OSError as e:
            self.queue.clear()
            self._notice("error", f"could not start a worker: {e}")
            return None
        self.live, self.cancelling = live, False
        return run_id

    def apply(self, e: ev.Event) -> None:
        """Fold one event into the session (on the thread that owns it) and react."""
        if isinstance(e, ev.WorkerExited):
            run = self.live_run()
            self.session.apply(e)
            self._worker_exited(e, run)
        else:
            self.session.apply(e)

    def _worker_exited(self, e: ev.WorkerExited, run: Run | None) -> None:
        """The live worker ended; ``run`` is its run. Starts the next queued run."""
        self.live, self.cancelling = None, False
        # A run that already failed and said why (ErrorRaised) exits non-zero
        # too: only an exit that cut the run short is a crash.
        crashed = (
            not e.cancelled
            and (e.signal is not None or (e.returncode or 0) != 0)
            and (run is None or run.status == "crashed")
        )
        if e.cancelled:
            self.queue.clear()
            self._notice("warning", f"cancelled ({e.message}): what was captured is kept")
        elif crashed:
            self.queue.clear()
            self._notice(
                "error", f"{e.message} — what was captured is kept; press r to retry", logged=True
            )
        if self.queue:
            self._launch(self.queue.pop(0))
        else:
            self.prepare_standby()

    def cancel(self, reason: str = "cancelled by user") -> bool:
        """Stop the live run and drop the queue; False when nothing runs."""
        live = self.live
        if live is None:
            return False
        self.queue.clear()
        if not self.cancelling:
            self.cancelling = True
            # Killing waits up to a second for the process group: off the caller's thread.
            threading.Thread(target=live.cancel, args=(reason,), daemon=True).start()
        return True

    # --- the standby worker ---------------------------------------------------------

    def prepare_standby(self) -> None:
        """Spawn a worker that imports torch now and waits for a request (a thread)."""
        if not self._with_standby:
            return
        if self._standby is None:
            self._standby = self.engine.standby()
        threading.Thread(target=self._prepare, name="dlcprof-standby", daemon=True).start()

    def _prepare(self) -> None:
        assert self._standby is not None
        try:
            ready = self._standby.prepare()
        except OSError as e:
            self._notice("warning", f"no standby worker: {e}")
            return
        if ready is not None:
            self.emit(ready)  # the device and torch version, before any run
        self.standby_ready = self.live is None

    # --- saving ---------------------------------------------------------------------

    def save(self, directory: Path | None = None) -> bool:
        """Write the session as a report folder (a thread); False when there is
        nothing to save. The outcome comes back as a notice."""
        if not self.session.events:
            self._notice("warning", "nothing to save yet: run a workload first (r)")
            return False
        events = list(self.session.events)  # a stable copy: the app keeps folding
        threading.Thread(target=self._save, args=(events, directory), daemon=True).start()
        return True

    def _save(self, events: list[ev.Event], directory: Path | None) -> None:
        try:
            path = self.engine.save(Session.from_events(events), directory)
        except Exception as e:  # noqa: BLE001 - ReportError, OSError, a missing writer: say it
            self.save_failed = f"save failed: {e}"
            self._notice(
                "error",
                f"{self.save_failed} — the session is kept: press ctrl+s to save it elsewhere",
                topic="save",
            )
            return
        self.save_failed = None
        self.last_saved = Path(path).resolve()
        self._notice("information", f"report saved: {self.last_saved}", topic="save")

    def save_suggestion(self) -> Path:
        """A folder to offer when asking where to save."""
        return self.engine.elsewhere(self.session)

    def close(self, reason: str = "the app closed", wait_s: float = 5.0) -> None:
        """Stop the live run and the standby worker; waits (up to ``wait_s``) until
        the run's last events, its WorkerExited included, have been emitted."""
        live = self.live
        if live is not None:
            live.cancel(reason)
            live.wait(wait_s)
        if self._standby is not None:
            self._standby.close()

    def _notice(
        self, severity: Severity, message: str, logged: bool = False, topic: str = ""
    ) -> None:
        self.notices.append(Notice(severity, message, logged, topic))
