"""The torch side of the kernel reader (``trace_records/kernels.py``): which
names are aten ops, asked of ``torch.ops.aten``, for reading a backward
kernel's fused ops back out of its name."""

from __future__ import annotations

from collections.abc import Callable


def aten_op_exists() -> Callable[[str], bool]:
    """A predicate "is NAME an aten op" for reading ops back out of kernel names."""
    try:
        import torch

        aten = torch.ops.aten
    except Exception:  # noqa: BLE001
        return lambda _: False
    cache: dict[str, bool] = {}

    def is_op(name: str) -> bool:
        if name not in cache:
            try:
                getattr(aten, name)
                cache[name] = True
            except Exception:  # noqa: BLE001 - AttributeError / RuntimeError by version
                cache[name] = False
        return cache[name]

    return is_op
