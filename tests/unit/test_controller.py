"""The run controller driven directly (no Textual): queue, cancel, crash, save, standby.

The scripted LiveRun emits events from a background thread like the real
one; the test folds them on its own thread as the app's tick would.
"""

from __future__ import annotations

import queue
import threading
from collections.abc import Callable
from pathlib import Path
from typing import cast

import pytest
from helpers.engine import ScriptedLiveRun, fold_until, scripted_run

from dlcprof import events as ev
from dlcprof.engine import Engine, Standby
from dlcprof.report import ReportError, load_session
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.tui.controller import RunController


@pytest.fixture
def scripted() -> type[ScriptedLiveRun]:
    return type("ScriptedRun", (ScriptedLiveRun,), {"instances": []})


def controller(engine: Engine, standby: bool = False) -> tuple[RunController, queue.Queue]:
    inbox: queue.Queue[ev.Event] = queue.Queue()
    return RunController(Session(), inbox.put, engine, standby=standby), inbox


def settings(**kw) -> RunSettings:
    return RunSettings(target="pointwise-chain", **kw)


def test_a_run_fills_the_session_and_ends_complete(scripted) -> None:
    c, inbox = controller(Engine(live_run=scripted))
    run_id = c.start([settings()])
    assert run_id is not None and c.busy
    fold_until(c, inbox, lambda: not c.busy)
    run = c.session.runs[run_id]
    assert run.status == "ok" and run.benchmark is not None and len(run.kernels) == 1
    assert c.state(None) == ("run complete", f"run {run_id} ok: every pane keeps it")


def test_the_status_says_when_kernels_are_being_profiled(scripted) -> None:
    scripted.hold = True
    scripted.script = staticmethod(
        lambda rid, s: [e for e in scripted_run(rid, s) if not isinstance(e, ev.KernelsProfiled)]
    )
    c, inbox = controller(Engine(live_run=scripted))
    c.start([settings()])
    fold_until(c, inbox, lambda: c.session.latest_run and c.session.latest_run.profiling)
    state, detail = c.state(c.session.latest_run.profiling.t + 1.5)
    assert state == "profiling kernels" and detail.endswith("after the benchmark 1.50 s")
    c.cancel()
    fold_until(c, inbox, lambda: not c.busy)


def test_a_second_start_while_busy_starts_nothing(scripted) -> None:
    scripted.hold = True
    c, inbox = controller(Engine(live_run=scripted))
    assert c.start([settings()]) is not None
    assert c.start([settings(mode="max-autotune")]) is None
    assert len(scripted.instances) == 1
    c.cancel()
    fold_until(c, inbox, lambda: not c.busy)


def test_a_queue_runs_one_after_another(scripted) -> None:
    c, inbox = controller(Engine(live_run=scripted))
    c.start([settings(sweep=True, dynamic="false"), settings(sweep=True, dynamic="true")])
    assert c.state(None)[1].endswith("(1 queued)")  # the status bar says what is left
    fold_until(c, inbox, lambda: len(scripted.instances) == 2 and not c.busy)
    assert [r.settings.dynamic for r in c.session.runs.values()] == ["false", "true"]
    assert all(r.status == "ok" for r in c.session.runs.values())


def test_cancel_drops_the_queue_and_keeps_what_was_captured(scripted) -> None:
    scripted.hold = True
    c, inbox = controller(Engine(live_run=scripted))
    c.start([settings(), settings(mode="max-autotune")])
    fold_until(c, inbox, lambda: c.session.latest_run and c.session.latest_run.kernels)
    assert c.cancel("cancelled by user")
    assert c.state(None)[0] == "cancelling"
    fold_until(c, inbox, lambda: not c.busy)
    assert len(scripted.instances) == 1  # the queued run never started
    run = c.session.latest_run
    assert run.status == "cancelled" and run.kernels  # captured data stays
    assert any(n.severity == "warning" and "cancelled" in n.message for n in c.notices)
    assert not c.cancel()  # nothing left to cancel


def test_a_crash_is_one_notice_and_stops_the_queue(scripted) -> None:
    scripted.script = staticmethod(lambda rid, s: scripted_run(rid, s)[:8])  # dies mid-compile
    scripted.exit_event = ev.WorkerExited(
        returncode=-11, signal="SIGSEGV", message="worker died with SIGSEGV"
    )
    c, inbox = controller(Engine(live_run=scripted))
    c.start([settings(), settings()])
    fold_until(c, inbox, lambda: not c.busy)
    assert len(scripted.instances) == 1
    assert c.session.latest_run.status == "crashed"
    (notice,) = c.notices
    assert notice.severity == "error" and "SIGSEGV" in notice.message
    assert c.state(None)[0] == "crashed"


def test_save_writes_a_report_folder_and_says_where(scripted, tmp_path: Path) -> None:
    c, inbox = controller(Engine(live_run=scripted))
    assert not c.save(tmp_path / "r")  # nothing yet
    assert "nothing to save" in c.notices.popleft().message
    c.start([settings()])
    fold_until(c, inbox, lambda: not c.busy)
    assert c.save(tmp_path / "r")
    fold_until(c, inbox, lambda: c.notices)
    notice = c.notices.popleft()
    assert notice.severity == "information" and str(c.last_saved) in notice.message
    assert len(load_session(c.last_saved / "session.json").runs) == 1


def test_a_failed_save_is_one_line_and_keeps_the_session(scripted) -> None:
    def refuse(session, directory):
        raise ReportError("cannot create r: No space left on device")

    c, inbox = controller(Engine(live_run=scripted, save=refuse))
    c.start([settings()])
    fold_until(c, inbox, lambda: not c.busy)
    before = len(c.session.events)
    c.save()
    fold_until(c, inbox, lambda: c.notices)
    notice = c.notices.popleft()
    assert notice.severity == "error" and notice.message.startswith("save failed: cannot create")
    assert len(c.session.events) == before and c.last_saved is None


