"""Events the tests build by hand, with the fields no test is about filled in."""

from __future__ import annotations

from typing import Any

from dlcprof import events as ev

RUN_STARTED: dict[str, Any] = dict(
    run_id="r",
    target="t",
    workload="t",
    mode="default",
    dynamic="auto",
    backend="inductor",
    device="cpu",
    device_name="cpu",
    dtype="float32",
    size="default",
    cache="warm",
    threads=1,
    iters=20,
    torch_version="2.13.0+cpu",
)


def run_started(**fields: Any) -> ev.RunStarted:
    """A run's start: ``fields`` over the defaults above (no shapes unless given)."""
    return ev.RunStarted(**{**RUN_STARTED, "shapes": [], **fields})
