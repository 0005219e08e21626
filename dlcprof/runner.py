"""Spawn a worker process and turn everything it says into events.

The worker writes events on a pipe of their own (``--events-fd``); its stdout
and stderr (the workload's prints, torch's warnings) become ``LogEmitted``
events, so nothing the user's code prints can corrupt the stream. The worker
runs in its own process group: cancelling kills it and its g++ children.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from dlcprof import events as ev
from dlcprof.settings import RunSettings

# Seconds without any event or output before a worker counts as hung.
DEFAULT_IDLE_TIMEOUT_S = 600.0
_KILL_GRACE_S = 1.0


def new_run_id() -> str:
    return uuid.uuid4().hex[:8]


def cache_env(cache: str) -> tuple[dict[str, str], list[str]]:
    """The environment of a ``cache`` setting, and the folders to remove after.

    cold: a fresh TMPDIR and Inductor cache dir (the precompiled header lives
    under TMPDIR, outside the cache dir, so a truly cold compile needs both);
    fresh: a fresh Inductor cache dir only, so every kernel is built again but
    the one-time header build is not repeated; warm: nothing changes."""
    env: dict[str, str] = {}
    if cache == "cold":
        env["TMPDIR"] = tempfile.mkdtemp(prefix="dlcprof-cold-tmp-")
    if cache in ("cold", "fresh"):
        env["TORCHINDUCTOR_CACHE_DIR"] = tempfile.mkdtemp(prefix=f"dlcprof-{cache}-cache-")
    return env, list(env.values())


class WorkerProcess:
    """One worker: imports torch, takes one run request, exits."""

    def __init__(
        self,
        cache: str = "warm",
        idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S,
        env: dict[str, str] | None = None,
    ) -> None:
        self.cache = cache
        self.idle_timeout_s = idle_timeout_s
        self.run_id: str | None = None
        self._cancel_reason: str | None = None
        self._cleanup: list[str] = []
        child_env = dict(os.environ if env is None else env)
        child_env["PYTHONUNBUFFERED"] = "1"
        extra, self._cleanup = cache_env(cache)
        child_env.update(extra)
        # torch's raw trace of each run (for tlparse), kept for the report folder.
        child_env.setdefault(ev.RAW_TRACE_DIR_ENV, tempfile.mkdtemp(prefix="dlcprof-trace-"))
        # The worker must import this same dlcprof, also when run from a checkout.
        root = str(Path(__file__).resolve().parent.parent)
        child_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (root, child_env.get("PYTHONPATH", "")) if p
        )
        read_fd, write_fd = os.pipe()
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "dlcprof.worker", "--events-fd", str(write_fd)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd,),
            env=child_env,
            start_new_session=True,
        )
        os.close(write_fd)
        self._events_fd = read_fd
        self._stream = self._read_events()
        self._early: list[ev.Event] = []  # read by wait_ready, still to be yielded

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self, settings: RunSettings, run_id: str | None = None) -> str:
        """Send the one run request; returns its run id."""
        self.run_id = run_id or new_run_id()
        line = json.dumps({"run_id": self.run_id, "settings": settings.to_dict()}) + "\n"
        assert self.proc.stdin is not None
        try:
            self.proc.stdin.write(line.encode())
            self.proc.stdin.close()
        except BrokenPipeError:
            pass  # the worker already died: events() reports how
        return self.run_id

    def dismiss(self) -> None:
        """Let an unused standby worker exit cleanly (EOF on its stdin)."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except BrokenPipeError:
                pass

    def cancel(self, reason: str = "cancelled by user") -> None:
        """Kill the worker and its compiler children; events() then ends."""
        if self._cancel_reason is None and self.proc.poll() is None:
            self._cancel_reason = reason
        _kill_group(self.proc)

    def wait_ready(self) -> ev.WorkerReady | None:
        """Block until torch is imported in the worker; None if it died first.

        The WorkerReady returned here is the caller's: events() will not
        yield it again (anything read before it, it still yields)."""
        for event in self._stream:
            if isinstance(event, ev.WorkerReady):
                return event
            self._early.append(event)
            if isinstance(event, ev.WorkerExited):
                return None
        return None

    def events(self) -> Iterator[ev.Event]:
        """Every event until the worker exits, ending with WorkerExited."""
        while self._early:
            yield self._early.pop(0)
        yield from self._stream

    def _read_events(self) -> Iterator[ev.Event]:
        sel = selectors.DefaultSelector()
        assert self.proc.stdout is not None and self.proc.stderr is not None
        streams = {
            self._events_fd: "events",
            self.proc.stdout.fileno(): "stdout",
            self.proc.stderr.fileno(): "stderr",
        }
        buffers = {fd: b"" for fd in streams}
        for fd in streams:
            sel.register(fd, selectors.EVENT_READ)
        last_activity = time.monotonic()
        try:
            while streams:
                ready = sel.select(timeout=0.5)
                if not ready:
                    if time.monotonic() - last_activity > self.idle_timeout_s:
                        self.cancel(
                            f"worker hung: no event for {self.idle_timeout_s:.0f} s "
                            "(raise --timeout if the compile is just slow)"
                        )
                    continue
                last_activity = time.monotonic()
                for key, _ in ready:
                    fd = key.fd
                    chunk = os.read(fd, 1 << 16)
                    if not chunk:
                        sel.unregister(fd)
                        if buffers[fd]:
                            yield from self._lines(streams[fd], [buffers[fd]])
                        del streams[fd]
                        continue
                    *lines, buffers[fd] = (buffers[fd] + chunk).split(b"\n")
                    yield from self._lines(streams[fd], lines)
        finally:
            sel.close()
            os.close(self._events_fd)
        yield self._exited()

    def _lines(self, stream: str, lines: list[bytes]) -> Iterator[ev.Event]:
        for raw in lines:
            if not raw.strip():
                continue
            if stream == "events":
                try:
                    yield ev.decode(raw)
                except ev.ProtocolError as e:
                    yield ev.LogEmitted(
                        run_id=self.run_id, level="warning", source="dlcprof",
                        message=f"dropped a malformed event line ({e})",
                    )  # fmt: skip
            else:
                text = raw.decode(errors="replace").rstrip()
                level = "warning" if stream == "stderr" else "info"
                yield ev.LogEmitted(run_id=self.run_id, level=level, source=stream, message=text)

    def _exited(self) -> ev.WorkerExited:
        try:
            rc = self.proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            _kill_group(self.proc)
            rc = self.proc.wait()
        for path in self._cleanup:
            shutil.rmtree(path, ignore_errors=True)
        sig = signal.Signals(-rc).name if rc < 0 else None
        if self._cancel_reason is not None:
            return ev.WorkerExited(
                returncode=rc, signal=sig, message=self._cancel_reason, cancelled=True
            )
        if sig is not None:
            message = f"worker died with {sig}: the compile crashed the process"
        elif rc != 0:
            message = f"worker exited with status {rc}"
        else:
            message = "worker finished"
        return ev.WorkerExited(returncode=rc, signal=sig, message=message)


def _kill_group(proc: subprocess.Popen) -> None:
    """SIGTERM the worker's process group, SIGKILL what is left after a grace."""
    if proc.poll() is not None:
        return
    try:
        os.killpg(proc.pid, signal.SIGTERM)
    except ProcessLookupError:
        return
    deadline = time.monotonic() + _KILL_GRACE_S
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            break
        time.sleep(0.02)
    try:
        os.killpg(proc.pid, signal.SIGKILL)  # g++ children may outlive the worker
    except ProcessLookupError:
        pass


def run_once(
    settings: RunSettings, idle_timeout_s: float = DEFAULT_IDLE_TIMEOUT_S
) -> Iterator[ev.Event]:
    """Spawn a worker, run one request, yield every event (headless helper)."""
    worker = WorkerProcess(cache=settings.cache, idle_timeout_s=idle_timeout_s)
    worker.start(settings)
    try:
        yield from worker.events()
    finally:
        worker.cancel()
