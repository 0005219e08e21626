"""The logs an import reads: a ``TORCH_TRACE`` log file, a folder of them (one
job, one per rank), or several folders (a job's nodes), each plain or ``.gz``.
Anything else is one line for the user (``ReportError``), before any log is read."""

from __future__ import annotations

import gzip
import itertools
import os
from pathlib import Path

from dlcprof.report.errors import ReportError
from dlcprof.trace_records.log_file import is_trace_log, open_log

_HEAD_BYTES = 1 << 16  # a trace record's first line is short; a binary file's may be endless


def _head(path: Path) -> str:
    """The file's first non-blank line (at most _HEAD_BYTES of it; "" for a
    ``.gz`` that does not decompress)."""
    try:
        with open_log(str(path)) as f:
            for _ in range(8):
                line = f.readline(_HEAD_BYTES)
                if not line or line.strip():
                    return line
    except (gzip.BadGzipFile, EOFError):
        return ""
    except OSError as e:
        raise ReportError(f"cannot read {path}: {e.strerror or e}") from e
    return ""


def find_logs(paths: list[str]) -> list[tuple[str, str]]:
    """(host, log path) of every log, in the order given. A folder's logs are
    the files in it whose first line is a trace record; ``host`` is the
    folder's name (a log does not name its host: a job's nodes are its folders)."""
    if not paths:
        raise ReportError("give a TORCH_TRACE log or folder (dlcprof import PATH... -o DIR)")
    out: list[tuple[str, str]] = []
    for given in paths:
        path = Path(given)
        if path.is_file():
            if not is_trace_log(_head(path)):
                raise ReportError(
                    f"{path} is not a TORCH_TRACE log: its first line is not a torch trace record"
                )
            out.append((path.resolve().parent.name, str(path)))
        elif path.is_dir():
            try:
                logs = sorted(p for p in path.iterdir() if _is_log(p))
            except OSError as e:
                raise ReportError(f"cannot read {path}: {e.strerror or e}") from e
            if not logs:
                raise ReportError(no_log_in(path))
            host = path.resolve().name
            out += [(host, str(p)) for p in logs]
        else:
            raise ReportError(f"{path}: no such file or folder")
    seen: set[str] = set()
    for _, p in out:
        real = os.path.realpath(p)
        if real in seen:
            raise ReportError(f"{p} is given twice: give each log or folder once")
        seen.add(real)
    return out


# A folder given by mistake may be a home folder: the hint looks so far, no further.
_SUBFOLDERS_LOOKED_AT = 64
_FILES_LOOKED_AT = 256  # in each subfolder
_NAMED = 8


def no_log_in(folder: Path, sessions: bool = False) -> str:
    """The line for a folder with no log in it (nor, with ``sessions``, a saved
    session), naming its folders that hold one: a job's folder given for its
    nodes', the folder reports are saved in for one of them."""
    what = (
        "no saved session (session.json) or TORCH_TRACE log" if sessions else "no TORCH_TRACE log"
    )
    try:
        subfolders = sorted(p for p in folder.iterdir() if p.is_dir())[:_SUBFOLDERS_LOOKED_AT]
    except OSError:
        subfolders = []
    holding = [
        p for p in subfolders if _holds_log(p) or (sessions and (p / "session.json").is_file())
    ]
    if not holding:
        return (
            f"{folder} holds {what} (torch writes "
            "dedicated_log_torch_trace_rank_N_*.log into the folder TORCH_TRACE names)"
        )
    if len(holding) == 1:
        return f"{folder} holds {what}, but its folder {holding[0]} does: give that"
    names = ", ".join(str(p) for p in holding[:_NAMED])
    more = f" and {len(holding) - _NAMED} more" if len(holding) > _NAMED else ""
    several = "" if sessions else ", or several for the nodes of one job"
    return f"{folder} holds {what}, but its folders {names}{more} do: give one of them{several}"


def _is_log(path: Path) -> bool:
    return path.is_file() and is_trace_log(_head(path))


def _holds_log(folder: Path) -> bool:
    try:
        return any(_is_log(p) for p in itertools.islice(folder.iterdir(), _FILES_LOOKED_AT))
    except (OSError, ReportError):  # a folder the hint cannot read is not named
        return False


def holds_trace(path: Path) -> bool:
    """A TORCH_TRACE log, or a folder with one and no saved session (what
    ``dlcprof replay`` imports on the fly)."""
    if path.is_file():
        return path.name != "session.json" and is_trace_log(_head(path))
    if not path.is_dir() or (path / "session.json").exists():
        return False
    return any(_is_log(p) for p in path.iterdir())
