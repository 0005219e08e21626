"""Spawn a worker process and turn everything it says into events.

The worker writes events on a pipe of their own (``--events-fd``); its stdout
and stderr (the workload's prints, torch's warnings) become ``LogEmitted``
events, so nothing the user's code prints can corrupt the stream. The worker
runs in its own process group: cancelling kills it and its g++ children.

The worker's stdin stays open after the run request: it is the worker's
lifeline (``dlcprof/worker/lifeline.py``). When this process dies, whatever
the signal, the pipe closes and the worker kills its group and exits.
"""

from __future__ import annotations

import json
import os
import selectors
import shutil
import signal
import subprocess
import sys
import threading
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

from dlcprof import events as ev
from dlcprof import scratch
from dlcprof.attach_contract import RAW_TRACE_DIR_ENV
from dlcprof.bounded_output import BoundedOutput
from dlcprof.settings import RunSettings

# Seconds without any event or output before a worker counts as hung.
DEFAULT_IDLE_TIMEOUT_S = 600.0
_KILL_GRACE_S = 1.0


def new_run_id() -> str:
    return uuid.uuid4().hex[:8]


def cache_env(cache: str) -> dict[str, str]:
    """The environment of a ``cache`` setting; each value is a fresh folder, to
    remove after.

    cold: a fresh TMPDIR and Inductor cache dir (the precompiled header lives
    under TMPDIR, outside the cache dir, so a truly cold compile needs both);
    fresh: a fresh Inductor cache dir only, so every kernel is built again but
    the one-time header build is not repeated; warm: nothing changes."""
    env: dict[str, str] = {}
    if cache == "cold":
        env["TMPDIR"] = str(scratch.new_folder("cold-tmp"))
    if cache in ("cold", "fresh"):
        env["TORCHINDUCTOR_CACHE_DIR"] = str(scratch.new_folder(f"{cache}-cache"))
    return env


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
        child_env = dict(os.environ if env is None else env)
        self._cache_dirs = cache_env(cache)
        child_env.update(self._cache_dirs)
        # torch's raw trace of each run (for tlparse), kept for the report folder.
        child_env.setdefault(RAW_TRACE_DIR_ENV, str(scratch.folder()))
        # The worker must import this same dlcprof, also when run from a checkout.
        root = str(Path(__file__).resolve().parent.parent)
        child_env["PYTHONPATH"] = os.pathsep.join(
            p for p in (root, child_env.get("PYTHONPATH", "")) if p
        )
        read_fd, write_fd = os.pipe()
        # Answers to the worker's requests for a quiet window (worker/quiet.py): a
        # pipe of their own, as stdin is the lifeline and must carry nothing more.
        control_read, control_write = os.pipe()
        self.proc = subprocess.Popen(
            [
                sys.executable,
                "-m",
                "dlcprof.worker",
                "--events-fd",
                str(write_fd),
                "--control-fd",
                str(control_read),
            ],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            pass_fds=(write_fd, control_read),
            env=child_env,
            start_new_session=True,
        )
        os.close(write_fd)
        os.close(control_read)
        self._control = os.fdopen(control_write, "wb", buffering=0)
        self._events_fd = read_fd
        self._partial = b""  # an event line not yet complete
        self._stream = self._read_events()
        self._early: list[ev.Event] = []  # read by wait_ready, still to be yielded
        # One reader at a time: a standby worker handed to a run while torch still
        # imports is read by the standby's wait_ready first, then by the run.
        self._reader = threading.Lock()
        self._oom_kills = oom_kills()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def start(self, settings: RunSettings, run_id: str | None = None, quiet: bool = False) -> str:
        """Send the one run request; returns its run id. ``quiet``: the worker
        asks before it times (TimingStarted) and waits for ``answer_quiet``."""
        self.run_id = run_id or new_run_id()
        request: dict[str, object] = {"run_id": self.run_id, "settings": settings.to_dict()}
        if quiet:
            request["quiet"] = True
        assert self.proc.stdin is not None
        try:
            # Left open: the worker's lifeline (closed when the worker exits).
            self.proc.stdin.write((json.dumps(request) + "\n").encode())
            self.proc.stdin.flush()
        except (BrokenPipeError, ValueError):
            pass  # the worker already died: events() reports how
        return self.run_id

    def answer_quiet(self, quiet: bool) -> None:
        """Tell the worker whether nothing watches it now (dlcprof/worker/quiet.py)."""
        try:
            self._control.write(b"quiet\n" if quiet else b"busy\n")
        except (BrokenPipeError, OSError, ValueError):
            pass  # the worker died: events() reports how

    def dismiss(self) -> None:
        """Let an unused standby worker exit cleanly (EOF on its stdin)."""
        if self.proc.stdin and not self.proc.stdin.closed:
            try:
                self.proc.stdin.close()
            except OSError:
                pass

    def cancel(self, reason: str = "cancelled by user") -> None:
        """Kill the worker and its compiler children; events() then ends."""
        if self._cancel_reason is None and self.proc.poll() is None:
            self._cancel_reason = reason
        _kill_group(self.proc)

    def wait_ready(self) -> ev.WorkerReady | None:
        """Block until torch is imported in the worker; None if it died first,
        or if events() is read already (a run took the worker: it yields all).

        The WorkerReady returned here is the caller's: events() will not
        yield it again (anything read before it, it still yields)."""
        if not self._reader.acquire(blocking=False):
            return None
        try:
            for event in self._stream:
                if isinstance(event, ev.WorkerReady):
                    return event
                self._early.append(event)
                if isinstance(event, ev.WorkerExited):
                    return None
            return None
        finally:
            self._reader.release()

    def events(self) -> Iterator[ev.Event]:
        """Every event until the worker exits, ending with WorkerExited; starts
        once a wait_ready in progress has returned."""
        with self._reader:
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
        outputs = {name: BoundedOutput(name) for name in ("stdout", "stderr")}
        for fd in streams:
            sel.register(fd, selectors.EVENT_READ)
        last_activity = time.monotonic()
        try:
            while streams:
                # Once the events pipe closed, the worker is ending: a thread or
                # child it left behind may hold stdout open, so stop when it is gone.
                if self._events_fd not in streams and _finished(self.proc):
                    yield from self._drain(sel, streams, outputs)
                    break
                ready = sel.select(timeout=0.5 if self._events_fd in streams else 0.05)
                if not ready:
                    if time.monotonic() - last_activity > self.idle_timeout_s:
                        self.cancel(
                            f"worker hung: no event for {self.idle_timeout_s:.0f} s "
                            "(raise --timeout if the compile is just slow)"
                        )
                    continue
                last_activity = time.monotonic()
                for key, _ in ready:
                    yield from self._read_fd(key.fd, sel, streams, outputs)
            for out in outputs.values():
                out.run_id = self.run_id
                yield from out.close()
        finally:
            sel.close()
            os.close(self._events_fd)
        yield self._exited()

    def _read_fd(
        self,
        fd: int,
        sel: selectors.BaseSelector,
        streams: dict[int, str],
        outputs: dict[str, BoundedOutput],
    ) -> Iterator[ev.Event]:
        chunk = os.read(fd, 1 << 16)
        name = streams[fd]
        if not chunk:
            sel.unregister(fd)
            del streams[fd]
        if name != "events":
            out = outputs[name]
            out.run_id = self.run_id
            yield from out.feed(chunk) if chunk else out.flush()
            return
        *lines, self._partial = (self._partial + chunk).split(b"\n")
        if not chunk:
            lines, self._partial = [*lines, self._partial], b""
        for raw in lines:
            if raw.strip():
                try:
                    yield ev.decode(raw)
                except ev.ProtocolError as e:
                    yield ev.LogEmitted(
                        run_id=self.run_id,
                        level="warning",
                        source="dlcprof",
                        message=f"dropped a malformed event line ({e})",
                    )

    def _drain(
        self,
        sel: selectors.BaseSelector,
        streams: dict[int, str],
        outputs: dict[str, BoundedOutput],
    ) -> Iterator[ev.Event]:
        """The worker is gone: read what its pipes still hold (a child it left
        behind may keep them open for ever: _exited ends it)."""
        deadline = time.monotonic() + 0.5
        while streams and time.monotonic() < deadline:
            ready = sel.select(timeout=0.05)
            if not ready:
                break
            for key, _ in ready:
                yield from self._read_fd(key.fd, sel, streams, outputs)

    def _exited(self) -> ev.WorkerExited:
        deadline = time.monotonic() + 5
        while not _finished(self.proc) and time.monotonic() < deadline:
            time.sleep(0.02)
        if not _finished(self.proc):
            _kill_group(self.proc)
        _kill_stragglers(self.proc)
        rc = self.proc.wait()
        for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr, self._control):
            try:
                if stream is not None:
                    stream.close()
            except OSError:
                pass
        for path in self._cache_dirs.values():
            shutil.rmtree(path, ignore_errors=True)
        sig = signal.Signals(-rc).name if rc < 0 else None
        if self._cancel_reason is not None:
            return ev.WorkerExited(
                returncode=rc, signal=sig, message=self._cancel_reason, cancelled=True
            )
        if sig == "SIGKILL":
            if oom_kills() > self._oom_kills:
                message = (
                    "worker killed by the kernel's out-of-memory killer (SIGKILL): the "
                    "workload needs more memory than this machine allows; try --size small"
                )
            else:
                message = (
                    "worker killed with SIGKILL from outside dlcprof (the kernel's "
                    "out-of-memory killer, a job scheduler or a user)"
                )
        elif sig is not None:
            message = f"worker died with {sig}: the compile crashed the process"
        elif rc != 0:
            message = f"worker exited with status {rc}"
        else:
            message = "worker finished"
        return ev.WorkerExited(returncode=rc, signal=sig, message=message)


def _finished(proc: subprocess.Popen) -> bool:
    """Has the worker exited? Leaves it unreaped (a zombie keeps its pid and
    process group id reserved, so killing the group stays safe)."""
    try:
        return os.waitid(os.P_PID, proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    except ChildProcessError:
        return True  # reaped already
    except (AttributeError, OSError):
        return proc.poll() is not None


def _kill_stragglers(proc: subprocess.Popen) -> None:
    """SIGKILL what is left of the worker's group after it exited: children or
    grandchildren the workload started (safe while the worker is unreaped)."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        pass


def oom_kills() -> int:
    """The kernel's count of out-of-memory kills (Linux /proc/vmstat; 0 elsewhere)."""
    try:
        with open("/proc/vmstat") as f:
            for line in f:
                if line.startswith("oom_kill "):
                    return int(line.split()[1])
    except (OSError, ValueError):
        pass
    return 0


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
