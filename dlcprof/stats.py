"""Order statistics shared across the process boundary: the worker times with
them and the figures split repetitions with them. Standard library only, so the
worker and the UI side both import it."""

from __future__ import annotations

import statistics
from collections.abc import Sequence


def median_iqr(values: Sequence[float]) -> tuple[float, float]:
    """The median and the interquartile range (the measured spread); one value
    has no spread (0.0), none has neither (nan, nan)."""
    if not values:
        return float("nan"), float("nan")
    med = statistics.median(values)
    if len(values) < 2:
        return med, 0.0
    q = statistics.quantiles(values, n=4, method="inclusive")
    return med, q[2] - q[0]
