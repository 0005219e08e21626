"""dlcprof's side of an attached program, once launched (``launch.py``: its
process group, the terminal, the stop signals passed on): take the event
streams of its processes, watch them (monitors/program.py), and say how it
ended; dlcprof waits for the program and exits with its status. Processes of
the program's tree that outlive a stop (torchrun's ranks run in sessions of
their own: see tree.py) are ended after it. If dlcprof dies, the program runs
on: its stdout and stderr are its own (headless), and each probe goes quiet.

Every stream is one process (``ProcessAttached`` first); each event read from
it is stamped with that process's run id (a process cannot write into
another's run). Lines are decoded as data (``events.decode``): nothing
received is ever executed.
"""

from __future__ import annotations

import contextlib
import os
import selectors
import shutil
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Callable, Sequence
from typing import cast

from dlcprof import events as ev
from dlcprof.attach.launch import Launch
from dlcprof.attach.tree import Tree
from dlcprof.bounded_output import BoundedOutput
from dlcprof.monitors.program import ProgramMonitors

Emit = Callable[[ev.Event], None]
# A process's run status when it ended without its exit hook (os._exit, a signal).
ENDED = "ended"
# After the program exits: how long its processes' streams may stay silent before
# dlcprof stops reading them, and how long it reads them at most.
DRAIN_S, DRAIN_CAP_S = 3.0, 30.0
STOP_GRACE_S = 15.0
# After a stop: how long the program's leftover processes get between SIGTERM and SIGKILL.
LEFTOVER_GRACE_S = 3.0
TREE_S = 0.5  # how often the program's process tree is read while it runs
_READ = 1 << 16


def start_program(
    argv: Sequence[str],
    emit: Emit,
    output: str = "inherit",
    eager: bool = False,
    raw_trace: bool = True,
    hotspots: bool = True,
    steps: bool = False,
) -> AttachedProgram:
    """Launch ``argv`` (launch.py: CommandError when it cannot run) and follow it."""
    launched = Launch(argv, output=output, eager=eager, raw_trace=raw_trace, steps=steps)
    return AttachedProgram(launched, emit, hotspots=hotspots)


