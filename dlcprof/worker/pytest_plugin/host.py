"""The pytest plugin's in-process host: the shared probe set
(``worker/probe_set.py``), installed once in the test process, folding its
events straight into a Session (no socket: the tests and the probes share a
process). Each watched test is a run of its own, keyed by its node id, and
starts with Dynamo's caches reset unless the test keeps them."""

from __future__ import annotations

import os
import platform
import socket
import sys
import threading
import time

import torch

from dlcprof import events as ev
from dlcprof.session import Run, Session
from dlcprof.worker.cores import usable_cores
from dlcprof.worker.fresh_lines import FreshLines
from dlcprof.worker.probe_set import ProbeSet
from dlcprof.worker.probes import ProbeNotes, compile_calls
from dlcprof.worker.probes import raised as raised_probe


class _Fold:
    """A sink that folds each event into the session (compiles may run on
    more than one thread)."""

    def __init__(self, session: Session) -> None:
        self.session = session
        self._lock = threading.Lock()

    def emit(self, event: ev.Event) -> None:
        with self._lock:
            self.session.apply(event)


def _fresh() -> FreshLines:
    fresh = FreshLines()
    fresh.home = os.getcwd()
    return fresh


class Host:
    def __init__(self, session: Session) -> None:
        self.session = session
        self.sink = _Fold(session)
        self.probes: ProbeSet | None = None
        self.started: dict[str, float] = {}
        self.run_id = ""
        # A compile that raised into the test (fullgraph=True): the break it
        # stopped at, judged; the hook on Dynamo's class goes in once.
        self.raised = raised_probe.RaisedCompiles(self.sink, lambda: self.run_id)

    def start(self, run_id: str, reset: bool) -> Run:
        """A new run for test ``run_id``: Dynamo's caches reset (``reset``), the
        probes following this run from now on."""
        if reset:
            torch._dynamo.reset()
        notes = ProbeNotes(self.sink, run_id)
        self.run_id = run_id
        self.raised.said.clear()  # each test says its own
        if self.probes is None:
            self.probes = ProbeSet(self.sink, run_id, notes, _fresh())
            raised_probe.install(self.raised, notes)
            # Each test's torch.compile calls: the mode, dynamic and backend it compiled with.
            compile_calls.install(lambda: self.run_id, self.sink, notes)
        else:
            self.probes.close()
            self.probes.follow(run_id, notes, _fresh())
        self.started[run_id] = time.time()
        self.sink.emit(
            ev.ProcessAttached(
                run_id=run_id,
                pid=os.getpid(),
                ppid=os.getppid(),
                argv=[run_id],
                host=socket.gethostname(),
                started_t=self.started[run_id],
                torch_version=str(torch.__version__),
                python_version=platform.python_version(),
                cpu_count=usable_cores(),
                test=True,
            )
        )
        return self.session.run(run_id)

    def flush(self) -> None:
        """The kernels of the compile in progress, said now (the fixture reads them)."""
        if self.probes is not None:
            self.probes.dispatcher.flush()

    def finish(self, run_id: str, status: str) -> None:
        self.flush()
        start = self.started.pop(run_id, time.time())
        self.sink.emit(ev.RunFinished(run_id=run_id, status=status, wall_s=time.time() - start))

    def program(self, started: bool, status: int = 0, wall_s: float = 0.0) -> None:
        """The test session as a program: how pytest was started, and how it ended."""
        if started:
            argv = [sys.executable, "-m", "pytest", *sys.argv[1:]]
            self.sink.emit(ev.ProgramStarted(argv=argv, cwd=os.getcwd(), pid=os.getpid()))
        else:
            message = f"pytest exited with status {status}"
            self.sink.emit(
                ev.ProgramExited(returncode=status, signal=None, wall_s=wall_s, message=message)
            )
