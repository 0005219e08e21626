"""Where a session keeps its files until they are saved (torch's raw trace per
run, the py-spy profile) and a cold or fresh run's caches live. One folder
per dlcprof process, removed when the process exits (a stop signal exits
normally, see signals.py). A folder whose process died without exiting
(SIGKILL, OOM) is removed by the next dlcprof that starts one: the pid is in
its name."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

PREFIX = "dlcprof-scratch-"
_folder: Path | None = None


def folder() -> Path:
    """This process's scratch folder, made on first use."""
    global _folder
    if _folder is None or not _folder.is_dir():
        _remove_orphans()
        _folder = Path(tempfile.mkdtemp(prefix=f"{PREFIX}{os.getpid()}-"))
        atexit.register(shutil.rmtree, _folder, ignore_errors=True)
    return _folder


def holds(path: str | os.PathLike[str]) -> bool:
    """Whether ``path`` lies in a scratch folder: gone when its dlcprof exits."""
    root, inside = Path(tempfile.gettempdir()).resolve(), Path(path).resolve()
    if not inside.is_relative_to(root) or inside == root:
        return False
    return inside.relative_to(root).parts[0].startswith(PREFIX)


def new_folder(name: str) -> Path:
    """A fresh subfolder (one per monitor or worker, so nothing collides)."""
    return Path(tempfile.mkdtemp(prefix=f"{name}-", dir=folder()))


def _remove_orphans() -> None:
    root = Path(tempfile.gettempdir())
    for path in root.glob(PREFIX + "*"):
        pid = path.name[len(PREFIX) :].split("-", 1)[0]
        if pid.isdigit() and not _alive(int(pid)):
            shutil.rmtree(path, ignore_errors=True)


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True  # another user's process
    return True
