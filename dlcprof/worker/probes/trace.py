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
handler, takes Logger's own path. At those times too, a record the dispatcher
does not read (tensor descriptions, guards, AOT graphs, ``fx_graph_runnable``)
is not made at all: torch would build its payload (a graph printed, JSON, an
md5) only for the handler to drop it; and a phase's event (``chromium_event``,
three records in four) goes to the handler as the dict torch made, with the
compile it belongs to, past ``trace_structured``: not JSON-encoded by Python's
slow indenting encoder, hashed and parsed back, nor timed into torch's own
logging-overhead figure. So does a cache lookup's record: the dict torch would
JSON-encode for it (~640 key components, ~75 KB), read from its ``payload_fn``.
Where this torch's ``CompileContext`` (torch._guards, private) or a lookup's
``payload_fn`` is not what this module knows, those take torch's path.
"""

from __future__ import annotations

import functools
import logging
import sys
import threading
from collections.abc import Callable
from typing import Any, cast

from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.trace_records.payloads import Payload, record_name
from dlcprof.worker.paused_gc import paused_gc
from dlcprof.worker.probes import ProbeNotes

PROBE = "trace"
PHASE = "chromium_event"


class _TraceHandler(logging.Handler):
    def __init__(self, dispatcher: TraceDispatcher) -> None:
        super().__init__(logging.DEBUG)
        self.dispatcher = dispatcher

    def emit(self, record: logging.LogRecord) -> None:
        self.take(
            getattr(record, "metadata", None), getattr(record, "payload", None), record.thread
        )

    def take(self, md: object, payload: Payload, thread: int | None) -> None:
        if isinstance(md, dict):
            with paused_gc():
                self.dispatcher.feed(md, payload, thread or 0)


def _alone(trace_log: logging.Logger) -> bool:
    """Whether dlcprof's handler is the logger's only one (no TORCH_TRACE, no raw
    trace), and the logger passes torch's records on."""
    handlers = trace_log.handlers
    return (
        len(handlers) == 1
        and isinstance(handlers[0], _TraceHandler)
        and not trace_log.disabled
        and trace_log.isEnabledFor(logging.DEBUG)
    )


def _direct(trace_log: logging.Logger) -> Callable[..., None]:
    """``trace_log.debug`` that skips Logger's record-making while our handler alone listens."""
    debug = logging.Logger.debug

    def direct(msg: object, *args: object, **kwargs: Any) -> None:
        extra = kwargs.get("extra")
        if isinstance(extra, dict) and _alone(trace_log):
            handler = cast(_TraceHandler, trace_log.handlers[0])
            handler.take(extra.get("metadata"), extra.get("payload"), threading.get_ident())
        else:
            debug(trace_log, msg, *args, **kwargs)

    return direct


_SKIPS = "_dlcprof_skips_unread"  # marks the wrapper below
Context = Callable[[dict[str, Any]], None]


def _compile_context() -> Context | None:
    """What ``trace_structured`` adds to a record: the compile (and attempt) in
    progress, from torch._guards' CompileContext; None where it is not there."""
    try:
        from torch._guards import CompileContext

        current = CompileContext.current_trace_id
    except Exception:  # noqa: BLE001 - any torch: phases then take torch's path
        return None

    def add(md: dict[str, Any]) -> None:
        trace_id = current()
        if trace_id is None:
            return
        cid = trace_id.compile_id
        for key in ("compiled_autograd_id", "frame_id", "frame_compile_id"):
            value = getattr(cid, key)
            if value is not None:
                md[key] = value
        md["attempt"] = trace_id.attempt

    return add


def _encoded_dict(payload_fn: object) -> dict[str, Any] | None:
    """The dict a cache lookup's ``payload_fn`` JSON-encodes (torch's ``lambda:
    json.dumps(cache_info)``, in each cache layer), read from its closure; None
    for any other payload_fn, which is then called."""
    code = getattr(payload_fn, "__code__", None)
    cells = getattr(payload_fn, "__closure__", None)
    if code is None or not cells or code.co_freevars != ("cache_info",):
        return None
    if code.co_names != ("json", "dumps"):
        return None
    value = cells[0].cell_contents
    return value if isinstance(value, dict) else None


def _skip_unread(internal: Any) -> None:
    """``trace_structured`` that makes no record the dispatcher would drop, and
    hands a phase's event and a cache lookup's dict straight over, while its
    handler alone listens; bound wherever torch's modules hold the original
    (they import it by name), once per process."""
    original = getattr(internal, "trace_structured", None)
    trace_log = internal.trace_log
    if original is None or getattr(original, _SKIPS, False):
        return
    context = _compile_context()

    @functools.wraps(original)
    def trace_structured(name: str, *args: Any, **kwargs: Any) -> None:
        nonlocal context
        if _alone(trace_log):
            handler = cast(_TraceHandler, trace_log.handlers[0])
            reads = handler.dispatcher.reads
            md: dict[str, Any] | None = None
            if name == "artifact" and len(args) + ("metadata_fn" in kwargs) == 1:
                # An artifact is named inside its metadata, cheap to make; made once.
                made = (args[0] if args else kwargs.pop("metadata_fn"))()
                if record_name({name: made}) not in reads:
                    return
                args, kwargs["metadata_fn"] = (), lambda: made
                md = {name: made}
            elif name != "artifact" and name not in reads:
                return
            elif name == PHASE and not args and "metadata_fn" not in kwargs:
                md = {PHASE: {}}
            if md is not None and context is not None and "compile_id" not in kwargs:
                # Handed over past torch's encoding: a phase's event, a cache lookup's dict.
                payload_fn = kwargs.get("payload_fn")
                payload = (
                    _encoded_dict(payload_fn) if name != PHASE else payload_fn and payload_fn()
                )
                if payload is not None:
                    try:
                        context(md)
                    except Exception:  # noqa: BLE001 - CompileContext changed: torch's path
                        context = None
                    else:
                        handler.take(md, payload, threading.get_ident())
                        return
        original(name, *args, **kwargs)

    setattr(trace_structured, _SKIPS, True)
    for module in list(sys.modules.values()):
        # The module's own names only: a lazy module's __getattr__ would import.
        names = getattr(module, "__dict__", None)
        if isinstance(names, dict) and names.get("trace_structured") is original:
            names["trace_structured"] = trace_structured


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
        import torch._logging._internal as internal

        trace_log = internal.trace_log
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
    direct = _direct(trace_log)
    vars(trace_log)["debug"] = direct  # on the instance: Logger's own stays for the rest
    _skip_unread(internal)
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
