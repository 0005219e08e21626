"""The cores a process may run on, as the process reports them."""

from __future__ import annotations

import os


def usable_cores() -> int | None:
    """The cores this process may run on: its affinity, as Inductor counts them
    (a container or ``taskset`` gives fewer than the machine has)."""
    try:
        return len(os.sched_getaffinity(0))
    except (AttributeError, OSError):  # not on Linux
        return os.cpu_count()
