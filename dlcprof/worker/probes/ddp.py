"""The one adapter to torch's DDP compile internals: Dynamo's DDP mode and
compiled autograd (read once, when the process first reports: its first compile), and the buckets
DDPOptimizer chose (its ``pretty_print_buckets`` hook, wrapped once
``torch._dynamo.backends.distributed`` is imported by torch itself).

The split itself is in the structured trace (``optimize_ddp_split_graph`` and
``_child`` records: trace_records/dispatcher.py); the buckets are not, so the hook hands
them to the trace dispatcher, which joins them to the split of the compile in
progress. Either part missing degrades to "unavailable", never an error.
It also names the data-parallel wrappers the process built (``wrappers``),
from the marks the attach bootstrap leaves on their classes.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any

from dlcprof import events as ev
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

PROBE = "ddp"
DISTRIBUTED = "torch._dynamo.backends.distributed"
# The data-parallel wrappers a process may build, by the names users know them
# by: (module, class, name). The attach bootstrap marks each one built
# (worker/attached/bootstrap/sitecustomize.py, _WRAPPERS: the program builds
# them before it compiles, so before the probes install).
WRAPPERS = (
    ("torch.nn.parallel.distributed", "DistributedDataParallel", "DDP"),
    ("torch.distributed.fsdp.fully_sharded_data_parallel", "FullyShardedDataParallel", "FSDP"),
)
# fully_shard makes a class FSDP<Module> of FSDPModule and the module's class.
FSDP2 = "torch.distributed.fsdp._fully_shard._fully_shard"
# Set on a wrapper's class when one is built, by the attach bootstrap.
BUILT = "__dlcprof_built__"


def wrappers() -> list[str]:
    """The wrappers this process built so far: "DDP", "FSDP", "FSDP2"."""
    found = {
        name
        for module, cls, name in WRAPPERS
        if getattr(getattr(sys.modules.get(module), cls, None), BUILT, False)
    }
    fsdp2 = getattr(sys.modules.get(FSDP2), "FSDPModule", None)
    try:
        if fsdp2 is not None and type.__subclasses__(fsdp2):
            found.add("FSDP2")
    except TypeError:
        pass
    return sorted(found)


# (bucket cap in bytes, each bucket's parameter bytes, each bucket's parameter names)
Buckets = Callable[[int | None, list[int], list[list[str]]], None]


def settings(run_id: str) -> ev.CompileSettingsRead:
    """Dynamo's DDP mode and whether compiled autograd is on, as torch has them now."""
    dynamo: Any = sys.modules.get("torch._dynamo")  # None: each read below fails as missing
    mode: str | None = None
    autograd: bool | None = None
    missing = []
    try:
        mode = str(dynamo.utils.get_optimize_ddp_mode())
    except Exception:  # noqa: BLE001
        try:
            mode = str(dynamo.config.optimize_ddp)
        except Exception:  # noqa: BLE001
            missing.append("torch._dynamo optimize_ddp")
    try:
        ca = sys.modules.get("torch._dynamo.compiled_autograd")
        on = bool(getattr(ca, "compiled_autograd_enabled", False)) if ca is not None else False
        autograd = on or bool(dynamo.config.compiled_autograd)
    except Exception:  # noqa: BLE001
        missing.append("torch._dynamo.config.compiled_autograd")
    why = f"{' and '.join(missing)} not found on this torch" if missing else ""
    return ev.CompileSettingsRead(
        run_id=run_id,
        optimize_ddp=mode,
        compiled_autograd=autograd,
        unavailable=why,
        wrappers=wrappers(),
    )


def install(on_buckets: Buckets, notes: ProbeNotes) -> None:
    """Hand DDPOptimizer's buckets to ``on_buckets`` each time it chooses them."""
    when_imported(DISTRIBUTED, lambda module: _wrap(module, on_buckets, notes))


def _wrap(module: Any, on_buckets: Buckets, notes: ProbeNotes) -> None:
    original = getattr(module, "pretty_print_buckets", None)
    if not callable(original):
        notes.unavailable(
            PROBE,
            f"{DISTRIBUTED}.pretty_print_buckets not found: a DDP split is shown "
            "without its buckets",
        )
        return

    def pretty_print_buckets(buckets: Any, bucket_bytes_cap: Any, *args: Any, **kw: Any) -> Any:
        try:
            # In the graph's order: bucket i becomes the split's piece submod_i.
            on_buckets(
                int(bucket_bytes_cap) if bucket_bytes_cap is not None else None,
                [int(b.size) for b in buckets],
                [[str(p) for p in b.params] for b in buckets],
            )
        except Exception:  # noqa: BLE001 - never break the compile
            notes.unavailable(PROBE, "DDPOptimizer's buckets could not be read on this torch")
        return original(buckets, bucket_bytes_cap, *args, **kw)

    module.pretty_print_buckets = pretty_print_buckets
