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
    current: Record | None = None
    payload: list[str] = []
    broken = False  # the lines after an unreadable header are its payload: skipped with it
    last = ""
    n = 0
    with open_log(path) as f:
        for n, last in enumerate(f, 1):
            if last.startswith("\t"):
                if current is not None:
                    payload.append(last[1:].rstrip("\n"))
                elif not broken:
                    damage.add(NOT_JSON, n)
                continue
            if current is not None:
                if _whole(current, payload):
                    yield current
                else:
                    damage.add(BAD_MD5, current.line)
                current, payload = None, []
            m = _HEADER_RE.match(last.rstrip("\n"))
            metadata = _json_object(m.group(7)) if m else None
            if metadata is None:
                broken = True
                if last.strip():
                    # A last line with no newline that is no record: one cut mid-write.
                    damage.add(CUT if not last.endswith("\n") else NOT_JSON, n)
                continue
            broken = False
            current = Record(metadata, None, int(m.group(6)), n, _clock(m)) if m else None
    if current is not None:
        if _whole(current, payload):
            yield current
        else:
            # A whole JSON payload was edited, not cut (a cut one does not parse).
            whole = _json_object(current.payload or "") is not None
            damage.add(BAD_MD5 if whole else CUT, current.line)


def _whole(record: Record, payload: list[str]) -> bool:
    """Whether the record is whole: its payload (joined as torch wrote it, with
    no newline after the last line) has the md5 its metadata names. A record
    whose metadata names none has no payload, or one from before torch wrote
    md5s: read as it is."""
    expected = record.metadata.get("has_payload")
    joined = "\n".join(payload)
    if payload or expected is not None:
        record.payload = joined
    if not isinstance(expected, str) or len(expected) != 32:
        return True
    return hashlib.md5(joined.encode(errors="replace")).hexdigest() == expected.lower()


def _clock(m: re.Match[str]) -> float:
    month, day, hour, minute = (int(m.group(k)) for k in range(1, 5))
    return (_DAYS[month - 1] + day - 1) * 86400.0 + hour * 3600 + minute * 60 + float(m.group(5))


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
