"""dlcprof's own code, told from a program's by where it lives, never by a folder's name.

A file is dlcprof's when it lies in the imported dlcprof package, paths resolved
(the attach bootstrap lives inside it, in ``worker/attached/bootstrap``); the
bundled workloads ship inside it too, and are workloads. A path recorded on
another machine (an imported log) cannot be resolved here: it is dlcprof's when
it ends in one of this package's own files in a subfolder
(``dlcprof/worker/run.py``). Any folder named ``dlcprof`` would not do: a clone
keeps its venv (torch) and its test programs under one.
"""

from __future__ import annotations

import functools
import os
import re
from pathlib import Path

PACKAGE_DIR = os.path.realpath(os.path.dirname(__file__)) + os.sep
# Shipped inside the package, but not dlcprof's code: the bundled workloads.
_WORKLOADS = "bundled/"
_PACKAGE_NAME = re.compile(r"(?<![^/])dlcprof/")


@functools.cache
def _subfolder_files() -> frozenset[str]:
    """This package's files in its subfolders, by their path inside it."""
    root = Path(PACKAGE_DIR)
    inside = (p.relative_to(root).as_posix() for p in root.rglob("*.py"))
    return frozenset(f for f in inside if "/" in f and not f.startswith(_WORKLOADS))


@functools.lru_cache(maxsize=4096)
def module(path: str) -> str | None:
    """``path``'s file inside dlcprof ("worker/run.py"), None for a file that is
    not dlcprof's."""
    real = os.path.realpath(path)
    if real.startswith(PACKAGE_DIR):
        inside = real[len(PACKAGE_DIR) :].replace(os.sep, "/")
        return None if inside.startswith(_WORKLOADS) else inside
    posix = path.replace("\\", "/")
    found = list(_PACKAGE_NAME.finditer(posix))
    inside = posix[found[-1].end() :] if found else ""
    return inside if inside in _subfolder_files() else None
