"""Torch's catalogue of graph breaks (``torch/_dynamo/graph_break_registry.json``,
torch 2.9 and later): each break type's stable id ("GB0124"), its title (the
``Gb_type`` Dynamo prints as the break's reason), explanation, hints and page
on torch's graph-break site. Read from the file the installed torch ships,
found without importing torch; where the file or a field is missing (older
torch) every lookup answers n/a with the reason."""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import field

from dlcprof.data import data
from dlcprof.trace_records.torch_dir import TORCH_DIR

REGISTRY = os.path.join("_dynamo", "graph_break_registry.json")
# Torch's own link for an id (torch/_dynamo/exc.py get_gbid_documentation_link).
SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"
_ID_RE = re.compile(r"^GB\d{4}$")
# The link Dynamo appends to a break's message: ".../gb/gb0124.html".
_LINK_RE = re.compile(r"(https?://\S+/gb/gb(\d{4})\.html)")


@data(frozen=True)
class Entry:
    gb_id: str
    title: str
    explanation: str
    hints: tuple[str, ...]

    @property
    def link(self) -> str:
        return link(self.gb_id)


@data(frozen=True)
class Catalogue:
    entries: dict[str, Entry] = field(default_factory=dict)
    titles: dict[str, str] = field(default_factory=dict)  # every wording, old ones too -> id
    missing: str = ""  # why there is no catalogue, "" when read

    def entry(self, gb_id: str) -> Entry | None:
        return self.entries.get(gb_id)

    def id_of(self, title: str) -> str:
        """The id of a break type Dynamo printed, "" when not catalogued."""
        return self.titles.get(title.strip(), "")


def is_id(text: str) -> bool:
    """ "GB0124": an id as torch's catalogue spells it."""
    return bool(_ID_RE.match(text))


def link(gb_id: str) -> str:
    """The id's page on torch's graph-break site."""
    return f"{SITE}gb{gb_id.removeprefix('GB')}.html" if _ID_RE.match(gb_id) else ""


def id_in(payload: str) -> tuple[str, str]:
    """(id, link) from the link Dynamo appends to a break's message; ("", "") without."""
    m = _LINK_RE.search(payload or "")
    return (f"GB{m.group(2)}", m.group(1)) if m else ("", "")


def identify(gb_id: str, title: str, catalogue: Catalogue | None = None) -> tuple[str, str]:
    """(id, link) of a break: the id torch named, else ``catalogue``'s (the
    installed torch's) by the break's title, as before Dynamo linked its id;
    ("", "") when neither names one."""
    gb_id = gb_id or (catalogue or installed()).id_of(title)
    return gb_id, link(gb_id)


def registry_path() -> str | None:
    return os.path.join(TORCH_DIR, REGISTRY) if TORCH_DIR else None


@functools.lru_cache(maxsize=4)
def load(path: str | None) -> Catalogue:
    """The catalogue at ``path``; empty with the reason when unreadable."""
    if path is None:
        return Catalogue(missing="torch is not installed here")
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except FileNotFoundError:
        return Catalogue(missing=f"this torch ships no graph-break catalogue ({path})")
    except (OSError, ValueError) as e:
        return Catalogue(missing=f"torch's graph-break catalogue is unreadable: {e}")
    entries: dict[str, Entry] = {}
    titles: dict[str, str] = {}
    for gb_id, versions in data.items() if isinstance(data, dict) else ():
        # Each id lists its type's wordings, the current first.
        kept = [v for v in versions if isinstance(v, dict)] if isinstance(versions, list) else []
        if not _ID_RE.match(str(gb_id)) or not kept:
            continue
        first = kept[0]
        for v in kept:
            titles.setdefault(str(v.get("Gb_type") or ""), gb_id)
        entries[gb_id] = Entry(
            gb_id,
            str(first.get("Gb_type") or ""),
            str(first.get("Explanation") or ""),
            tuple(str(h) for h in first.get("Hints") or ()),
        )
    if not entries:
        return Catalogue(missing=f"torch's graph-break catalogue lists no break ({path})")
    return Catalogue(entries, titles)


def installed() -> Catalogue:
    """The installed torch's catalogue."""
    return load(registry_path())
