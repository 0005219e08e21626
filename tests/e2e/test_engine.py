"""The standby worker: handed out only once ready, never to two readers."""

from __future__ import annotations

import threading
import time

import psutil

from dlcprof import events as ev
from dlcprof.engine import Standby
from dlcprof.settings import RunSettings


def test_standby_is_handed_out_only_once_ready():
    standby = Standby()
    result: list[ev.WorkerReady | None] = []
    preparing = threading.Thread(target=lambda: result.append(standby.prepare()))
    preparing.start()
    try:
        # While torch is still importing in the worker, take() must not hand it
        # out: its event stream is being read by prepare().
        assert standby.take() is None
        preparing.join(timeout=120)
        (ready,) = result
        assert isinstance(ready, ev.WorkerReady) and ready.torch_version
        assert standby.prepare() is None  # one is ready already
        worker = standby.take()
        assert worker is not None and standby.take() is None
        worker.start(RunSettings(target="/nonexistent/model.py"))
        events = list(worker.events())
        # Its WorkerReady went to prepare()'s caller; the run's events come here.
        assert not any(isinstance(e, ev.WorkerReady) for e in events)
        assert any(isinstance(e, ev.ErrorRaised) and e.stage == "load" for e in events)
        assert isinstance(events[-1], ev.WorkerExited) and events[-1].returncode == 1
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
