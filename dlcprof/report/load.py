"""Reading a report back: the JSON report (or a folder holding one, or a bare
``.jsonl`` event stream), migrated from any older schema, and the session it
recorded. ``load_session`` ignores the summary and replays ``events`` through
``Session.apply``, so a loaded report rebuilds exactly the state seen live.
JSON only: nothing in a report is ever executed.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from dlcprof import events as ev
from dlcprof.report import model as rm
from dlcprof.report import shared_parts
from dlcprof.report.atomic import os_reason
from dlcprof.report.errors import ReportError
from dlcprof.report.schema import REPORT_SCHEMA, REPORT_VERSION, SCHEMA_PREFIX
from dlcprof.session import Session

# Upgrades one schema version to the next: MIGRATIONS[n] turns a /n report
# dict into a /n+1 one. /2 writes a cache lookup's key components against the
# lookup before it (report/shared_parts.py): a /1 report, every lookup whole,
# reads as it is.
MIGRATIONS: dict[int, Callable[[dict[str, Any]], dict[str, Any]]] = {1: lambda report: report}


def _read_text(path: Path) -> str:
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise ReportError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise ReportError(f"{path} is a directory with no session.json") from None
    except OSError as e:
        raise ReportError(f"cannot read {path}: {os_reason(e)}") from e
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise ReportError(f"{path} is corrupted: not UTF-8 text (byte {e.start})") from None


def _json(text: str) -> Any:
    """json.loads, with every way a hostile text can make it fail as ValueError
    (absurd nesting, a number of thousands of digits)."""
    try:
        return json.loads(text)
    except RecursionError:
        raise ValueError("nested too deeply") from None


def _looks_like_event_stream(text: str) -> bool:
    first = text.lstrip().split("\n", 1)[0]
    try:
        d = _json(first)
    except ValueError:
        return False
    return isinstance(d, dict) and "type" in d and "schema" not in d


def _events_from_dicts(path: Path, items: list[Any], where: str) -> list[ev.Event]:
    out = []
    for i, d in enumerate(items, 1):
        if not isinstance(d, dict):
            raise ReportError(f"{path} is corrupted: {where} {i} is not a JSON object")
        if d.get("type") not in ev.Event.registry:
            # A newer dlcprof may add event types within /1: skip what this
            # version cannot fold rather than refusing the whole report.
            if isinstance(d.get("type"), str):
                continue
            raise ReportError(f"{path} is corrupted: {where} {i} has no event type")
        try:
            out.append(ev.from_dict(d))
        except ev.ProtocolError as e:
            raise ReportError(f"{path} is corrupted: {where} {i}: {e}") from None
    return out


def _load_event_stream(path: Path, text: str) -> list[ev.Event]:
    items = []
    for lineno, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        try:
            items.append(_json(line))
        except ValueError as e:
            raise ReportError(f"{path} is corrupted at line {lineno}: {_why(e)}") from None
    events = _events_from_dicts(path, items, "line")
    if not events:
        raise ReportError(f"{path} holds no dlcprof events")
    return events


def _schema_version(path: Path, schema: Any) -> int:
    if not isinstance(schema, str) or not schema.startswith(SCHEMA_PREFIX):
        raise ReportError(f"{path} is not a dlcprof report (schema {schema!r})")
    try:
        return int(schema[len(SCHEMA_PREFIX) :])
    except ValueError:
        raise ReportError(f"{path} is not a dlcprof report (schema {schema!r})") from None


def migrate(path: Path, report: dict[str, Any]) -> dict[str, Any]:
    """Bring a report of any readable schema up to REPORT_SCHEMA."""
    version = _schema_version(path, report.get("schema"))
    if version > REPORT_VERSION:
        raise ReportError(
            f"{path} was written by a newer dlcprof (schema {report['schema']}); "
            f"this one reads up to /{REPORT_VERSION}: upgrade dlcprof"
        )
    while version < REPORT_VERSION:
        step = MIGRATIONS.get(version)
        if step is None:
            raise ReportError(
                f"{path} uses schema {SCHEMA_PREFIX}{version}, which this dlcprof cannot read"
            )
        report = step(dict(report))
        version += 1
        report["schema"] = f"{SCHEMA_PREFIX}{version}"
    return report


def load_report(path: str | os.PathLike[str]) -> dict[str, Any]:
    """The report dict at ``path`` (a report file or a saved folder), migrated to
    the current schema. A bare ``.jsonl`` event stream comes back wrapped as a
    minimal report with only ``events``."""
    p = Path(path)
    if p.is_dir():
        p = p / "session.json"
    text = _read_text(p)
    if not text.strip():
        raise ReportError(f"{p} is empty: not a dlcprof report")
    if p.suffix == ".jsonl" or _looks_like_event_stream(text):
        events = _load_event_stream(p, text)
        return {"schema": REPORT_SCHEMA, "events": [ev.to_dict(e) for e in events]}
    try:
        data = _json(text)
    except ValueError as e:
        raise ReportError(f"{p} is corrupted: {_why(e)}") from None
    if not isinstance(data, dict):
        kinds: dict[type, str] = {list: "an array", str: "a string"}
        kind = kinds.get(type(data), type(data).__name__)
        raise ReportError(f"{p} is not a dlcprof report (JSON {kind}, not an object)")
    if "schema" not in data:
        raise ReportError(f"{p} is not a dlcprof report (no 'schema' key)")
    data = migrate(p, data)
    if not isinstance(data.get("events"), list):
        raise ReportError(f"{p} is corrupted: no 'events' list")
    try:
        shared_parts.expand(data["events"])
    except ValueError as e:
        raise ReportError(f"{p} is corrupted: {e}") from None
    return data


def _why(e: ValueError) -> str:
    if isinstance(e, json.JSONDecodeError):
        return f"{e.msg} at line {e.lineno} column {e.colno}"
    return str(e).split(";")[0]


def load_session(path: str | os.PathLike[str]) -> Session:
    """Rebuild the Session saved at ``path`` by replaying its events.

    Raises ReportError (one line) for a missing, corrupted, foreign or newer
    file. Every event is checked against its declared fields first, and the
    views' figures are computed once, so a file that passes renders.
    """
    p = Path(path)
    report = load_report(p)
    events = _events_from_dicts(p, report["events"], "event")
    session = Session()
    try:
        for e in events:
            session.apply(e)
        rm.build(session)
    except Exception as e:  # noqa: BLE001 - well-typed values that make no sense together
        raise ReportError(
            f"{p} is corrupted: its events do not fit together ({type(e).__name__}: {e})"
        ) from None
    session.provenance = {
        k: report[k] for k in ("environment", "created", "extra", "dlcprof_version") if k in report
    }
    return session