class AttachedProgram:
    """The user's command, launched (``launch.py``), and the events of its
    processes. ``hotspots``: py-spy on each compiling process
    (monitors/program.py, with the device sampler)."""

    def __init__(self, launched: Launch, emit: Emit, hotspots: bool = True) -> None:
        self.launched = launched
        self.argv = launched.argv
        self.proc = launched.proc
        self.eager = launched.eager
        self.output_dir = launched.output_dir
        self.emit = emit
        self.monitors = ProgramMonitors(emit, hotspots=hotspots)
        self.detached = False
        self._outputs = [(f, BoundedOutput(name)) for name, f in launched.captured]
        self._tree = Tree(self.proc.pid)
        self.emit(
            ev.ProgramStarted(
                argv=self.argv,
                cwd=launched.cwd,
                pid=self.proc.pid,
                eager=self.eager,
                t=launched.started_t,
            )
        )
        self._done = threading.Event()
        self._thread = threading.Thread(target=self._pump, name="dlcprof-attach", daemon=True)
        self._thread.start()

    @property
    def pid(self) -> int:
        return self.proc.pid

    @property
    def stopped_by(self) -> str | None:
        return self.launched.stopped_by

    def forward(self, signum: int, said: str | None = None) -> None:
        """Pass a stop signal on to the program's group, as a terminal would."""
        self.launched.forward(signum, said)

    def stop(self, grace_s: float = STOP_GRACE_S) -> None:
        """Stop the program (the TUI's stop): SIGINT, then SIGTERM, then SIGKILL,
        each after ``grace_s`` (torch's own exit takes seconds on a busy machine)."""
        for signum, wait in (
            (signal.SIGINT, grace_s),
            (signal.SIGTERM, grace_s),
            (signal.SIGKILL, 0.0),
        ):
            if self.proc.poll() is not None:
                break
            self.forward(signum, "stopped by user")
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.proc.wait(wait)

    def detach(self) -> None:
        """Let go: the program runs on, dlcprof stops listening (the probes go quiet)."""
        self.detached = True
        self._done.set()

    # --- events -------------------------------------------------------------------

    def wait(self, timeout: float | None = None) -> bool:
        """True once the program ended (or was detached) and every event was emitted."""
        self._thread.join(timeout)
        return not self._thread.is_alive()

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _pump(self) -> None:
        sel = selectors.DefaultSelector()
        sel.register(self.launched.listener, selectors.EVENT_READ, "listen")
        pidfd = _pidfd(self.proc.pid)  # wakes the select when the program ends
        if pidfd is not None:
            sel.register(pidfd, selectors.EVENT_READ, "ended")
        streams = _Streams(self._seen)
        ended_at: float | None = None
        tree_t = 0.0
        swept = False
        try:
            while not self._done.is_set():
                if ended_at is None and time.monotonic() - tree_t > TREE_S:
                    self._tree.update()
                    tree_t = time.monotonic()
                if ended_at is None and self.proc.poll() is not None:
                    ended_at = time.monotonic()
                if ended_at is not None and self.stopped_by and not swept:
                    swept = True
                    self._end_leftovers()
                    ended_at = time.monotonic()  # their streams' ends may follow
                # Ended: drained once every stream closed, or when none has said
                # anything for DRAIN_S (a reader behind on a busy machine catches up).
                if ended_at is not None and (
                    not streams.open
                    or time.monotonic() - max(ended_at, streams.read_t) > DRAIN_S
                    or time.monotonic() - ended_at > DRAIN_CAP_S
                ):
                    break
                for key, _ in sel.select(timeout=0.1):
                    if key.data == "listen":
                        self._accept(sel)
                    elif key.data == "ended":
                        sel.unregister(key.fileobj)
                    else:
                        streams.read(sel, cast(socket.socket, key.fileobj))  # a stream's
                self._read_output()
        finally:
            self._read_output(last=True)
            streams.close(sel)
            sel.close()
            if pidfd is not None:
                os.close(pidfd)
            self.launched.listener.close()
            self.launched.give_back_terminal()
            self.monitors.close()  # py-spy stops with the program or the detach
            self.emit(self._exited())
            if not self.detached and self.output_dir is not None:
                shutil.rmtree(self.output_dir, ignore_errors=True)

    def _seen(self, event: ev.Event) -> None:
        """An event of a process's stream: to the caller, then to its monitors."""
        self.emit(event)
        self.monitors.see(event)

    def _end_leftovers(self) -> None:
        """After a stop: end the program's processes still running (say which)."""
        left = self._tree.end(LEFTOVER_GRACE_S)
        if left:
            self.emit(
                ev.LogEmitted(
                    run_id=None,
                    level="warning",
                    source="dlcprof",
                    message=f"ended {len(left)} process(es) of the program still running after "
                    f"it stopped (pids {', '.join(map(str, sorted(left)))}): a launcher such "
                    "as torchrun starts its ranks in sessions of their own",
                )
            )

    def _accept(self, sel: selectors.BaseSelector) -> None:
        while True:
            try:
                conn, _ = self.launched.listener.accept()
            except OSError:  # none waiting (EAGAIN), or the listener is closing
                return
            conn.setblocking(False)
            sel.register(conn, selectors.EVENT_READ, _Stream())

    def _read_output(self, last: bool = False) -> None:
        """Captured output: what the program wrote to its files since the last look."""
        for f, out in self._outputs:
            while chunk := f.read(_READ):
                for event in out.feed(chunk):
                    self.emit(event)
            if last:
                for event in out.close():
                    self.emit(event)
                f.close()

    def _exited(self) -> ev.ProgramExited:
        wall = time.monotonic() - self.launched.started
        rc = self.proc.poll()
        if rc is None:
            where = f", its output goes to {self.output_dir}" if self.output_dir else ""
            return ev.ProgramExited(
                returncode=None,
                signal=None,
                wall_s=wall,
                detached=True,
                message=f"dlcprof detached; the program (pid {self.pid}) runs on{where}",
                stopped_by=self.stopped_by,
                stopped_t=self.launched.stopped_t,
                eager=self.eager,
            )
        sig = signal.Signals(-rc).name if rc < 0 else None
        message = f"the program ended by {sig}" if sig else f"the program exited with status {rc}"
        if self.eager:
            message = f"eager baseline: {message}"
        return ev.ProgramExited(
            returncode=rc,
            signal=sig,
            wall_s=wall,
            message=message,
            stopped_by=self.stopped_by,
            stopped_t=self.launched.stopped_t,
            eager=self.eager,
        )


