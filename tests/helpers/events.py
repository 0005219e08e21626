"""Events the tests build by hand (dlcprof's, a profiler trace's), with the fields
no test is about filled in."""

from __future__ import annotations

import dataclasses
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


def kineto_op(cat: str, name: str, ts: float, dur: float, tid: int, **args: Any) -> dict:
    """One complete event ("ph": "X") of a torch.profiler (kineto) trace; a
    ``tid`` under 100 is a host thread of pid 4242, else a device stream."""
    return {
        "ph": "X",
        "cat": cat,
        "name": name,
        "pid": 4242 if tid < 100 else 0,
        "tid": tid,
        "ts": ts,
        "dur": dur,
        "args": args,
    }


def of_run(e: ev.Event, run_id: str) -> ev.Event:
    """``e`` as run ``run_id``'s, if it names a run (a recorded run played again)."""
    named: dict[str, Any] = {"run_id": run_id}
    return dataclasses.replace(e, **named) if getattr(e, "run_id", None) else e
