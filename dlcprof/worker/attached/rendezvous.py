"""When this process's process group finished initializing: the rendezvous
``dlcprof merge`` aligns the clocks of a job's nodes on.

``torch.distributed.init_process_group`` is wrapped (in ``torch.distributed``
and ``distributed_c10d``, where programs call it) so that, once it returns,
``ProcessGroupJoined`` is emitted with the time it returned, the rank, the
world size and the backend. The wrapper calls torch's function unchanged and
returns its result. A process group that was initialized before the probes
installed (they wait for Dynamo's import) is sent at install, with the time
the bootstrap noted on ``distributed_c10d`` (``JOINED_T``) when it returned.
Anything of ours that fails is a ``ProbeUnavailable``
note, never the program's error. A program that imported the function by
name before torch finished importing keeps torch's own (no event then).
"""

from __future__ import annotations

import functools
import os
import sys
from collections.abc import Callable
from typing import Any

from dlcprof import events as ev
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

PROBE = "rendezvous"
C10D = "torch.distributed.distributed_c10d"
_WRAPPED = "__dlcprof_wrapped__"
JOINED_T = "__dlcprof_joined_t__"  # set by bootstrap/sitecustomize.py


def waited_for_all(backend: str) -> bool:
    """Does init_process_group wait for every rank? gloo connects a full mesh
    of the ranks; any backend does with TORCH_DIST_INIT_BARRIER=1. NCCL alone
    connects lazily, at the first collective (torch 2.13)."""
    return "gloo" in backend.lower() or os.environ.get("TORCH_DIST_INIT_BARRIER") == "1"


def install(sink: ev.Sink, run_id: Callable[[], str], notes: ProbeNotes) -> None:
    """Wrap init_process_group once torch.distributed is imported."""
    when_imported(C10D, lambda c10d: _wrap(c10d, sink, run_id, notes))


def _wrap(c10d: Any, sink: ev.Sink, run_id: Callable[[], str], notes: ProbeNotes) -> None:
    def joined(t: float) -> None:
        try:
            backend = str(c10d.get_backend())
            sink.emit(
                ev.ProcessGroupJoined(
                    run_id=run_id(),
                    rank=int(c10d.get_rank()),
                    world_size=int(c10d.get_world_size()),
                    backend=backend,
                    waited=waited_for_all(backend),
                    t=t,
                )
            )
        except Exception as e:  # noqa: BLE001 - the program's call succeeded: keep it so
            notes.unavailable(PROBE, f"the process group's rank or backend unreadable: {e!r}")

    try:
        original = c10d.init_process_group
        if getattr(original, _WRAPPED, False):
            return
        early = getattr(c10d, JOINED_T, None)
        if early is not None and c10d.is_initialized():
            joined(early)

        @functools.wraps(original)
        def init_process_group(*args: Any, **kwargs: Any) -> Any:
            result = original(*args, **kwargs)
            joined(ev.now())
            return result

        setattr(init_process_group, _WRAPPED, True)
        c10d.init_process_group = init_process_group
        # torch.distributed re-exports it (when it imports later, it copies ours).
        dist: Any = sys.modules.get("torch.distributed")
        if getattr(dist, "init_process_group", None) is original:
            dist.init_process_group = init_process_group
    except Exception as e:  # noqa: BLE001
        notes.unavailable(PROBE, f"torch.distributed.init_process_group not wrapped: {e!r}")
