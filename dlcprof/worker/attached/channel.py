"""The probe's end of the channel: events to dlcprof over an AF_UNIX stream.

The program must never wait for us and never break because of us. Sends are
non-blocking; what the socket cannot take now waits in a buffer of at most
``BUFFER_BYTES`` (past that, events are dropped and counted, and the count
is sent once there is room). The first send connects; when dlcprof is gone
(no socket, a refused connection, a broken pipe) the channel goes quiet for
good and the program runs on as it would without us. Nothing is ever read
from the socket.

Silence until a compile: events are held, unsent, until one that ``arms``
the channel (a process that imports torch but never compiles sends nothing).
"""

from __future__ import annotations

import select
import socket
import threading
import time
from collections.abc import Callable

from dlcprof import events as ev
from dlcprof.worker.paused_gc import paused_gc

BUFFER_BYTES = 32 << 20
_CONNECT_TIMEOUT_S = 1.0
# A program that restored SIGPIPE's default must not die when dlcprof is gone.
_NO_SIGPIPE = getattr(socket, "MSG_NOSIGNAL", 0)


class Channel:
    """A ``Sink`` (dlcprof.events) over the socket at ``path``; thread-safe."""

    def __init__(
        self,
        path: str,
        hello: Callable[[], list[ev.Event]],
        arms: Callable[[ev.Event], bool] = lambda e: True,
    ) -> None:
        self.path = path
        self.hello = hello  # the first events of the stream, made when it opens
        self.arms = arms
        self.reset()

    def reset(self) -> None:
        """A fresh, unconnected channel (also in a forked child: the parent's
        connection and buffer are the parent's)."""
        self._lock = threading.Lock()
        self._sock: socket.socket | None = None
        self._held: list[bytes] = []  # before the channel is armed
        self._buffer = bytearray()
        self._dropped = 0
        self.quiet = False
        self.armed = False

    def emit(self, event: ev.Event) -> None:
        with paused_gc():
            self._emit(event)

    def _emit(self, event: ev.Event) -> None:
        data = ev.encode(event)
        with self._lock:
            if self.quiet:
                return
            if not self.armed:
                if not self.arms(event):
                    if sum(map(len, self._held)) + len(data) <= BUFFER_BYTES:
                        self._held.append(data)
                    return
                if not self._open():
                    return
            self._queue(data)
            self._flush()

    def close(self, wait_s: float = 2.0, cap_s: float = 30.0) -> None:
        """Deliver what is buffered, then close (at exit): while dlcprof keeps
        reading, up to ``cap_s`` (a reader slowed by a busy machine still gets
        the last events: a crash is among them); after ``wait_s`` in which it
        read nothing (gone, or stuck), at once."""
        start = idle = time.monotonic()
        with self._lock:
            sock = self._sock
            while sock is not None and self._buffer and not self.quiet:
                left = min(idle + wait_s, start + cap_s) - time.monotonic()
                if left <= 0:
                    break
                try:
                    select.select([], [sock], [], left)
                except (OSError, ValueError):
                    break
                before = len(self._buffer)
                self._flush()
                if len(self._buffer) < before:
                    idle = time.monotonic()
            self._go_quiet()

    # --- inside the lock -------------------------------------------------------

    def _open(self) -> bool:
        self.armed = True
        sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:
            sock.settimeout(_CONNECT_TIMEOUT_S)
            sock.connect(self.path)
            sock.setblocking(False)
        except OSError:
            sock.close()
            self._go_quiet()
            return False
        self._sock = sock
        for event in self.hello():
            self._queue(ev.encode(event))
        for data in self._held:
            self._queue(data)
        self._held = []
        return True

    def _queue(self, data: bytes) -> None:
        if self._dropped and len(self._buffer) < BUFFER_BYTES // 2:
            note = ev.LogEmitted(
                run_id=None,
                level="warning",
                source="dlcprof",
                message=f"the probe dropped {self._dropped:,} events: dlcprof read too slowly",
            )
            self._dropped = 0
            self._buffer += ev.encode(note)
        if len(self._buffer) + len(data) > BUFFER_BYTES:
            self._dropped += 1
            return
        self._buffer += data

    def _flush(self) -> None:
        while self._buffer and self._sock is not None:
            try:
                sent = self._sock.send(self._buffer, _NO_SIGPIPE)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:  # dlcprof is gone: quiet from now on
                self._go_quiet()
                return
            del self._buffer[:sent]

    def _go_quiet(self) -> None:
        self.quiet = True
        self._buffer.clear()
        self._held = []
        if self._sock is not None:
            try:
                self._sock.close()
            except OSError:
                pass
            self._sock = None
