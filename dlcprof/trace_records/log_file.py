"""A ``TORCH_TRACE`` log file read back as records, streaming, one at a time.

torch's ``TorchLogsFormatter(trace=True)`` writes each record as a glog line,
``V1130 16:31:02.123456 4242 torch/_dynamo/utils.py:2350] {metadata}``, the
metadata as JSON, then its payload (if any) on the lines after it, each
indented by a tab. The number after the time is the writing process's pid;
the thread is not written (so a record read back carries the pid where a live
one carries its thread). A record with a payload names the payload's md5 in
its ``has_payload``: that, not the file's last newline, tells a whole record
from a damaged one (torch writes no newline after the last record of a log it
closed cleanly). Lines that fit neither shape, a metadata line that is not
JSON, a payload whose md5 does not match and a last record cut short (a job
killed mid-write) are skipped and counted in ``Damage``, so what is readable
is read and the loss can be said in one line. A ``.gz`` log is read as its
plain twin, streamed.
"""

from __future__ import annotations

import functools
import gzip
import hashlib
import importlib
import re
from collections.abc import Callable, Collection, Iterator
from dataclasses import field
from typing import IO, Any, cast

from dlcprof.data import data
from dlcprof.trace_records.payloads import json_object, record_name

# CPython's own md5 (a module without stubs, so imported by name): half OpenSSL's
# cost on a chromium event's few hundred bytes, which most payloads an import checks are.
try:
    _small_md5: Callable[[bytes], Any] = importlib.import_module("_md5").md5
except ImportError:  # a Python built without it
    _small_md5 = hashlib.md5
_SMALL = 2048  # bytes below which it is the faster (OpenSSL's, above)

# A record's first line up to its metadata's JSON, which runs to the line's end
# (matched in bytes: a log is read undecoded).
_HEADER_RE = re.compile(
    rb"(?:\[rank\d+\]:)?[VIWEC](\d\d\d\d \d\d:\d\d):(\d\d\.\d+) (\d+) [^\]]*\][^{]* (?=\{)"
)
# A record's lines end where a line that does not begin with a tab begins.
_BLOCK_END = re.compile(rb"\n(?=[^\t])")
_CHUNK = 1 << 24  # bytes read at a time (a rank's log is most often one)
# Where each kind of damage is named (Damage.words).
NOT_JSON = "not a trace record"
BAD_MD5 = "whose payload does not match its md5"
CUT = "cut short at the end"


class _Lines:
    """Line numbers of places in a buffer of the log, counted when asked: a
    damaged record's and an export issue's are, most records' never."""

    def __init__(self, buf: bytes, first: int) -> None:
        self.buf, self.first = buf, first
        self._pos, self._line = 0, first  # counted so far (asked in order: once)

    def at(self, pos: int) -> int:
        if pos < self._pos:
            self._pos, self._line = 0, self.first
        self._line += self.buf.count(b"\n", self._pos, pos)
        self._pos = pos
        return self._line


@data
class Record:
    metadata: dict[str, Any]
    name: str  # payloads.record_name's
    payload: str | None
    pid: int
    # When it was written, as the glog prefix says: seconds since the start of
    # the year in the writer's local time (its year and timezone are not written).
    clock: float
    _at: tuple[_Lines, int]  # where its metadata is

    @property
    def line(self) -> int:
        """Its metadata's line, from 1."""
        lines, pos = self._at
        return lines.at(pos)


@data
class Damage:
    """What a log lost: lines skipped by kind, and the first place of each."""

    counts: dict[str, int] = field(default_factory=dict)
    first: dict[str, int] = field(default_factory=dict)  # kind -> line number

    def add(self, kind: str, line: int) -> None:
        self.counts[kind] = self.counts.get(kind, 0) + 1
        self.first.setdefault(kind, line)

    def words(self, name: str) -> list[str]:
        """Each kind of damage as "name: N lines not a trace record (from line 57)";
        a last record cut short is where the log ends, said with it (not here)."""
        out = []
        for kind, n in self.counts.items():
            if kind == CUT:
                continue
            what = "line" if kind == NOT_JSON else "record"
            out.append(f"{name}: {n} {what}{'s' if n > 1 else ''} {kind} (line {self.first[kind]})")
        return out


def is_trace_log(head: str) -> bool:
    """Whether a file's first line is a trace record's (tells a log from any other file)."""
    return _HEADER_RE.match(head.rstrip("\n").encode(errors="replace")) is not None


def open_log(path: str, binary: bool = False) -> IO[Any]:
    """The log, a ``.gz`` one decompressed as it is read: as text, or as bytes."""
    if path.endswith(".gz"):
        if binary:
            return cast(IO[bytes], gzip.open(path, "rb"))
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    if binary:
        return open(path, "rb")
    return open(path, encoding="utf-8", errors="replace")


