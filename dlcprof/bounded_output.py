"""A process's stdout or stderr as log lines, bounded: what a worker or an
attached program prints reaches the Log pane and the report without flooding
either (``runner.WorkerProcess`` and ``attach.program.AttachedProgram`` read
their streams through it)."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

from dlcprof import events as ev
from dlcprof import text

# A workload that floods its output keeps its first and last lines, each cut
# at MAX_LINE_BYTES; what lies between is counted, not kept.
MAX_LINE_BYTES = 4000
HEAD_LINES = 5000
TAIL_LINES = 500


class BoundedOutput:
    """One output stream (``stream``: "stdout" or "stderr") as log lines: the first
    HEAD_LINES and the last TAIL_LINES are kept, each cut at MAX_LINE_BYTES
    (an endless line is counted, not buffered)."""

    def __init__(self, stream: str) -> None:
        self.stream = stream
        self.run_id: str | None = None
        self.level = "warning" if stream == "stderr" else "info"
        self.lines = 0
        self.dropped_bytes = 0
        self.tail: deque[str] = deque(maxlen=TAIL_LINES)
        self._partial = b""
        self._long: tuple[bytes, int] | None = None  # (its start, its length so far)

    def feed(self, chunk: bytes) -> Iterator[ev.LogEmitted]:
        *lines, rest = (self._partial + chunk).split(b"\n")
        for raw in lines:
            if self._long is not None:
                head, length = self._long
                self._long = None
                yield from self._line(head, length + len(raw))
            else:
                yield from self._line(raw, len(raw))
        if self._long is not None:
            self._long = (self._long[0], self._long[1] + len(rest))
            rest = b""
        elif len(rest) > MAX_LINE_BYTES:
            self._long, rest = (rest[:MAX_LINE_BYTES], len(rest)), b""
        self._partial = rest

    def flush(self) -> Iterator[ev.LogEmitted]:
        """End of the stream: a last line without a newline."""
        if self._long is not None or self._partial:
            yield from self.feed(b"\n")

    def _line(self, raw: bytes, length: int) -> Iterator[ev.LogEmitted]:
        line = raw[:MAX_LINE_BYTES].decode(errors="replace").rstrip()
        if not line:
            return
        if length > MAX_LINE_BYTES:
            line = f"{line}… ({length:,} bytes)"
        self.lines += 1
        if self.lines <= HEAD_LINES:
            yield self._event(line)
            return
        if len(self.tail) == self.tail.maxlen:
            self.dropped_bytes += len(self.tail[0])
        self.tail.append(line)

    def close(self) -> Iterator[ev.LogEmitted]:
        yield from self.flush()
        dropped = self.lines - HEAD_LINES - len(self.tail)
        if dropped > 0:
            yield ev.LogEmitted(
                run_id=self.run_id,
                level="warning",
                source="dlcprof",
                message=f"the workload printed {self.lines:,} lines to {self.stream}: "
                f"{dropped:,} in the middle ({text.nbytes(self.dropped_bytes)}) not kept",
            )
        for line in self.tail:
            yield self._event(line)
        self.tail.clear()

    def _event(self, line: str) -> ev.LogEmitted:
        return ev.LogEmitted(run_id=self.run_id, level=self.level, source=self.stream, message=line)
