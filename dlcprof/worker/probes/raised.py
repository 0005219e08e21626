"""A compile that raised into the program instead of running the frame eagerly.

torch adapter (``torch._dynamo.convert_frame.CatchErrorsWrapper``, 2.13): every
frame Dynamo is asked to compile goes through this callback, whatever the
mode (``fullgraph=True`` too). Dynamo decides there whether a failed compile
falls back to eager (a graph break, ``suppress_errors``) or raises: an
exception that leaves ``__call__`` is one the compiled call raises in the
program (an ``InternalTorchDynamoError``, a backend's failure, a graph break
under ``fullgraph=True``). The compile record (``compilation_metrics``) is
written before that decision, so it cannot say which. The wrapper only looks
at an exception on its way out; a call that returns pays one ``try``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from dlcprof import events as ev
from dlcprof.trace_records import gb_catalogue
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.dynamo import failure_frames

PROBE = "compile_raised"


class RaisedCompiles:
    """Emits ``CompileRaised`` once per distinct error and place."""

    def __init__(self, sink: ev.Sink, run_id: Callable[[], str]) -> None:
        self.sink = sink
        self.run_id = run_id
        self.said: set[tuple[str, str]] = set()

    def raised(self, e: BaseException) -> None:
        location, inside = failure_frames(e)
        error = _first_line(f"{type(e).__name__}: {e}")
        if (error, location) in self.said:
            return
        self.said.add((error, location))
        self.sink.emit(
            ev.CompileRaised(
                run_id=self.run_id(),
                error=error,
                location=location,
                inside=inside,
                gb_id=_gb_id(e),
            )
        )


def _gb_id(e: BaseException) -> str:
    """A graph break's id in torch's catalogue: from the link Dynamo ends its
    message with, else by its type (``Unsupported.gb_type``, torch 2.8 and
    later); "" for another error."""
    gb_id = gb_catalogue.id_in(str(e))[0]
    gb_type = str(getattr(e, "gb_type", "") or "")
    return gb_id or (gb_catalogue.identify("", gb_type)[0] if gb_type else "")


def _first_line(words: str) -> str:
    """The error's first line, and the next where it ends in a colon (Dynamo's
    "backend='b' raised:", then what the backend raised)."""
    lines = [ln.strip() for ln in words.splitlines() if ln.strip()]
    if len(lines) > 1 and lines[0].endswith(":"):
        return f"{lines[0]} {lines[1]}"
    return lines[0] if lines else words


def install(raised: RaisedCompiles, notes: ProbeNotes) -> None:
    """Wrap Dynamo's frame callback (once per process: it outlives a fork)."""
    try:
        from torch._dynamo import convert_frame

        wrapper: Any = convert_frame.CatchErrorsWrapper  # patched below
        original = wrapper.__call__
    except Exception as e:  # noqa: BLE001
        notes.unavailable(
            PROBE,
            f"torch._dynamo.convert_frame.CatchErrorsWrapper not found ({type(e).__name__}): "
            "a compile that raises is said only as the program's own error",
        )
        return

    def call(self: Any, *args: Any, **kwargs: Any) -> Any:
        try:
            return original(self, *args, **kwargs)
        except Exception as e:
            try:
                raised.raised(e)
            except Exception:  # noqa: BLE001 - the program must get its own exception
                pass
            raise

    wrapper.__call__ = call
