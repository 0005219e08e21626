"""Out of memory, said as such: which memory ran out and what to try.

Python raises ``MemoryError`` when the host refuses an allocation (a memory
limit, RLIMIT_AS); torch's CPU allocator raises a RuntimeError ("can't
allocate memory"), CUDA's a ``torch.OutOfMemoryError``. A worker the kernel's
OOM killer ends says nothing: the runner names that one (``runner.py``).
"""

from __future__ import annotations

HOST = " (the host ran out of memory: try --size small, a smaller model, or free memory)"
GPU = " (the GPU ran out of memory: try --size small, a smaller batch, or --dtype bfloat16)"


def oom_hint(e: BaseException) -> str:
    """The second half of a one-line error when ``e`` is an out-of-memory error, else ""."""
    text = str(e)
    if type(e).__name__ == "OutOfMemoryError" or "CUDA out of memory" in text:
        return GPU
    if isinstance(e, MemoryError) or "can't allocate memory" in text:
        return HOST
    return ""
