"""The standby worker: handed out ready or still importing, never to two readers."""

from __future__ import annotations

import queue
import threading
import time

import psutil
from helpers.engine import fold_until

from dlcprof import events as ev
from dlcprof.engine import Engine, Standby
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.tui.controller import RunController


def test_r_while_the_standby_imports_torch_runs_in_that_worker():
    """r pressed before the standby worker is ready: the run waits for that
    worker rather than start a second one to import torch again (seconds of
    CPU on a machine the first import already loads)."""
    standby = Standby()
    inbox: queue.Queue[ev.Event] = queue.Queue()
    c = RunController(Session(), inbox.put, Engine(standby=lambda: standby), standby=True)
    c.prepare_standby()
    deadline = time.monotonic() + 60
    while not _workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    (importing,) = _workers()
    try:
        run_id = c.start([RunSettings(target="/nonexistent/model.py")])
        standby.close()  # no next standby after this run: one torch import in all
        assert run_id is not None and c.live is not None
        assert c.live.worker.pid == importing.pid
        assert [p.pid for p in _workers()] == [importing.pid]  # no second worker
        fold_until(c, inbox, lambda: not c.busy, timeout_s=120)
        readies = [e for e in c.session.events if isinstance(e, ev.WorkerReady)]
        assert [r.pid for r in readies] == [importing.pid]  # shown once, from that worker
        run = c.session.runs[run_id]
        assert run.status == "error" and any(e.stage == "load" for e in run.errors)
    finally:
        c.close()


def test_standby_is_handed_out_once_ready_and_exits_zero_unneeded():
    standby = Standby()
    result: list[ev.WorkerReady | None] = []
    preparing = threading.Thread(target=lambda: result.append(standby.prepare()))
    preparing.start()
    try:
        preparing.join(timeout=120)
        (ready,) = result
        assert isinstance(ready, ev.WorkerReady) and ready.torch_version
        assert ready.schema == ev.SCHEMA_VERSION and ready.cpu_count >= 1
        assert standby.prepare() is None  # one is ready already
        worker = standby.take()
        assert worker is not None and standby.take() is None
        # Not needed after all (a run's settings asked for another cache): EOF on
        # its stdin, and it exits 0 having said nothing more (its WorkerReady went
        # to prepare()'s caller; a run in a taken worker: the test above).
        worker.dismiss()
        events = [
            e
            for e in worker.events()
            if not (isinstance(e, ev.LogEmitted) and e.source in ("stdout", "stderr"))
        ]
        (exited,) = events
        assert isinstance(exited, ev.WorkerExited), events
        assert exited.returncode == 0 and not exited.cancelled
    finally:
        standby.close()


def test_closing_while_preparing_leaves_no_worker():
    standby = Standby()
    preparing = threading.Thread(target=standby.prepare)
    preparing.start()
    standby.close()
    preparing.join(timeout=120)
    assert standby.take() is None


def test_closing_while_torch_imports_kills_the_worker_at_once():
    """close() does not wait for prepare()'s thread: a daemon thread that dies
    with the app would leave the worker behind, reparented to PID 1."""
    standby = Standby()
    preparing = threading.Thread(target=standby.prepare, daemon=True)
    preparing.start()
    deadline = time.monotonic() + 60
    while not _workers() and time.monotonic() < deadline:
        time.sleep(0.05)
    (worker,) = _workers()
    standby.close()
    assert not worker.is_running() or worker.status() == psutil.STATUS_ZOMBIE
    preparing.join(timeout=120)
    assert standby.take() is None


def _workers() -> list[psutil.Process]:
    return [
        p
        for p in psutil.Process().children()
        if "dlcprof.worker" in " ".join(p.cmdline()) and p.status() != psutil.STATUS_ZOMBIE
    ]
