"""Atomic file writes: a reader sees the old file or the new one, never half.

The data goes to a temporary file in the same directory (so ``os.replace`` is
a rename within one file system), is fsynced, then renamed over the target.
On any failure the temporary file is removed and the old file is untouched.
"""

from __future__ import annotations

import errno
import os
import tempfile
from pathlib import Path

from dlcprof.report.errors import ReportError

__all__ = ["ReportError", "os_reason", "write_atomic"]


def os_reason(e: OSError) -> str:
    """A short human reason for an OSError (no path, no errno number)."""
    if e.errno == errno.ENOSPC:
        return "disk full"
    if e.errno == errno.EDQUOT:
        return "disk quota exceeded"
    if e.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if e.errno == errno.EROFS:
        return "read-only file system"
    if e.errno == errno.ENOENT:
        return "no such directory"
    if e.errno == errno.ENOTDIR:
        return "a parent path is not a directory"
    return (e.strerror or str(e)).lower()


def write_atomic(path: str | os.PathLike[str], data: str | bytes) -> None:
    """Replace ``path`` with ``data`` atomically; one-line ReportError on failure."""
    target = Path(path)
    payload = data.encode("utf-8") if isinstance(data, str) else data
    try:
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    except OSError as e:
        raise ReportError(f"cannot write {target}: {os_reason(e)}") from e
    try:
        with os.fdopen(fd, "wb") as f:
            f.write(payload)
            f.flush()
            os.fsync(f.fileno())
        # mkstemp creates 0600; give the file the usual permissions (umask).
        umask = os.umask(0)
        os.umask(umask)
        os.chmod(tmp, 0o666 & ~umask)
        os.replace(tmp, target)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            raise ReportError(f"cannot write {target}: {os_reason(e)}") from e
        raise
    _fsync_dir(target.parent)


def _fsync_dir(directory: Path) -> None:
    # Makes the rename itself durable; not possible everywhere (best effort).
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
