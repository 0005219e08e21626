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
import sys
import tempfile
from collections.abc import Callable
from types import ModuleType
from typing import Any

from dlcprof.worker.probes import ProbeNotes, lazy

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
    checked against torch's own ``default_cache_dir()`` after.

    The folder is shared by every process of the user (a second dlcprof, the
    rank beside this one, a test beside this test): a header is this compile's
    when this process built it, as torch's ``_precompile_header`` says (wrapped
    once torch imports its codecache); where torch has no such function, any
    header new in the folder is, and a note says so."""

    def __init__(self, notes: ProbeNotes) -> None:
        self.notes = notes
        self.folder = header_folder()
        self.before = _headers(self.folder)
        self._mine = len(_BUILT)
        lazy.when_imported(_CODECACHE, _watch_builds)

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
        codecache = sys.modules.get(_CODECACHE)
        if getattr(getattr(codecache, _BUILDER, None), _WATCHED, False):
            return list(_BUILT)[self._mine :]
        if codecache is not None:
            why = (
                f"{_CODECACHE}.{_BUILDER} is missing: a header another process "
                "built in the folder meanwhile counts as this compile's"
            )
            self.notes.unavailable("caches.precompiled_headers.owner", why)
        return sorted(_headers(folder) - self.before)


_CODECACHE, _BUILDER = "torch._inductor.codecache", "_precompile_header"
_WATCHED = "_dlcprof_watched"
# The headers this process built (.gch paths), in the order torch built them.
_BUILT: dict[str, None] = {}


def _watch_builds(codecache: ModuleType) -> None:
    """Wrap torch's ``_precompile_header`` (once a process; torch's callers look
    it up by name): a header whose .gch was not in its folder before the call
    and is after was built by this process, or waited for under torch's lock."""
    original = getattr(codecache, _BUILDER, None)
    if not callable(original) or getattr(original, _WATCHED, False):
        return

    folder = header_folder()  # torch's rule: fixed for the process

    def precompile_header(*args: Any, **kwargs: Any) -> Any:
        before = _headers(folder)
        path = original(*args, **kwargs)
        gch = f"{path}.gch"
        if gch not in before and os.path.isfile(gch):
            _BUILT[gch] = None
        return path

    setattr(precompile_header, _WATCHED, True)
    setattr(codecache, _BUILDER, precompile_header)


def header_folder() -> str:
    """Where torch keeps its precompiled headers, by its rule for the default
    cache folder (``default_cache_dir``), read without importing torch."""
    try:
        user = getpass.getuser()
    except (KeyError, ModuleNotFoundError, OSError):
        user = f"uid_{os.getuid()}"
    user = re.sub(r'[\\/:*?"<>|]', "_", user)
    return os.path.join(tempfile.gettempdir(), f"torchinductor_{user}", HEADERS)


HEADERS = "precompiled_headers"


def _headers(folder: str) -> set[str]:
    try:
        return {os.path.join(folder, n) for n in os.listdir(folder) if n.endswith(".gch")}
    except OSError:
        return set()
