"""Structured traces recorded from real runs (tests/fixtures/trace,
scripts/record_fixtures.py) replayed through the worker's pure dispatcher, and
what every replayed compile must hold."""

from __future__ import annotations

import json

from dlcprof import events as ev
from dlcprof.session import Run
from dlcprof.trace_records import kernels as K
from dlcprof.trace_records.dispatcher import TraceDispatcher
from dlcprof.worker.emit import ListEmitter
from helpers.paths import FIXTURES

TRACES = FIXTURES / "trace"

# aten ops named in the recorded kernels (a stand-in for torch.ops.aten lookups).
KNOWN_OPS = {
    "_log_softmax",
    "_log_softmax_backward_data",
    "arange",
    "eq",
    "expand",
    "view",
    "nll_loss_backward",
    "nll_loss_forward",
    "scalar_tensor",
    "sum",
    "threshold_backward",
    "gelu",
    "gelu_backward",
    "relu",
    "mm",
    "addmm",
    "copy_",
    "sub",
    "native_layer_norm",
}


def replay(name: str) -> list[ev.Event]:
    """The events the probes make of recorded run ``name`` (run id "r")."""
    sink = ListEmitter()
    kernels = K.KernelCollector(sink, "r", KNOWN_OPS.__contains__)
    dispatcher = TraceDispatcher(sink, "r", kernels)
    for line in (TRACES / f"{name}.jsonl").read_text().splitlines():
        rec = json.loads(line)
        dispatcher.feed(rec["metadata"], rec["payload"], rec["thread"])
    dispatcher.flush()
    return sink.events


# torch's compile wall leaves out a few ms of the outer `dynamo` phase.
OUTER_SLACK_S = 0.05
SLACK_S = 0.002


def outside_their_compile(run: Run) -> list[str]:
    """Phases that do not lie inside the span of the compile they are credited to."""
    out = []
    for c in run.compiles.values():
        assert c.start_t is not None and c.wall_s is not None, c.compile_id
        end = c.start_t + c.wall_s
        for p in c.phases:
            slack = OUTER_SLACK_S if p.name == "dynamo" else SLACK_S
            if p.start_t < c.start_t - slack or p.end_t > end + slack:
                out.append(
                    f"{c.compile_id}: {p.name} [{p.start_t:.3f}, {p.end_t:.3f}] "
                    f"outside [{c.start_t:.3f}, {end:.3f}]"
                )
    return out


# torch 2.15's break for a compiled LSTM, shortened: a delayed break whose cause
# and remedy are only in its explanation.
DELAYED_BREAK = (
    "Graph break in user code at /t/torch/_dynamo/external_utils.py:69\n"
    "Graph Break Reason: Encountered graph break when attempting to trace "
    "CALL_FUNCTION_EX: a variadic function call, e.g. f(*args):\n\n"
    "Unsupported function call (delayed)\n"
    "  Explanation: Dynamo determined that a graph break should occur when calling "
    "`L['fn']`. Reason: Dynamo does not support RNN, GRU, or LSTM. Set "
    "torch._dynamo.config.allow_rnn=True to enable experimental support for RNN, GRU, "
    "and LSTM in Dynamo\n\n\n"
    "  Developer debug context: source: LocalSource(local_name='fn', is_input=False)\n\n"
    " For more details about this graph break, please visit: "
    "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0148.html\n\n"
    "User code traceback:\n"
    '  File "/t/torch/_dynamo/external_utils.py", line 69, in inner\n'
)
