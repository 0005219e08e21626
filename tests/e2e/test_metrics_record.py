"""A compile keeps its record when Dynamo's settings hold a function
(dlcprof/worker/probes/metrics_record.py): torch 2.11 loses it under the
graph-break hatch ``ignore_logging_functions``; every torch under a setting its
config copy does not leave out, as ``compiled_autograd_kwargs_override`` here."""

from __future__ import annotations

import pytest
import torch
import torch._dynamo.utils as dynamo_utils

from dlcprof import events as ev
from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes, metrics_record
from dlcprof.worker.probes import trace as trace_probe

# A setting whose value JSON cannot write (a function), which no compile here reads.
UNWRITABLE = {"compiled_autograd_kwargs_override": {"fn": len}}


def _step(x):
    return torch.sin(x) * 2


def _records(monkeypatch) -> list[ev.CompileFinished]:
    monkeypatch.setattr(
        dynamo_utils, metrics_record.CONFIG_FOR_LOGGING, dynamo_utils._get_dynamo_config_for_logging
    )
    sink = ListEmitter()
    uninstall = trace_probe.install(TraceDispatcher(sink, "r"), ProbeNotes(sink, "r"))
    assert uninstall is not None
    torch._dynamo.reset()
    try:
        with torch._dynamo.config.patch(**UNWRITABLE):
            with pytest.raises(TypeError):
                dynamo_utils._get_dynamo_config_for_logging()  # torch's own copy fails
            metrics_record.install()
            torch.compile(_step, backend="eager")(torch.ones(3))
    finally:
        uninstall()
        torch._dynamo.reset()
    return [e for e in sink.events if isinstance(e, ev.CompileFinished)]


def test_a_config_json_cannot_write_leaves_the_compiles_record(monkeypatch):
    (record,) = _records(monkeypatch)
    assert record.compile_id == "0/0" and record.metrics["co_name"] == "_step"
    assert record.graph_op_count == 2
