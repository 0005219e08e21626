"""A ``TORCH_TRACE`` log file read back as records, streaming, one at a time.

torch's ``TorchLogsFormatter(trace=True)`` writes each record as a glog line,
``V1130 16:31:02.123456 4242 torch/_dynamo/utils.py:2350] {metadata}``, the
metadata as JSON, then its payload (if any) on the lines after it, each
indented by a tab. The number after the time is the writing process's pid;
the thread is not written (so a record read back carries the pid where a live
one carries its thread). Lines that fit neither shape, a metadata line that is
not JSON, and a last record cut short (the file ends without its newline: a
job killed mid-write) are skipped and counted in ``Damage``, so what is
readable is read and the loss can be said in one line.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

_HEADER_RE = re.compile(
    r"^(?:\[rank\d+\]:)?[VIWEC](\d\d)(\d\d) (\d\d):(\d\d):(\d\d\.\d+) (\d+) [^\]]*\][^{]* (\{.*)$"
)
# Where each kind of damage is named (Damage.words).
NOT_JSON = "not a trace record"
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
        """Each kind of damage as "name: N lines not a trace record (from line 57)"."""
        out = []
        for kind, n in self.counts.items():
            what = "record" if kind == CUT else "line"
            out.append(f"{name}: {n} {what}{'s' if n > 1 else ''} {kind} (line {self.first[kind]})")
        return out


def is_trace_log(head: str) -> bool:
    """Whether a file's first line is a trace record's (tells a log from any other file)."""
    return _HEADER_RE.match(head.rstrip("\n")) is not None


def read_records(path: str, damage: Damage) -> Iterator[Record]:
    """Every readable record of the log at ``path``, in order; what is not
    readable goes to ``damage``."""
    current: Record | None = None
    payload: list[str] = []
    broken = False  # the lines after an unreadable header are its payload: skipped with it
    last = ""
    n = 0
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, last in enumerate(f, 1):
            if last.startswith("\t"):
                if current is not None:
                    payload.append(last[1:].rstrip("\n"))
                elif not broken:
                    damage.add(NOT_JSON, n)
                continue
            if current is not None:
                yield _finished(current, payload)
                current, payload = None, []
            m = _HEADER_RE.match(last.rstrip("\n"))
            metadata = _json_object(m.group(7)) if m else None
            if metadata is None:
                broken = True
                if last.strip():
                    damage.add(NOT_JSON, n)
                continue
            broken = False
            current = Record(metadata, None, int(m.group(6)), n, _clock(m)) if m else None
    if current is not None:
        if last.endswith("\n"):
            yield _finished(current, payload)
        else:
            damage.add(CUT, current.line)


def _finished(record: Record, payload: list[str]) -> Record:
    if payload or "has_payload" in record.metadata:
        record.payload = "\n".join(payload)
    return record


def _clock(m: re.Match[str]) -> float:
    month, day, hour, minute = (int(m.group(k)) for k in range(1, 5))
    return (_DAYS[month - 1] + day - 1) * 86400.0 + hour * 3600 + minute * 60 + float(m.group(5))


# Days before each month, leap days left out: the clock is placed on the epoch by
# an offset read from the log itself, so only a log spanning Feb 29 would be off.
_DAYS = (0, 31, 59, 90, 120, 151, 181, 212, 243, 273, 304, 334)


def _json_object(text: str) -> dict[str, Any] | None:
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None
