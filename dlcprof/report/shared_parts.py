"""A cache lookup's key components in ``session.json``: written as what differs
from the lookup before it, read back whole.

An FX-graph lookup's key holds ~640 components, ~600 of them Inductor's
settings, the same in every lookup of a process; written whole, they were
three quarters of a report's bytes (~28 KB a lookup, ~220 KB a test under the
pytest plugin). So a lookup of a layer looked up before carries ``parts_from``
(the index in ``events`` of that earlier lookup), ``parts`` (its components
that are new or changed) and ``parts_dropped`` (the names it lacks), where that
is shorter than its components whole. Reading restores every lookup's whole
``parts`` before an event is replayed (docs/report-schema.md).
"""

from __future__ import annotations

from typing import Any

from dlcprof import events as ev

LOOKUP = ev.CacheLookedUp.__name__
FROM, DROPPED = "parts_from", "parts_dropped"


def share(events: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """``events`` (``ev.to_dict``'s) with each lookup's parts written against
    the lookup of its layer before it; the dicts given are not changed."""
    last: dict[str, tuple[int, dict[str, str]]] = {}
    out = []
    for i, d in enumerate(events):
        parts = d.get("parts") if d.get("type") == LOOKUP else None
        if parts:
            before = last.get(d["layer"])
            last[d["layer"]] = (i, parts)
            if before is not None:
                j, base = before
                changed = {k: v for k, v in parts.items() if base.get(k) != v}
                dropped = [k for k in base if k not in parts]
                if len(changed) + len(dropped) < len(parts):
                    d = {**d, "parts": changed, FROM: j} | ({DROPPED: dropped} if dropped else {})
        out.append(d)
    return out


def expand(events: list[Any]) -> None:
    """Each lookup's whole ``parts`` back in place, in ``events`` (as read from a
    file). Raises ValueError naming the event (from 1) where one cannot be."""
    whole: dict[int, dict[str, Any]] = {}
    for i, d in enumerate(events):
        if not isinstance(d, dict) or d.get("type") != LOOKUP:
            continue
        if FROM in d:
            j, parts, dropped = d[FROM], d.get("parts"), d.get(DROPPED, [])
            base = whole.get(j) if isinstance(j, int) and not isinstance(j, bool) else None
            if base is None:
                raise ValueError(f"event {i + 1}: {FROM} {j!r} is not an earlier cache lookup")
            if not isinstance(parts, dict) or not isinstance(dropped, list):
                raise ValueError(f"event {i + 1}: parts against event {j + 1} are not readable")
            gone = set(dropped)
            rest = {k: v for k, v in d.items() if k not in (FROM, DROPPED)}
            d = events[i] = rest | {"parts": {k: base[k] for k in base if k not in gone} | parts}
        if isinstance(d.get("parts"), dict):
            whole[i] = d["parts"]
