"""Dynamo state the harness touches: reset between experiments, the recompile
limit, a compile counter for when the trace probe is unavailable, and where a
failed compile failed."""

from __future__ import annotations

import traceback

from dlcprof.worker.probes import ProbeNotes


def reset(notes: ProbeNotes) -> bool:
    """``torch._dynamo.reset()``: forget compiled code (disk caches stay)."""
    try:
        import torch._dynamo

        torch._dynamo.reset()
        return True
    except Exception as e:  # noqa: BLE001
        notes.unavailable("dynamo.reset", f"torch._dynamo.reset failed: {type(e).__name__}: {e}")
        return False


def recompile_limit() -> int | None:
    """How many compiles of one code object Dynamo allows before running it eager."""
    try:
        import torch._dynamo.config as cfg
    except Exception:  # noqa: BLE001
        return None
    for name in ("recompile_limit", "cache_size_limit"):  # renamed in torch 2.6
        value = getattr(cfg, name, None)
        if isinstance(value, int):
            return value
    return None


def frames_compiled(notes: ProbeNotes) -> int | None:
    """Frames compiled so far (``counters["stats"]["unique_graphs"]``), a fallback
    for counting recompiles when the trace probe is missing."""
    try:
        from torch._dynamo.utils import counters

        return int(counters["stats"]["unique_graphs"])
    except Exception as e:  # noqa: BLE001
        notes.unavailable("dynamo.counters", f"torch._dynamo.utils.counters: {type(e).__name__}")
        return None


def failure_frames(e: BaseException) -> tuple[str, str]:
    """Where a compile failed, as ("file:line" in the user's code, "file:line" inside
    torch or a library), "" where unknown. Dynamo's errors carry the user code it
    was tracing as ``real_stack`` (a private attribute; without it, the tracebacks);
    the library frame is the innermost one past the user's."""
    from dlcprof.trace_records.payloads import frame_owner

    chain = [e]
    while (nxt := chain[-1].__cause__ or chain[-1].__context__) and nxt not in chain:
        chain.append(nxt)
    real = next((s for x in chain if (s := getattr(x, "real_stack", None))), None)
    try:
        traced = [(f.filename, f.lineno) for f in real or []]
    except (TypeError, AttributeError):  # not a StackSummary: a later torch changed it
        traced = []
    raised = [(f.filename, f.lineno) for f in traceback.extract_tb(chain[-1].__traceback__)]
    frames = traced or raised
    owners = [frame_owner(path) for path, _ in frames]
    users = [i for i, o in enumerate(owners) if o == "user"]
    user = users[-1] if users else -1
    inside = [
        f
        for f, o in zip(frames[user + 1 :], owners[user + 1 :], strict=True)
        if o in ("torch", "library")
    ]
    # Dynamo's own code, where the error was raised; not for a graph break
    # (``gb_type``), whose raise site is Dynamo's ``unimplemented``, not where it broke.
    if not inside and traced and not any(getattr(x, "gb_type", None) for x in chain):
        inside = [f for f in raised if frame_owner(f[0]) in ("torch", "library")]
    return (_at(frames[user]) if users else "", _at(inside[-1]) if inside else "")


def _at(frame: tuple[str, int | None]) -> str:
    return f"{frame[0]}:{frame[1]}"
