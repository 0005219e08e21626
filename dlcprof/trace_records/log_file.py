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

import gzip
import hashlib
import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import IO, Any

_HEADER_RE = re.compile(
    r"^(?:\[rank\d+\]:)?[VIWEC](\d\d)(\d\d) (\d\d):(\d\d):(\d\d\.\d+) (\d+) [^\]]*\][^{]* (\{.*)$"
)
# A record's lines end where a line that does not begin with a tab begins.
_BLOCK_END = re.compile(r"\n(?=[^\t])")
_CHUNK = 1 << 22  # characters read at a time
# Where each kind of damage is named (Damage.words).
NOT_JSON = "not a trace record"
BAD_MD5 = "whose payload does not match its md5"
CUT = "cut short at the end"


@dataclass
class Record:
    metadata: dict[str, Any]
    payload: str | None
    pid: int
    line: int  # of its metadata, from 1
    # When it was written, as the glog prefix says: seconds since the start of
    # the year in the writer's local time (its year and timezone are not written).
    clock: float


@dataclass
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
    return _HEADER_RE.match(head.rstrip("\n")) is not None


def open_log(path: str) -> IO[str]:
    """The log as text, a ``.gz`` one decompressed as it is read."""
    if path.endswith(".gz"):
        return gzip.open(path, "rt", encoding="utf-8", errors="replace")
    return open(path, encoding="utf-8", errors="replace")


def read_records(path: str, damage: Damage) -> Iterator[Record]:
    """Every readable record of the log at ``path``, in order; what is not
    readable goes to ``damage``."""
    with open_log(path) as f:
        for n, text, last in _blocks(f):
            nl = text.find("\n")
            head, tail = (text, "") if nl < 0 else (text[:nl], text[nl + 1 :])
            if last and tail.endswith("\n"):
                tail = tail[:-1]
            if head.startswith("\t"):  # the file's first lines: payload of no record
                for k in range(text.count("\n") + 1 - text.endswith("\n")):
                    damage.add(NOT_JSON, n + k)
                continue
            m = _HEADER_RE.match(head)
            metadata = _json_object(m.group(7)) if m else None
            if m is None or metadata is None:
                # Its payload lines are skipped with it. A last line with no
                # newline that is no record: one cut mid-write.
                if head.strip():
                    damage.add(CUT if last and nl < 0 else NOT_JSON, n)
                continue
            record = Record(metadata, None, int(m.group(6)), n, _clock(m))
            # Each payload line's tab, removed: the payload as torch wrote it.
            if _whole(record, tail[1:].replace("\n\t", "\n") if tail else None):
                yield record
            elif not last:
                damage.add(BAD_MD5, n)
            else:
                # A whole JSON payload was edited, not cut (a cut one does not parse).
                whole = _json_object(record.payload or "") is not None
                damage.add(BAD_MD5 if whole else CUT, n)


def _blocks(f: IO[str]) -> Iterator[tuple[int, str, bool]]:
    """The log's lines a record at a time, read in chunks: each line that does
    not begin with a tab with the tab-indented lines after it (the file's first
    block may be tab lines only), as (its first line's number, its text without
    the newline that ends it, whether it is the file's last). Splitting in
    chunks, not lines, keeps the per-line work in C."""
    n = 1
    pending: list[str] = []  # the block read so far
    while chunk := f.read(_CHUNK):
        if pending and pending[-1].endswith("\n") and not chunk.startswith("\t"):
            text = "".join(pending)[:-1]  # it ended where the chunk before did
            yield n, text, False
            n += text.count("\n") + 1
            pending = []
        start = 0
        for m in _BLOCK_END.finditer(chunk):
            pending.append(chunk[start : m.start()])
            text = "".join(pending)
            yield n, text, False
            n += text.count("\n") + 1
            pending, start = [], m.end()
        pending.append(chunk[start:])
    if pending:
        yield n, "".join(pending), True


def _whole(record: Record, payload: str | None) -> bool:
    """Whether the record is whole: its payload (None: no payload line) has the
    md5 its metadata names. A record whose metadata names none has no payload,
    or one from before torch wrote md5s: read as it is."""
    expected = record.metadata.get("has_payload")
    joined = payload or ""
    if payload is not None or expected is not None:
        record.payload = joined
    if not isinstance(expected, str) or len(expected) != 32:
        return True
    return hashlib.md5(joined.encode(errors="replace")).hexdigest() == expected.lower()


def _clock(m: re.Match[str]) -> float:
    month, day, hour, minute, second = m.group(1, 2, 3, 4, 5)
    days = _DAYS[int(month) - 1] + int(day) - 1
    return days * 86400.0 + int(hour) * 3600 + int(minute) * 60 + float(second)


def clock_words(clock: float) -> str:
    """A record's clock as its glog prefix gave it: "12-02 09:30:43" (local time)."""
    day, rest = divmod(int(clock), 86400)
    month = max(m for m in range(12) if _DAYS[m] <= day)
    hour, rest = divmod(rest, 3600)
    return f"{month + 1:02}-{day - _DAYS[month] + 1:02} {hour:02}:{rest // 60:02}:{rest % 60:02}"


# Days before each month, leap days left out: the clock is placed on the epoch by
# an offset read from the log itself, so only a log spanning Feb 29 would be off.
_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
