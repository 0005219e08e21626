"""An item of advice: the change, the evidence it rests on, the predicted saving
and how it was predicted, and the known cost. ``options`` holds the run options
``dlcprof try`` applies to measure an item; empty where dlcprof cannot apply the
change itself (``try_why`` says why)."""

from __future__ import annotations

from dataclasses import field
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.session import Run

# `--calls N`: how many calls the compile must pay back within (the paper's "thousands").
DEFAULT_CALLS = 1000
CALLS_TOTAL = "compile and calls"
LATENCY = "steady latency"


@data(frozen=True)
class Prediction:
    what: str  # "compile" | "recompiles" (the sweep's transitions) | CALLS_TOTAL | LATENCY
    before_s: float
    after_s: float
    how: str  # how it was predicted, in words
    calls: int | None = None  # for CALLS_TOTAL: compile plus this many steady calls

    @property
    def saving_s(self) -> float:
        return self.before_s - self.after_s

    @property
    def change(self) -> float | None:
        """after / before - 1: -0.71 for a 71% saving."""
        return self.after_s / self.before_s - 1.0 if self.before_s > 0 else None


@data(frozen=True)
class Advice:
    rule: str  # "regional" | "mark-dynamic" | "graph-break" | "cache" | "no-payback" | ...
    title: str
    change: str  # what to change, in words
    evidence: list[str]
    cost: str  # the known cost of the change
    predicted: Prediction | None = None
    snippet: str = ""
    where: str = ""  # the user's file:line the snippet belongs at
    options: dict[str, Any] = field(default_factory=dict)  # what `dlcprof try` runs with
    try_why: str = ""  # why it cannot be tried for you, when options is empty
    predicted_why: str = ""  # why there is no prediction, when predicted is None


@data(frozen=True)
class AdviceList:
    run_id: str
    items: list[Advice]
    nothing: str | None  # "nothing to change: ..." when no item applies
    hidden: list[str]  # items left out as inside the noise, one line each


def _first_call_walls(run: Run) -> float | None:
    """torch's compilation_metrics of the first call's compiles (a sweep's excluded)."""
    walls = [
        c.wall_s
        for c in run.compiles.values()
        if c.wall_s is not None and not c.compile_id.startswith(ev.SWEEP)
    ]
    return sum(walls) if walls else None


def compile_seconds(run: Run) -> float | None:
    """The compile of the first call: first call minus a steady call, else torch's sum."""
    return run.benchmark.compile_s if run.benchmark is not None else _first_call_walls(run)


def compile_noise(run: Run) -> float:
    """The compile's measured uncertainty: its two accounts (first call minus a
    steady call, torch's compilation_metrics) differ by this much; 0 with one account."""
    walls = _first_call_walls(run)
    if run.benchmark is None or walls is None:
        return 0.0
    return abs(run.benchmark.compile_s - walls)


def predicted_text(p: Prediction | None, why: str = "") -> str:
    """ "−71% compile (8.10 s → 2.35 s)"."""
    if p is None:
        return text.na(why or "not predictable from this run")
    return (
        f"{text.signed_pct(p.change)} {p.what} ({text.secs(p.before_s)} → {text.secs(p.after_s)})"
    )
