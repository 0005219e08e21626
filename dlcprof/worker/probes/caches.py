"""Inductor's graph-level caches (FX graph cache, AOTAutograd cache).

The shape sweep bypasses them so that every shape transition pays the compile
it really costs: otherwise a graph compiled earlier in the run (the main compile
of a dynamic run compiles the very graph its sweep needs) or in an earlier run
on a warm cache would load in a fraction of a second, and static vs dynamic
would compare cache luck, not compile work. Kernel binaries (the C++/Triton
code cache) are still reused.
"""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any

from dlcprof.worker.probes import ProbeNotes

_SWITCHES = (
    ("torch._inductor.config", "fx_graph_cache"),
    ("torch._functorch.config", "enable_autograd_cache"),
)


def bypass_graph_caches(notes: ProbeNotes) -> Callable[[], None]:
    """Turn the graph caches off; returns a function that restores them."""
    import importlib

    saved: list[tuple[Any, str, Any]] = []
    for module_name, attr in _SWITCHES:
        try:
            module = importlib.import_module(module_name)
            old = getattr(module, attr)
            setattr(module, attr, False)
            saved.append((module, attr, old))
        except Exception as e:  # noqa: BLE001
            notes.unavailable(
                f"caches.{attr}",
                f"{module_name}.{attr} not settable ({type(e).__name__}): the sweep may "
                "load graphs from cache",
            )

    def restore() -> None:
        for module, attr, old in saved:
            setattr(module, attr, old)

    return restore


def precompiled_headers(notes: ProbeNotes) -> set[str] | None:
    """The precompiled headers Inductor's CPU compiles use (``<default cache
    dir>/precompiled_headers``, under TMPDIR, not TORCHINDUCTOR_CACHE_DIR): the
    first compile in a new TMPDIR or venv builds one, seconds that no graph
    cache saves. None when the folder cannot be named."""
    try:
        from torch._inductor.runtime.cache_dir_utils import default_cache_dir

        folder = os.path.join(default_cache_dir(), "precompiled_headers")
    except Exception as e:  # noqa: BLE001
        notes.unavailable("caches.precompiled_headers", f"default_cache_dir: {type(e).__name__}")
        return None
    try:
        return {os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".gch")}
    except OSError:
        return set()
