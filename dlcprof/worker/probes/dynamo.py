"""Dynamo state the harness touches: reset between experiments, the recompile
limit, and a compile counter for when the trace probe is unavailable."""

from __future__ import annotations

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
