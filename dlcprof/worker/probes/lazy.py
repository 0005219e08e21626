"""Run a probe's setup when torch imports a module, not before.

Importing ``torch._inductor.select_algorithm`` or ``torch._inductor.output_code``
ahead of the first compile would take seconds of import out of the compile the
run measures. ``when_imported`` runs ``callback(module)`` right after torch's
own import of that module finishes (at once if it is imported already), so a
probe hooks in without moving a second of the work it observes.
"""

from __future__ import annotations

import importlib.abc
import importlib.machinery
import sys
import threading
from collections.abc import Callable
from types import ModuleType
from typing import Any

Callback = Callable[[ModuleType], object]  # what it returns is dropped

_lock = threading.Lock()
_waiting: dict[str, list[Callback]] = {}


class _Finder(importlib.abc.MetaPathFinder):
    """Finds nothing itself: wraps the loader the other finders return for a
    module someone waits for, so the callbacks run after it executes."""

    def find_spec(self, fullname: str, path: Any, target: Any = None) -> Any:
        if fullname not in _waiting:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None and spec.loader is not None:
                spec.loader = _Loader(spec.loader)
                return spec
        return None


class _Loader(importlib.abc.Loader):
    def __init__(self, loader: Any) -> None:
        self.loader = loader

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType | None:
        return self.loader.create_module(spec)

    def __getattr__(self, name: str) -> Any:  # get_source, get_filename, ...
        return getattr(self.loader, name)

    def exec_module(self, module: ModuleType) -> None:
        # The module keeps torch's loader: only this one execution is watched.
        module.__loader__ = self.loader
        if module.__spec__ is not None:
            module.__spec__.loader = self.loader
        self.loader.exec_module(module)
        with _lock:
            callbacks = _waiting.pop(module.__name__, [])
        for callback in callbacks:
            callback(module)


_FINDER = _Finder()


def when_imported(name: str, callback: Callback) -> None:
    """``callback(module)`` once ``name`` is imported (now, if it is already)."""
    module = sys.modules.get(name)
    if module is None:
        with _lock:
            module = sys.modules.get(name)
            if module is None:
                _waiting.setdefault(name, []).append(callback)
                if _FINDER not in sys.meta_path:
                    sys.meta_path.insert(0, _FINDER)
                return
    callback(module)