def test_the_standby_worker_is_handed_to_the_next_run(scripted) -> None:
    ready = ev.WorkerReady(
        pid=7,
        schema=1,
        torch_version="2.13.0+cpu",
        python_version="3.11",
        cuda_available=False,
        device_name="Test CPU",
        cpu_count=2,
    )
    worker = object()
    prepared = threading.Event()

    class FakeStandby:
        def prepare(self) -> ev.WorkerReady:
            prepared.set()
            return ready

        def take(self) -> object:
            return worker

        def close(self) -> None:
            pass

    standby = cast(Callable[[], Standby], FakeStandby)  # a stand-in
    c, inbox = controller(Engine(live_run=scripted, standby=standby), standby=True)
    c.prepare_standby()
    fold_until(c, inbox, lambda: c.standby_ready and c.session.worker is not None)
    assert c.session.worker is ready  # device and torch version known before any run
    assert c.state(None) == ("standby ready", "r compiles at once")
    c.start([settings()])
    assert scripted.instances[0].worker is worker and not c.standby_ready
    fold_until(c, inbox, lambda: not c.busy)


@pytest.fixture
def slow_spawn(monkeypatch) -> type:
    """WorkerProcess replaced by a stand-in whose process is slow to start: it
    sets ``spawning``, then starts once ``spawned`` is set; ``wait_ready`` waits
    for ``released``, which ``cancel`` sets (``cancelled`` counts the calls)."""
    import dlcprof.engine as engine

    class SlowSpawn:
        spawning, spawned, released = threading.Event(), threading.Event(), threading.Event()
        cancelled = 0

        def __init__(self, cache: str) -> None:
            self.spawning.set()
            self.spawned.wait(10)
            self.proc = type("Proc", (), {"poll": staticmethod(lambda: None)})()

        def wait_ready(self) -> None:
            self.released.wait(10)

        def cancel(self, reason: str) -> None:
            type(self).cancelled += 1
            self.released.set()

    monkeypatch.setattr(engine, "WorkerProcess", SlowSpawn)
    return SlowSpawn


def test_a_standby_worker_taken_while_its_process_starts_is_handed_out(slow_spawn) -> None:
    """take() between the worker's spawn and its record as importing (a loaded
    machine widens it) waits for it rather than leave the run to start a second
    worker that imports torch again."""
    standby = Standby()
    preparing = threading.Thread(target=standby.prepare)
    preparing.start()
    assert slow_spawn.spawning.wait(10)
    took: list[object] = []
    taking = threading.Thread(target=lambda: took.append(standby.take()))
    taking.start()
    taking.join(0.2)
    assert taking.is_alive()  # waits for the spawn, not None
    slow_spawn.spawned.set()
    taking.join(10)
    slow_spawn.released.set()
    preparing.join(10)
    assert len(took) == 1 and isinstance(took[0], slow_spawn)


def test_a_standby_closed_while_its_worker_starts_kills_it_itself(slow_spawn) -> None:
    """close() between the worker's spawn and its record as importing returns
    only once it is killed: prepare()'s thread, a daemon, may die with the app
    right after (a loaded machine widens the window)."""
    standby = Standby()
    preparing = threading.Thread(target=standby.prepare, daemon=True)
    preparing.start()
    assert slow_spawn.spawning.wait(10)
    closing = threading.Thread(target=standby.close)
    closing.start()
    closing.join(0.2)
    assert closing.is_alive()  # waits for the spawn
    slow_spawn.spawned.set()
    closing.join(10)
    assert slow_spawn.cancelled  # by the time close() returned
    preparing.join(10)
    assert standby.take() is None


# --- the next run's settings ------------------------------------------------------------------


def test_the_sidebar_goes_over_the_command_lines_settings(scripted) -> None:
    from dlcprof.tui.controller import initial_settings

    given = RunSettings(target="gelu-mlp", iters=3, reps=2, threads=1)
    assert initial_settings(None, given, Session()) == given
    assert initial_settings("tiny-ops", given, Session()).target == "tiny-ops"
    c = RunController(
        Session(), lambda e: None, Engine(live_run=scripted), standby=False, settings=given
    )
    s = c.settings_for("tiny-ops", {"mode": "max-autotune", "freezing": True}, benchmark=False)
    assert (s.target, s.mode, s.freezing, s.benchmark) == ("tiny-ops", "max-autotune", True, False)
    assert (s.iters, s.reps, s.threads) == (3, 2, 1)  # what the command line gave stays


def test_settings_that_cannot_run_are_one_line_before_any_worker(scripted, tmp_path: Path) -> None:
    from dlcprof.tui.controller import NotRunnable

    c = RunController(Session(), lambda e: None, Engine(live_run=scripted), standby=False)
    with pytest.raises(NotRunnable) as bad_path:
        c.settings_for(str(tmp_path / "nope.py"), {})
    assert bad_path.value.bad_path and "not found" in bad_path.value.why
    assert str(bad_path.value).endswith("fix the path, or pick a bundled workload")
    with pytest.raises(NotRunnable) as no_sweep:
        c.settings_for("tiny-ops", {}, sweep=True)
    assert not no_sweep.value.bad_path and "has no inputs_for" in str(no_sweep.value)
    with pytest.raises(NotRunnable) as bad_mode:
        c.settings_for("tiny-ops", {"mode": "fast"})
    assert "invalid --mode 'fast'" in str(bad_mode.value) and "\n" not in str(bad_mode.value)
    assert scripted.instances == []
