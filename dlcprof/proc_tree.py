"""A process's descendants, as the kernel lists each thread's children
(``/proc/PID/task/TID/children``, Linux 3.5+ with CONFIG_PROC_CHILDREN).
Standard library only: read by dlcprof's monitors and by the probes inside
the program (its compile workers' CPU).

What it costs grows with the watched tree, not with the host: psutil's
``children(recursive=True)`` reads every process in /proc to learn its parent,
and each compiling process's sampler asks four times a second (eight ranks on a
host of a thousand processes: 32,000 reads a second, benchmarks/proc_tree.py).
``SUPPORTED`` is False where the kernel keeps no such lists; callers then scan
/proc as before.
"""

from __future__ import annotations

import os

_PROC = "/proc"
SUPPORTED = os.path.exists(f"{_PROC}/{os.getpid()}/task/{os.getpid()}/children")


def children(pid: int) -> list[int]:
    """The children of every thread of ``pid`` now; [] when it is gone. A child
    is listed under the thread that started it, so every thread is read."""
    out: list[int] = []
    try:
        tids = os.listdir(f"{_PROC}/{pid}/task")
    except OSError:
        return out
    for tid in tids:
        try:
            with open(f"{_PROC}/{pid}/task/{tid}/children", "rb") as f:
                out += map(int, f.read().split())
        except (OSError, ValueError):
            continue  # the thread ended meanwhile
    return out


def descendants(*roots: int) -> list[int]:
    """Every descendant of ``roots`` now, each once, nearest first, the roots
    left out (none found where not ``SUPPORTED``)."""
    out: list[int] = []
    seen = set(roots)
    frontier = list(roots)
    while frontier:
        found = [c for pid in frontier for c in children(pid) if c not in seen]
        found = list(dict.fromkeys(found))
        seen.update(found)
        out += found
        frontier = found
    return out
