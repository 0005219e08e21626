"""torch's raw structured trace, written as ``TORCH_TRACE`` writes it, so
``tlparse`` opens the same session that dlcprof shows.

A ``logging.FileHandler`` on ``torch._logging._internal.trace_log`` with
torch's own ``TorchLogsFormatter(trace=True)``: each record is one glog-style
line (``V1130 16:31:02.123456 4242 torch/_dynamo/convert_frame.py:1234]``)
followed by its JSON metadata, and its payload, if any, on the lines after it,
each indented by a tab. That is the format tlparse parses; using torch's
formatter keeps it exact across torch versions. Every record goes to the file,
the interned file names (``{"str": [...]}``) included, not only those the
other probes read. Put at position 0 of the handlers, like the trace probe's
(docs/torch-notes.md §1).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable

from dlcprof import events as ev
from dlcprof.worker.probes import ProbeNotes, Sink

PROBE = "raw_trace"


class _Counting(logging.FileHandler):
    records = 0

    def emit(self, record: logging.LogRecord) -> None:
        if getattr(record, "metadata", None) is None:
            return  # not a structured-trace record
        super().emit(record)
        self.records += 1


def install(
    sink: Sink, run_id: str, notes: ProbeNotes, directory: str | None = None
) -> Callable[[], None] | None:
    """Start writing ``<dir>/<run_id>.log``; the returned function closes it
    and emits ``TraceSaved``. None when there is no folder or no trace logger."""
    directory = directory or os.environ.get(ev.RAW_TRACE_DIR_ENV)
    if not directory:
        return None
    try:
        from torch._logging._internal import TorchLogsFormatter, trace_log
    except Exception as e:  # noqa: BLE001
        notes.unavailable(PROBE, f"torch's trace logger or formatter not found: {e}")
        return None
    path = os.path.join(directory, f"{run_id}.log")
    try:
        handler = _Counting(path, mode="w", encoding="utf-8")
    except OSError as e:
        notes.unavailable(PROBE, f"cannot write {path}: {e.strerror or e}")
        return None
    handler.setFormatter(TorchLogsFormatter(trace=True))
    trace_log.handlers.insert(0, handler)

    def uninstall() -> None:
        if handler in trace_log.handlers:
            trace_log.handlers.remove(handler)
        handler.close()
        sink.emit(
            ev.TraceSaved(
                path=path, records=handler.records, bytes=os.path.getsize(path), run_id=run_id
            )
        )

    return uninstall
