"""Live compile events from torch's structured-trace logger (the feed behind tlparse).

The torch-facing part of reading torch's trace records: ``install`` puts a
``logging.Handler`` at position 0 of ``trace_log.handlers`` (docs/torch-notes.md §1:
appended, it would miss the first ``B dynamo``; never replace ``Handler.lock``)
that feeds each record to a ``TraceDispatcher`` (``dlcprof/trace_records``: pure,
no torch), and one on ``torch._dynamo.convert_frame`` for the recompile-limit warning.

While that handler is the only one listening (no ``TORCH_TRACE``, no raw trace),
``trace_log.debug`` hands torch's record straight to it: Python's logging would
build a ``LogRecord``, find the caller's frame and take the handler's lock for
every record of every compile, at more cost than the handler's own work
(benchmarks/RESULTS.md §15). torch calls ``trace_log.debug`` in one place
(``trace_structured``), with the record in ``extra``; any other call, or a second
handler, takes Logger's own path.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from typing import Any

from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.worker.paused_gc import paused_gc
from dlcprof.worker.probes import ProbeNotes

PROBE = "trace"


class _TraceHandler(logging.Handler):
    def __init__(self, dispatcher: TraceDispatcher) -> None:
        super().__init__(logging.DEBUG)
        self.dispatcher = dispatcher

    def emit(self, record: logging.LogRecord) -> None:
        self.take(
            getattr(record, "metadata", None), getattr(record, "payload", None), record.thread
        )

    def take(self, md: object, payload: str | None, thread: int | None) -> None:
        if isinstance(md, dict):
            with paused_gc():
                self.dispatcher.feed(md, payload, thread or 0)


def _direct(trace_log: logging.Logger, handler: _TraceHandler) -> Callable[..., None]:
    """``trace_log.debug`` that skips Logger's record-making while ``handler`` alone listens."""
    debug = logging.Logger.debug

    def direct(msg: object, *args: object, **kwargs: Any) -> None:
        extra = kwargs.get("extra")
        handlers = trace_log.handlers
        if (
            isinstance(extra, dict)
            and len(handlers) == 1
            and handlers[0] is handler
            and not trace_log.disabled
            and trace_log.isEnabledFor(logging.DEBUG)
        ):
            handler.take(extra.get("metadata"), extra.get("payload"), threading.get_ident())
        else:
            debug(trace_log, msg, *args, **kwargs)

    return direct


class _LimitWarningHandler(logging.Handler):
    def __init__(self, dispatcher: TraceDispatcher) -> None:
        super().__init__(logging.WARNING)
        self.dispatcher = dispatcher

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.dispatcher.on_limit_warning(record.getMessage())
        except Exception:  # noqa: BLE001 - never break the compile that warned
            pass


def install(dispatcher: TraceDispatcher, notes: ProbeNotes) -> Callable[[], None] | None:
    """Attach the handlers; returns an uninstall function, or None when unavailable."""
    try:
        from torch._logging._internal import trace_log
    except Exception as e:  # noqa: BLE001
        notes.unavailable(
            PROBE,
            f"torch._logging._internal.trace_log not found ({type(e).__name__}): "
            "no live phases, compile records, kernels, recompiles or graph breaks",
        )
        return None
    handler = _TraceHandler(dispatcher)
    # Position 0: torch's lazy placeholder handler removes itself while the list
    # is iterated for the very first record; appended, we would miss `B dynamo`.
    trace_log.handlers.insert(0, handler)
    direct = _direct(trace_log, handler)
    vars(trace_log)["debug"] = direct  # on the instance: Logger's own stays for the rest
    if trace_log.level > logging.DEBUG or trace_log.level == logging.NOTSET:
        trace_log.setLevel(logging.DEBUG)
    warn_logger = logging.getLogger("torch._dynamo.convert_frame")
    warn_handler = _LimitWarningHandler(dispatcher)
    warn_logger.addHandler(warn_handler)

    def uninstall() -> None:
        if handler in trace_log.handlers:
            trace_log.handlers.remove(handler)
        if vars(trace_log).get("debug") is direct:
            del vars(trace_log)["debug"]
        warn_logger.removeHandler(warn_handler)

    return uninstall
