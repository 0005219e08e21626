"""Inductor's graph-level caches (FX graph cache, AOTAutograd cache).

The shape sweep bypasses them so that every shape transition pays the compile
it really costs: otherwise a graph compiled earlier in the run (the main compile
of a dynamic run compiles the very graph its sweep needs) or in an earlier run
on a warm cache would load in a fraction of a second, and static vs dynamic
would compare cache luck, not compile work. Kernel binaries (the C++/Triton
code cache) are still reused.
"""

from __future__ import annotations

import getpass
import os
import re
import tempfile
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


class HeaderWatch:
    """Did the first call build Inductor's precompiled header? The first CPU
    compile in a new TMPDIR or torch install builds one
    (``<default cache dir>/precompiled_headers``, under TMPDIR, not
    TORCHINDUCTOR_CACHE_DIR): seconds no graph cache saves. The folder is
    listed before the compile by torch's rule for it, without importing
    torch._inductor (that import belongs to the compile being measured), and
    checked against torch's own ``default_cache_dir()`` after."""

    def __init__(self, notes: ProbeNotes) -> None:
        self.notes = notes
        try:
            user = getpass.getuser()
        except (KeyError, ModuleNotFoundError, OSError):
            user = f"uid_{os.getuid()}"
        user = re.sub(r'[\\/:*?"<>|]', "_", user)
        self.folder = os.path.join(tempfile.gettempdir(), f"torchinductor_{user}", HEADERS)
        self.before = _headers(self.folder)

    def built(self) -> list[str]:
        """The headers that appeared since: call after the compile."""
        try:
            from torch._inductor.runtime.cache_dir_utils import default_cache_dir

            folder = os.path.join(default_cache_dir(), HEADERS)
        except Exception as e:  # noqa: BLE001
            why = f"cache_dir_utils.default_cache_dir: {type(e).__name__}"
            self.notes.unavailable("caches.precompiled_headers", why)
            return []
        if folder != self.folder:
            why = f"torch keeps them in {folder}, not {self.folder} where dlcprof looked"
            self.notes.unavailable("caches.precompiled_headers", why)
            return []
        return sorted(_headers(folder) - self.before)


HEADERS = "precompiled_headers"


def _headers(folder: str) -> set[str]:
    try:
        return {os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".gch")}
    except OSError:
        return set()
