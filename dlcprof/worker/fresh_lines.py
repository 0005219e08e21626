"""Kernel source lines as the files are now, not as the cache remembers them.

On an FX graph cache hit Inductor hands back the compile that wrote the entry,
and the provenance in it (the "file:line code" each kernel came from) cites the
files of that compile: after lines were added above the model's code the line
numbers are off, and from another checkout the path is. Each cited line is
checked against the file as it is now: code that moved is found at its nearest
line holding the same code, and a file of the workload's folder is preferred
to the cited one of the same name. A line that cannot be matched stays as cited.
"""

from __future__ import annotations

import dataclasses
import os
import re

from dlcprof import events as ev

_CITED = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?: (?P<code>.*))?$")


class FreshLines:
    def __init__(self) -> None:
        self.home: str | None = None  # the workload file's folder, once loaded
        self._files: dict[str, list[str] | None] = {}

    def _read(self, path: str) -> list[str] | None:
        if path not in self._files:
            try:
                with open(path, encoding="utf-8", errors="replace") as f:
                    self._files[path] = [ln.strip() for ln in f]
            except OSError:
                self._files[path] = None
        return self._files[path]

    def line(self, cited: str) -> str:
        """``cited`` re-anchored on the file as it is now (unchanged when it holds)."""
        m = _CITED.match(cited)
        if m is None or not (code := (m["code"] or "").strip()):
            return cited
        path, at = m["path"], int(m["line"])
        # The workload's folder first: from another checkout the cited file may
        # still exist, as it was there.
        candidates = [path]
        if self.home is not None:
            mine = os.path.join(self.home, os.path.basename(path))
            if mine != path and os.path.isfile(mine):
                candidates.insert(0, mine)
        for candidate in candidates:
            lines = self._read(candidate)
            if not lines:
                continue
            found = [i + 1 for i, ln in enumerate(lines) if ln == code]
            if found:
                nearest = min(found, key=lambda n: abs(n - at))
                return f"{candidate}:{nearest} {m['code']}"
        return cited


class FreshKernelLines:
    """A sink that re-anchors each ``KernelGenerated``'s source lines on the way out."""

    def __init__(self, sink: ev.Sink, fresh: FreshLines) -> None:
        self.sink = sink
        self.fresh = fresh

    def emit(self, event: ev.Event) -> None:
        if isinstance(event, ev.KernelGenerated) and event.source_lines:
            lines = [self.fresh.line(s) for s in event.source_lines]
            event = dataclasses.replace(event, source_lines=list(dict.fromkeys(lines)))
        self.sink.emit(event)
