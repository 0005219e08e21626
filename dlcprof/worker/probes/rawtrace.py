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
(docs/torch-notes.md §1). The file starts with torch's ``torch_version``
artifact, which TORCH_TRACE writes once per log and ``dlcprof import`` reads.

A process with a rank (torchrun's ``RANK``, or the process group's once it is
initialized) names its file as torch does, ``dedicated_log_torch_trace_rank_N_
<random>.log``, so ``tlparse --all-ranks-html`` finds each rank's trace.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import sys
import tempfile
from collections.abc import Callable

from dlcprof import events as ev
from dlcprof.attach_contract import RAW_TRACE_DIR_ENV
from dlcprof.worker.paused_gc import paused_gc
from dlcprof.worker.probes import ProbeNotes

PROBE = "raw_trace"
# The artifact TORCH_TRACE writes once per log, naming the torch that wrote it.
VERSION_ARTIFACT = "torch_version"


class _Counting(logging.FileHandler):
    records = 0
    has_version = False

    def emit(self, record: logging.LogRecord) -> None:
        metadata = getattr(record, "metadata", None)
        if metadata is None:
            return  # not a structured-trace record
        if _is_version(metadata):
            if self.has_version:
                return  # TORCH_TRACE's own, logged to every handler: one a file
            self.has_version = True
        with paused_gc():
            super().emit(record)
        self.records += 1


def _is_version(metadata: object) -> bool:
    artifact = metadata.get("artifact") if isinstance(metadata, dict) else None
    return isinstance(artifact, dict) and artifact.get("name") == VERSION_ARTIFACT


def _version_record(trace_log: logging.Logger) -> logging.LogRecord:
    """torch's ``torch_version`` artifact, as TORCH_TRACE writes it after its first
    record (``_log_torch_version``, 2.13-2.15): ``dlcprof import`` reads the
    version from it."""
    import torch

    try:
        from torch._environment import is_fbcode

        oss = not is_fbcode()
    except Exception:  # noqa: BLE001 - an internal build has its own torch_version
        oss = True
    info = {
        "pytorch_version": torch.__version__,
        "commit": getattr(torch.version, "git_version", ""),
        "oss": oss,
    }
    payload = json.dumps(info, indent=0)
    digest = hashlib.md5(payload.encode("utf-8"), usedforsecurity=False).hexdigest()
    metadata = {"artifact": {"name": VERSION_ARTIFACT, "encoding": "json"}, "has_payload": digest}
    return trace_log.makeRecord(
        trace_log.name,
        logging.DEBUG,
        __file__,
        0,
        "",
        (),
        None,
        extra={"metadata": metadata, "payload": payload},
    )


def _rank() -> int | None:
    """The process group's rank, if this process initialized one."""
    try:
        dist = sys.modules.get("torch.distributed")
        return int(dist.get_rank()) if dist is not None and dist.is_initialized() else None
    except Exception:  # noqa: BLE001 - a name, not worth failing the trace for
        return None


def install(
    sink: ev.Sink,
    run_id: str,
    notes: ProbeNotes,
    directory: str | None = None,
    rank: int | None = None,
) -> Callable[[], None] | None:
    """Start writing ``<dir>/<run_id>.log`` (``rank``: torch's per-rank name);
    the returned function closes it and emits ``TraceSaved``. None when there
    is no folder or no trace logger."""
    directory = directory or os.environ.get(RAW_TRACE_DIR_ENV)
    if not directory:
        return None
    try:
        from torch._logging._internal import TorchLogsFormatter, trace_log
    except Exception as e:  # noqa: BLE001
        notes.unavailable(PROBE, f"torch's trace logger or formatter not found: {e}")
        return None
    try:
        path = _new_file(directory, run_id, rank)
        handler = _Counting(path, mode="w", encoding="utf-8")
    except OSError as e:
        notes.unavailable(PROBE, f"cannot write a raw trace in {directory}: {e.strerror or e}")
        return None
    handler.setFormatter(TorchLogsFormatter(trace=True))
    try:
        handler.handle(_version_record(trace_log))
    except Exception as e:  # noqa: BLE001 - the trace goes on without it
        notes.unavailable(PROBE, f"the raw trace starts without torch_version: {e}")
    trace_log.handlers.insert(0, handler)

    def uninstall() -> None:
        if handler in trace_log.handlers:
            trace_log.handlers.remove(handler)
        handler.close()
        final = path
        if rank is None and (joined := _rank()) is not None:
            # The rank came with the process group, after the file was opened.
            try:
                final = _new_file(directory, run_id, joined)
                os.replace(path, final)
            except OSError:
                final = path
        sink.emit(
            ev.TraceSaved(
                path=final, records=handler.records, bytes=os.path.getsize(final), run_id=run_id
            )
        )

    return uninstall


def _new_file(directory: str, run_id: str, rank: int | None) -> str:
    if rank is None:
        return os.path.join(directory, f"{run_id}.log")
    fd, path = tempfile.mkstemp(
        prefix=f"{ev.RANK_TRACE_PREFIX}{rank}_", suffix=".log", dir=directory
    )
    os.close(fd)
    return path
