"""A session as ``dlcprof paper`` makes one, from recorded real runs (tests/fixtures,
tests/fixtures/paper).

The plan names the workloads of the recorded runs; its event goes ahead of
them, as the CLI and the TUI emit it.
"""

from __future__ import annotations

from typing import Any

from dlcprof import events as ev
from helpers.recorded import load_fixture

# (fixture, its role in the plan): warm benchmarks, a fresh-cache compile, the sweeps.
BENCHMARKS = ("pointwise_chain_allocator", "paper/gelu_mlp", "paper/tiny_ops")
FRESH = ("paper/pointwise_chain_fresh",)
SWEEPS = ("variable_length_static", "variable_length_dynamic")
WORKLOADS = ["pointwise-chain", "gelu-mlp", "tiny-ops"]


def plan_event(events: list[ev.Event], **overrides: Any) -> ev.PaperPlanned:
    fields: dict[str, Any] = {
        "workloads": list(WORKLOADS),
        "fresh": ["pointwise-chain"],
        "sweep": "variable-length",
        "sizes": [32, 64, 128, 192, 256],
        "quick": True,
        "size": "default",
        "device": "cpu",
    }
    fields.update(overrides)
    first = min((e.t for e in events), default=0.0)
    return ev.PaperPlanned(**fields, t=first - 1.0)


def paper_events(
    fixtures: tuple[str, ...] = BENCHMARKS + FRESH + SWEEPS, **plan: object
) -> list[ev.Event]:
    """The plan's event, then the recorded runs in order."""
    events = [e for name in fixtures for e in load_fixture(name)]
    return [plan_event(events, **plan), *events]