class _Stream:
    """One process's stream: its partial line and, once it said who it is, its run id."""

    def __init__(self) -> None:
        self.partial = b""
        self.run_id: str | None = None
        self.attached_t = 0.0
        self.finished = False


class _Streams:
    """Decodes the processes' streams and stamps each event with its process."""

    def __init__(self, emit: Emit) -> None:
        self.emit = emit
        self.open = 0
        self._ids: set[str] = set()
        self._socks: list[socket.socket] = []
        self.read_t = 0.0  # when a stream last said something (monotonic)

    def read(self, sel: selectors.BaseSelector, sock: socket.socket) -> None:
        stream: _Stream = sel.get_key(sock).data
        if sock not in self._socks:
            self._socks.append(sock)
            self.open += 1
        try:
            chunk = sock.recv(_READ)
        except (BlockingIOError, InterruptedError):
            return
        except OSError:
            chunk = b""
        if chunk:
            self.read_t = time.monotonic()
        *lines, stream.partial = (stream.partial + chunk).split(b"\n")
        for line in lines:
            self._line(stream, line)
        if not chunk:
            self._end(sel, sock)

    def _line(self, stream: _Stream, line: bytes) -> None:
        if not line.strip():
            return
        try:
            event = ev.decode(line)
        except ev.ProtocolError as e:
            self.emit(
                ev.LogEmitted(
                    run_id=stream.run_id,
                    level="warning",
                    source="dlcprof",
                    message=f"dropped a malformed event line ({e})",
                )
            )
            return
        if stream.run_id is None:
            if not isinstance(event, ev.ProcessAttached):
                return  # a stream must say who it is first
            run_id, n = event.run_id, 1
            while run_id in self._ids:  # pids are reused; each stream is a run of its own
                n += 1
                run_id = f"{event.run_id}.{n}"
            self._ids.add(run_id)
            stream.run_id, stream.attached_t = run_id, event.t
        if hasattr(event, "run_id"):
            event.run_id = stream.run_id
        stream.finished = stream.finished or isinstance(event, ev.RunFinished)
        self.emit(event)

    def _end(self, sel: selectors.BaseSelector, sock: socket.socket, eof: bool = True) -> None:
        stream: _Stream = sel.get_key(sock).data
        sel.unregister(sock)
        sock.close()
        self._socks.remove(sock)
        self.open -= 1
        if eof and stream.run_id is not None and not stream.finished:
            # The process ended without its exit hook (os._exit, a signal).
            self.emit(
                ev.RunFinished(
                    run_id=stream.run_id, status=ENDED, wall_s=ev.now() - stream.attached_t
                )
            )

    def close(self, sel: selectors.BaseSelector) -> None:
        """Stop listening (the program ended, or dlcprof detached)."""
        for sock in list(self._socks):
            self._end(sel, sock, eof=False)


def _pidfd(pid: int) -> int | None:
    """A descriptor readable once ``pid`` ended (Linux 5.3+), else None: polled."""
    try:
        return os.pidfd_open(pid)
    except (AttributeError, OSError):
        return None