def read_records(
    path: str, damage: Damage, wanted: Collection[str] | None = None
) -> Iterator[Record]:
    """Every readable record of the log at ``path``, in order; what is not
    readable goes to ``damage``. ``wanted``: the names of the records whose
    payload the reader uses (None: every record's); any other's payload is
    neither checked against its md5 nor decoded (its ``payload`` None), but the
    last record's, which tells a log cut short."""
    with open_log(path, binary=True) as f:
        for lines, buf, start, end, last in _blocks(f):
            nl = buf.find(b"\n", start, end)
            head_end = end if nl < 0 else nl
            if buf.startswith(b"\t", start):  # the file's first lines: payload of no record
                n = lines.at(start)
                for k in range(
                    buf.count(b"\n", start, end) + (not buf.endswith(b"\n", start, end))
                ):
                    damage.add(NOT_JSON, n + k)
                continue
            m = _HEADER_RE.match(buf, start, head_end)
            metadata = json_object(buf[m.end() : head_end]) if m else None
            if m is None or metadata is None:
                # Its payload lines are skipped with it. A last line with no
                # newline that is no record: one cut mid-write.
                if buf[start:head_end].strip():
                    damage.add(CUT if last and nl < 0 else NOT_JSON, lines.at(start))
                continue
            name = record_name(metadata)
            record = Record(
                metadata, name, None, int(m[3]), _minute_s(m[1]) + float(m[2]), (lines, start)
            )
            if not last and wanted is not None and name not in wanted:
                yield record
                continue
            # The payload's lines, each one's tab removed: the payload as torch
            # wrote it (a block ends with its newline, but the file's last may not).
            stop = end - buf.endswith(b"\n", start, end)
            payload = buf[nl + 2 : stop].replace(b"\n\t", b"\n") if 0 <= nl < stop else None
            if _whole(record, payload):
                yield record
            elif not last:
                damage.add(BAD_MD5, record.line)
            else:
                # A whole JSON payload was edited, not cut (a cut one does not parse).
                whole = json_object(record.payload or "") is not None
                damage.add(BAD_MD5 if whole else CUT, record.line)


def _blocks(f: IO[bytes]) -> Iterator[tuple[_Lines, bytes, int, int, bool]]:
    """The log's lines a record at a time, read in chunks: each line that does
    not begin with a tab with the tab-indented lines after it (the file's first
    block may be tab lines only), as (the line numbers of a buffer, the buffer,
    where in it the block begins and ends, whether it is the file's last); a
    block holds the newline that ends it. Splitting in chunks, not lines, and
    handing out places in a chunk, not copies, keeps the per-line work in C."""
    lines = _Lines(b"", 1)
    # The block read so far, from earlier chunks, and where it begins.
    pending: list[bytes] = []
    began = (lines, 0)

    def joined(tail: bytes) -> tuple[_Lines, bytes]:
        text = b"".join([*pending, tail])
        return _Lines(text, began[0].at(began[1])), text

    for chunk in _chunks(f):
        # A chunk's lines are counted from the last one's end (when there is
        # one: a log of one chunk counts only the lines asked for).
        lines = _Lines(chunk, lines.at(len(lines.buf)))
        if pending and pending[-1].endswith(b"\n") and not chunk.startswith(b"\t"):
            at, text = joined(b"")  # it ended where the chunk before did
            yield at, text, 0, len(text), False
            pending = []
        start = 0
        for m in _BLOCK_END.finditer(chunk):
            if pending:
                at, text = joined(chunk[: m.end()])
                yield at, text, 0, len(text), False
                pending = []
            else:
                yield lines, chunk, start, m.end(), False
            start = m.end()
        if not pending:
            began = (lines, start)
        pending.append(chunk[start:])
    if len(pending) == 1 and pending[0]:
        yield began[0], began[0].buf, began[1], len(began[0].buf), True
    elif pending:
        at, text = joined(b"")
        if text:
            yield at, text, 0, len(text), True


def _chunks(f: IO[bytes]) -> Iterator[bytes]:
    """The file a chunk at a time, its line ends read as a text file reads
    them ("\r\n" and "\r" as "\n": a log copied through Windows)."""
    while chunk := f.read(_CHUNK):
        if b"\r" in chunk:
            if chunk.endswith(b"\r"):
                chunk += f.read(1)
            chunk = chunk.replace(b"\r\n", b"\n").replace(b"\r", b"\n")
        yield chunk


def _whole(record: Record, payload: bytes | None) -> bool:
    """Whether the record is whole: its payload (None: no payload line) has the
    md5 its metadata names. A record whose metadata names none has no payload,
    or one from before torch wrote md5s: read as it is."""
    expected = record.metadata.get("has_payload")
    joined = payload or b""
    if payload is not None or expected is not None:
        record.payload = joined.decode(errors="replace")
    if not isinstance(expected, str) or len(expected) != 32:
        return True
    md5 = _small_md5 if len(joined) < _SMALL else hashlib.md5
    return md5(joined).hexdigest() == expected.lower()


@functools.cache
def _minute_s(minute: bytes) -> float:
    """b"MMDD HH:MM" of a glog prefix in seconds since the start of the year (a
    log's records share a few minutes: each read once)."""
    month, day, hour, mins = int(minute[:2]), int(minute[2:4]), int(minute[5:7]), int(minute[8:])
    return (_DAYS[month - 1] + day - 1) * 86400.0 + hour * 3600 + mins * 60


def clock_words(clock: float) -> str:
    """A record's clock as its glog prefix gave it: "12-02 09:30:43" (local time)."""
    day, rest = divmod(int(clock), 86400)
    month = max(m for m in range(12) if _DAYS[m] <= day)
    hour, rest = divmod(rest, 3600)
    return f"{month + 1:02}-{day - _DAYS[month] + 1:02} {hour:02}:{rest // 60:02}:{rest % 60:02}"


# Days before each month, leap days left out: the clock is placed on the epoch by
# an offset read from the log itself, so only a log spanning Feb 29 would be off.
_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)
