"""Which malloc a process runs with, and how to hold it steady.

Eager PyTorch allocates a fresh buffer for every op's output. With glibc's
default, a multi-MB buffer comes either from the heap or from fresh mmap
pages (page faults, zeroing), and which one depends on the process's history:
glibc raises its mmap threshold as such buffers are freed and trims the heap
top past twice that, so eager CPU time can differ between two processes
running the same code (docs/torch-notes.md §7). Pinning the mmap and trim
thresholds keeps every buffer on the heap with its pages mapped: the
allocator held steady.

Standard library only: the worker pins the thresholds (``pin``), ``dlcprof
doctor`` says what a process runs with (``current``) and what to set.
"""

from __future__ import annotations

import ctypes
import os
from pathlib import Path

from dlcprof.data import data

PIN_BYTES = 1 << 30
STEADY_MIN_BYTES = 32 << 20  # glibc's DEFAULT_MMAP_THRESHOLD_MAX on 64-bit
# The same pin for a process of one's own, set before it starts.
STEADY_ENV = {"MALLOC_MMAP_THRESHOLD_": str(PIN_BYTES), "MALLOC_TRIM_THRESHOLD_": str(PIN_BYTES)}
# Replacement mallocs a process may run with (LD_PRELOAD, or linked in).
REPLACEMENTS = ("jemalloc", "tcmalloc", "mimalloc")
_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD = -1, -3  # glibc's <malloc.h>
_LIB_DIRS = (
    "/usr/lib/x86_64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
    "/usr/lib64",
    "/usr/lib",
    "/usr/local/lib",
)


class CannotPin(Exception):
    """The thresholds cannot be pinned in this process; str() says why."""


@data(frozen=True)
class Malloc:
    """The malloc a process runs with."""

    name: str  # "glibc" | "jemalloc" | "tcmalloc" | "mimalloc" | "unknown"
    version: str | None  # glibc's
    # glibc: the STEADY_ENV variables the process started with (an empty one
    # counts: glibc reads it as 0, every buffer from fresh pages).
    thresholds: tuple[tuple[str, str], ...] = ()

    @property
    def label(self) -> str:
        """What the timed calls ran with, in a few words."""
        if self.name == "glibc":
            glibc = f"glibc {self.version}" if self.version else "glibc"
            if not self.thresholds:
                return f"{glibc}, default thresholds"
            return f"{glibc}, " + " ".join(f"{k}={v!r}" for k, v in self.thresholds)
        if self.name == "unknown":
            return "the C library's malloc (not glibc)"
        return f"{self.name} (preloaded)"

    @property
    def steady(self) -> bool:
        """Held steady already: both thresholds set above glibc's own ceiling for
        its adaptive threshold (32 MiB), so no history moves the timing."""
        values = dict(self.thresholds)
        return self.name == "glibc" and all(
            values.get(k, "").isdigit() and int(values[k]) >= STEADY_MIN_BYTES for k in STEADY_ENV
        )


def glibc_version() -> str | None:
    try:
        text = os.confstr("CS_GNU_LIBC_VERSION")  # "glibc 2.36"; absent elsewhere
    except (ValueError, OSError, AttributeError):
        return None
    return text.split()[-1] if text and text.startswith("glibc") else None


def _replacement() -> str | None:
    """A replacement malloc this process runs with: preloaded, or mapped in."""
    preload = os.environ.get("LD_PRELOAD", "")
    try:
        maps = Path("/proc/self/maps").read_text()
    except OSError:
        maps = ""
    for name in REPLACEMENTS:
        if name in preload or f"lib{name}" in maps:
            return name
    return None


def current() -> Malloc:
    """The malloc this process (and a worker it starts with its environment) runs with."""
    other = _replacement()
    version = glibc_version()
    if other is not None:
        return Malloc(other, version)
    if version is None:
        return Malloc("unknown", None)
    thresholds = tuple((k, os.environ[k]) for k in STEADY_ENV if k in os.environ)
    return Malloc("glibc", version, thresholds)


def pin() -> str:
    """Pin glibc's mmap and trim thresholds in this process, from now on; returns
    how, in a few words. Raises CannotPin with the reason where it cannot."""
    m = current()
    if m.name != "glibc":
        raise CannotPin(f"the worker's malloc is {m.label}: mallopt pins glibc's malloc only")
    try:
        libc = ctypes.CDLL(None)  # the process's own symbols: glibc's mallopt
        ok = libc.mallopt(_M_MMAP_THRESHOLD, PIN_BYTES) and libc.mallopt(
            _M_TRIM_THRESHOLD, PIN_BYTES
        )
    except (OSError, AttributeError) as e:
        raise CannotPin(f"cannot call glibc's mallopt: {e}") from e
    if not ok:
        raise CannotPin("glibc refused mallopt(M_MMAP_THRESHOLD/M_TRIM_THRESHOLD, 1 GiB)")
    return f"glibc {m.version} mmap/trim thresholds pinned at 1 GiB (mallopt)"


def installed() -> dict[str, str]:
    """Replacement mallocs on this machine that LD_PRELOAD could load: name -> path."""
    found: dict[str, str] = {}
    for name in REPLACEMENTS:
        stems = [f"lib{name}", f"lib{name}_minimal"]
        for d in _LIB_DIRS:
            hits = sorted(p for s in stems for p in Path(d).glob(f"{s}.so*") if p.is_file())
            if hits:
                found[name] = str(hits[0])
                break
    return found
