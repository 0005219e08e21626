"""The worker's probes on payloads recorded from real runs (no compile here).

``tests/fixtures/trace/*.jsonl`` hold the raw structured-trace records the
probes read during real runs (scripts/record_fixtures.py): replaying them
through the pure dispatcher must give the same events the live worker gave.
"""

from __future__ import annotations

import functools
import getpass
import json
import os
import re
import sys
import threading
import traceback
import types
from pathlib import Path
from typing import Any

import pytest
from helpers.paths import REPO
from helpers.trace import DELAYED_BREAK, KNOWN_OPS, TRACES, replay
from helpers.worker import nesting_problems, outermost

from dlcprof import events as ev
from dlcprof.stats import median_iqr
from dlcprof.trace_records import kernels as K
from dlcprof.trace_records import payloads
from dlcprof.trace_records.dispatcher import DYNAMO_GRAPH, TraceDispatcher
from dlcprof.worker.emit import Emitter, ListEmitter
from dlcprof.worker.probes import ProbeNotes, provenance
from dlcprof.worker.probes import trace as T
from dlcprof.worker.run import one_line


def of(events: list[ev.Event], cls: type) -> list:
    return [e for e in events if isinstance(e, cls)]


# --- recorded runs replayed ------------------------------------------------------------


def test_pointwise_chain_replay_gives_nested_phases_one_fused_kernel():
    events = replay("pointwise_chain")
    ended = of(events, ev.PhaseEnded)
    assert len(of(events, ev.PhaseStarted)) == len(ended) > 20
    assert nesting_problems(ended) == []
    names = {p.name for p in ended}
    assert {"dynamo", "backend_compile", "inductor_compile", "GraphLowering.run"} <= names
    assert {"Scheduler.__init__", "Scheduler.codegen"} <= names
    (rec,) = of(events, ev.CompileFinished)
    (top,) = [p for p in outermost(ended) if p.compile_id == rec.compile_id]
    assert top.duration_s == pytest.approx(rec.wall_s, rel=0.1)
    assert rec.compile_id == "0/0" and not rec.is_backward and rec.fail_type is None
    (kernel,) = of(events, ev.KernelGenerated)
    assert kernel.kind == "pointwise" and kernel.graph == "inference" and kernel.order == 0
    assert len(kernel.fused_ops) >= 8 and len(set(kernel.fused_ops)) == len(kernel.fused_ops)
    assert kernel.fused_ops[:2] == ["aten.sin", "aten.cos"]  # in graph order
    assert kernel.source.startswith("#include") and "kernel(" in kernel.source
    assert kernel.source_lines and all(":" in line for line in kernel.source_lines)
    # Kernels are emitted before the record of the compile that made them.
    assert events.index(kernel) < events.index(rec)
    # inductor_compile's End carries the FX cache state (graph caches were off here).
    assert any(p.name == "inductor_compile" and p.cache_state for p in ended)


def test_training_step_replay_has_forward_and_lazy_backward_kernels():
    events = replay("training_step")
    (gb,) = of(events, ev.GraphBroken)
    assert gb.reason == "Unsupported Tensor.backward() call"
    assert re.search(r"/training_step\.py:\d+$", gb.location), gb.location
    records = of(events, ev.CompileFinished)
    backward = [r for r in records if r.is_backward]
    assert len(backward) == 1 and backward[0].compile_id == "0/0 (bwd)" and backward[0].wall_s > 0
    kernels = of(events, ev.KernelGenerated)
    fwd = [k for k in kernels if k.graph == "forward"]
    bwd = [k for k in kernels if k.graph == "backward"]
    assert fwd and bwd
    assert [k.name for k in fwd if k.kind == "extern"] == ["extern_kernels.addmm"] * 3
    # The lazy backward has no node mappings in torch 2.13: ops come from names.
    for k in bwd:
        assert k.fused_ops, k.name
    thr = [k for k in bwd if "threshold_backward" in k.name]
    assert thr and all("aten.threshold_backward" in k.fused_ops for k in thr)
    assert all(k.kind == "reduction" for k in bwd if k.name.startswith("cpp_fused_sum"))


def test_recompile_limit_replay_reports_recompiles_and_the_limit_once():
    events = replay("recompile_limit")
    reasons = of(events, ev.RecompileTriggered)
    # The worker reset Dynamo before its sweep: the raw trace holds compile 0/0
    # twice, and the second, with the recompiles after it, is the next generation's.
    assert [r.compile_id for r in of(events, ev.CompileFinished)][:2] == ["0/0", "reset1:0/0"]
    assert [r.compile_id for r in reasons] == ["reset1:0/1", "reset1:0/2"]
    assert "size mismatch at index 0" in reasons[0].reason
    failed = [r for r in of(events, ev.CompileFinished) if r.fail_type]
    assert len(failed) == 1 and "recompile limit" in failed[0].fail_reason.lower()
    (hit,) = of(events, ev.RecompileLimitHit)
    assert hit.function == "scale"


def _compiled(d: TraceDispatcher, frame: int, chromium: bool) -> None:
    """Records of one frame compile of ``frame``/0: a newer torch's (the ``dynamo``
    phase begins it) or an older torch's (``dynamo_start``, no phases)."""
    md = {"frame_id": frame, "frame_compile_id": 0, "attempt": 0}
    phase = {"name": "dynamo", "ts": 1e6, "args": {"compile_id": f"{frame}/0"}}
    if chromium:
        d.feed({"chromium_event": {}, **md}, json.dumps({**phase, "ph": "B"}), 1)
    else:
        d.feed({"dynamo_start": {"stack": []}, **md}, None, 1)
    d.feed({"compilation_metrics": {"duration_us": 10}, **md}, None, 1)
    if chromium:
        d.feed({"chromium_event": {}, **md}, json.dumps({**phase, "ph": "E", "ts": 2e6}), 1)


@pytest.mark.parametrize("chromium", [True, False], ids=["newer torch", "older torch"])
def test_a_compile_id_used_again_after_a_reset_is_a_compile_of_its_own(chromium):
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    for frame in (0, 1, 0, 0):  # 1/0 follows 0/0 in one generation; 0/0 again: a reset
        _compiled(d, frame, chromium)
    d.new_generation(ev.SWEEP)  # the sweep's own reset: its ids start afresh
    for frame in (0, 0):
        _compiled(d, frame, chromium)
    assert [r.compile_id for r in of(sink.events, ev.CompileFinished)] == [
        "0/0",
        "1/0",
        "reset1:0/0",
        "reset2:0/0",
        "sweep:0/0",
        "sweep:reset3:0/0",
    ]


def test_an_older_torchs_break_whose_frame_never_resumed_has_no_line():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    record = {
        "co_name": "fn",
        "co_filename": "/w/train.py",
        "restart_reasons": ["'call_method UserDefinedObjectVariable(X) f'", "<class 'E'>"],
    }
    d.feed({"compilation_metrics": record, "frame_id": 0, "frame_compile_id": 0}, None, 1)
    assert not of(sink.events, ev.GraphBroken)  # its line comes with the resumed frame
    d.flush()
    (broken,) = of(sink.events, ev.GraphBroken)
    assert (broken.compile_id, broken.reason, broken.location) == (
        "0/0",
        "call_method UserDefinedObjectVariable(X) f",
        "",
    )


def test_limit_warning_and_metrics_record_say_it_once():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    warning = (
        "torch._dynamo hit config.recompile_limit (2)\n"
        "   function: 'lim' (/tmp/exp/cap2.py:41)\n"
        "   last reason: 6/1: tensor 'x' size mismatch at index 0. expected 5, actual 7"
    )
    d.on_limit_warning(warning)
    d.feed(
        {"compilation_metrics": {"compile_id": "6/0", "co_name": "lim", "duration_us": 10}},
        None,
        1,
    )
    d.feed(
        {
            "compilation_metrics": {
                "compile_id": "6/2",
                "fail_type": "Unsupported",
                "fail_reason": "Dynamo recompile limit exceeded\n  Explanation: ...",
            }
        },
        None,
        1,
    )
    (hit,) = of(sink.events, ev.RecompileLimitHit)
    assert (hit.function, hit.limit) == ("lim", 2)
    assert d.snapshot().limit_hits == 1 and d.snapshot().failures == 1
    d.on_limit_warning("some other warning")
    assert len(of(sink.events, ev.RecompileLimitHit)) == 1


def test_graph_breaks_replay_locates_both_breaks():
    events = replay("graph_breaks")
    breaks = of(events, ev.GraphBroken)
    assert [b.compile_id for b in breaks] == ["0/0", "1/0"]
    assert breaks[0].reason == "Data-dependent branching"
    assert "item()" in breaks[1].reason
    src = (REPO / "workloads" / "graph_breaks.py").name
    assert all(b.location.split("/")[-1].startswith(f"{src}:") for b in breaks)
    assert all(b.hints for b in breaks)
    assert [r.compile_id for r in of(events, ev.CompileFinished)] == ["0/0", "1/0", "2/0"]
    assert all(r.cache == "hit" for r in of(events, ev.CompileFinished))


def test_compile_ids_get_the_generation_prefix_after_a_reset():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    begin = {"name": "dynamo", "ts": 1e15, "ph": "B", "args": {"compile_id": "0/0"}}
    end = {**begin, "ph": "E", "ts": 1e15 + 5e5}
    md = {"chromium_event": {}, "frame_id": 0, "frame_compile_id": 0}
    d.feed(md, json.dumps(begin), 7)
    d.feed(md, json.dumps(end), 7)
    d.new_generation("sweep:")
    d.feed(md, json.dumps(begin), 7)
    d.feed(md, json.dumps(end), 7)
    ids = [p.compile_id for p in of(sink.events, ev.PhaseEnded)]
    assert ids == ["0/0", "sweep:0/0"]
    assert of(sink.events, ev.PhaseEnded)[0].duration_s == pytest.approx(0.5)


def test_pool_thread_phases_borrow_the_compile_in_flight():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    md = {"chromium_event": {}, "frame_id": 3, "frame_compile_id": 1}
    pool: dict[str, Any] = {"chromium_event": {}}
    d.feed(md, json.dumps({"name": "dynamo", "ts": 1, "ph": "B", "args": {}}), 1)
    d.feed(pool, json.dumps({"name": "compile_file", "ts": 2, "ph": "B", "args": {}}), 2)
    d.feed(pool, json.dumps({"name": "compile_file", "ts": 3, "ph": "E", "args": {}}), 2)
    # An End without its Begin (the probe came late) is dropped, not invented.
    d.feed(pool, json.dumps({"name": "late", "ts": 4, "ph": "E", "args": {}}), 2)
    (cf,) = of(sink.events, ev.PhaseEnded)
    assert (cf.name, cf.compile_id, cf.thread) == ("compile_file", "3/1", 2)


def test_a_bad_record_is_reported_once_and_never_raises():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    for _ in range(3):
        d.feed({"create_symbol": "not a dict"}, None, 1)
    logs = of(sink.events, ev.LogEmitted)
    assert len(logs) == 1 and logs[0].source == "probe"


# --- pure parsers -----------------------------------------------------------------------


def test_recompile_reasons_bare_line_or_json_list():
    assert payloads.parse_recompile_reasons("0/0: tensor 'x' size mismatch") == [
        "0/0: tensor 'x' size mismatch"
    ]
    assert payloads.parse_recompile_reasons('["0/1: a", "0/0: b"]') == ["0/1: a", "0/0: b"]
    assert payloads.parse_recompile_reasons(None) == []


def test_graph_break_parser_falls_back_to_the_last_user_frame():
    old_style = (
        "Graph break: call_method UserDefinedObjectVariable\n"
        "User code traceback:\n"
        '  File "/a/model.py", line 3, in outer\n    inner()\n'
        '  File "/a/model.py", line 9, in inner\n    x.item()\n'
    )
    info = payloads.parse_graph_break(old_style)
    assert info.location == "/a/model.py:9"
    assert info.reason == "Graph break: call_method UserDefinedObjectVariable"


def test_a_break_inside_an_autograd_function_is_named_by_its_type_not_the_hop():
    """TRL's chunked log-prob kernel (torch 2.13): Dynamo adds the higher-order
    op's name after the break's type, which stays the catalogue's title."""
    payload = (
        "Graph break in user code at /site-packages/trl/kernels/chunked_logprob.py:356\n"
        "Graph Break Reason: Encountered graph break when attempting to trace "
        "CALL_FUNCTION_EX: a variadic function call, e.g. f(*args):\n\n"
        "Attempted to call op with non-contiguous `out=` tensor\n"
        "  Higher Order Operator: autograd.Function\n"
        "  Explanation: Dynamo does not support this.\n\n"
        " For more details about this graph break, please visit: "
        "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0242.html\n"
    )
    info = payloads.parse_graph_break(payload)
    assert info.reason == "Attempted to call op with non-contiguous `out=` tensor"
    assert info.gb_id == "GB0242"


def test_compile_wall_time_and_cache_state():
    assert payloads.compile_wall_s({"duration_us": 1_500_000}) == 1.5
    assert payloads.compile_wall_s({"entire_frame_compile_time_s": 0.25}) == 0.25
    assert payloads.combine_cache_states(["hit", "hit"]) == "hit"
    assert payloads.combine_cache_states(["hit", "miss"]) == "miss"
    assert payloads.combine_cache_states(["bypass"]) == "bypass"
    assert payloads.combine_cache_states([]) is None


TRITON_WRAPPER = """\
# AOT ID: ['0_inference']
async_compile = AsyncCompile()

# kernel path: /tmp/torchinductor/ab/cabc.py
triton_per_fused_sum_0 = async_compile.triton('triton_per_fused_sum_0', '''
import triton
@triton.jit
def triton_per_fused_sum_0(in_ptr0, out_ptr0, xnumel, r0_numel):
    pass
''', device_str='cuda')

triton_poi_fused_add_relu_1 = async_compile.triton('triton_poi_fused_add_relu_1', '''
@triton.jit
def triton_poi_fused_add_relu_1(in_out_ptr0, xnumel):
    pass
''', device_str='cuda')

async_compile.wait(globals())

def call(args):
    arg0_1, arg1_1 = args
    with torch.cuda._DeviceGuard(0):
        buf0 = empty_strided_cuda((8, 8), (8, 1), torch.float32)
        # Topologically Sorted Source Nodes: [matmul], Original ATen: [aten.mm]
        extern_kernels.mm(arg0_1, arg1_1, out=buf0)
        buf1 = empty_strided_cuda((8, ), (1, ), torch.float32)
        # Topologically Sorted Source Nodes: [add, relu], Original ATen: [aten.add, aten.relu]
        stream0 = get_raw_stream(0)
        triton_poi_fused_add_relu_1.run(buf0, 64, stream=stream0)
        triton_per_fused_sum_0.run(buf0, buf1, 8, 8, stream=stream0)
        buf2 = torch.ops.mkl._mkl_linear.default(buf1, arg0_1)
    return (buf1, buf2, )

def benchmark_compiled_module(args, times=10, repeat=10):
    return print_performance(fn, times=times, repeat=repeat)
"""


def test_triton_style_wrapper_kinds_order_and_externs():
    kernels = K.build_kernels(K.GraphPayloads(output_code=TRITON_WRAPPER))
    assert [(k.name, k.kind, k.order) for k in kernels] == [
        ("extern_kernels.mm", "extern", 0),
        ("triton_poi_fused_add_relu_1", "pointwise", 1),
        ("triton_per_fused_sum_0", "reduction", 2),
        ("torch.ops.mkl._mkl_linear.default", "extern", 3),
    ]
    assert kernels[0].fused_ops == ["aten.mm"]
    assert kernels[1].fused_ops == ["aten.add", "aten.relu"]  # from the wrapper comment
    assert kernels[3].fused_ops == ["mkl._mkl_linear"]
    assert "triton.jit" in kernels[2].source


def test_kernel_kind_heuristics():
    assert K.kernel_kind("triton_tem_fused_mm_0", "", [], False) == "template"
    assert K.kernel_kind("cpp_fused_mm_0", "cpp_CppMicroGemm micro_gemm<...>", [], False) == (
        "template"
    )
    assert K.kernel_kind("cpp_fused_x_0", "float tmp_acc0 = 0;", [], False) == "reduction"
    assert K.kernel_kind("cpp_fused_x_0", "", ["aten.var_mean"], False) == "reduction"
    assert K.kernel_kind("cpp_fused_x_0", "out[i] = in[i];", ["aten.add"], False) == "pointwise"
    assert K.kernel_kind("x", "", [], True) == "extern"


def test_ops_from_kernel_name_splits_greedily():
    name = "cpp_fused__log_softmax__log_softmax_backward_data_nll_loss_forward_3"
    assert K.ops_from_kernel_name(name, KNOWN_OPS.__contains__) == [
        "aten._log_softmax",
        "aten._log_softmax_backward_data",
        "aten.nll_loss_forward",
    ]
    assert K.ops_from_kernel_name("extern_kernels.mm", KNOWN_OPS.__contains__) == []


def test_stack_traces_become_the_line_of_each_op():
    outer = '  File "/w/train.py", line 40, in step\n    loss = model(x)\n'
    text = json.dumps(
        {
            "k:1": [
                outer + '  File "/w/m.py", line 12, in f\n    b = a + 1\n        ^^^^^\n',
                outer + '  File "/w/m.py", line 3, in f\n    a = x.sin()\n',
                outer + '  File "/w/m.py", line 12, in f\n    b = a + 1\n',
            ]
        }
    )
    # The innermost frame of each node's trace, in node order; the call site
    # every op of the model shares is not a source line of this kernel.
    assert K.parse_kernel_stack_traces(text) == {
        "k:1": ["/w/m.py:12 b = a + 1", "/w/m.py:3 a = x.sin()"]
    }


# --- the torch adapters and the writer ---------------------------------------------------


@pytest.mark.parametrize("beside", [False, True], ids=["alone", "beside-another-handler"])
def test_trace_handler_sits_first_and_receives_records(beside: bool, monkeypatch):
    """Alone on torch's trace logger, the handler takes each record straight
    from ``trace_log.debug`` (no LogRecord made); beside another handler,
    through Logger as before, and both see it. Uninstalled, Logger's own
    ``debug`` is back."""
    import logging

    torch_logging = pytest.importorskip("torch._logging")
    from torch._logging._internal import trace_log

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.records: list[logging.LogRecord] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.records.append(record)

    other = Kept()
    made: list[logging.LogRecord] = []
    factory = logging.getLogRecordFactory()

    def counting(*args: Any, **kwargs: Any) -> logging.LogRecord:
        made.append(factory(*args, **kwargs))
        return made[-1]

    # Without torch's placeholder, which leaves at its first record (no TORCH_TRACE).
    monkeypatch.setattr(trace_log, "handlers", [])
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    uninstall = T.install(d, ProbeNotes(sink, "r"))
    assert uninstall is not None
    if beside:
        trace_log.addHandler(other)
    logging.setLogRecordFactory(counting)
    try:
        assert isinstance(trace_log.handlers[0], T._TraceHandler)
        torch_logging.trace_structured(
            "artifact",
            metadata_fn=lambda: {"name": "recompile_reasons", "encoding": "string"},
            payload_fn=lambda: "0/0: tensor 'x' size mismatch at index 0",
        )
    finally:
        logging.setLogRecordFactory(factory)
        trace_log.removeHandler(other)
        uninstall()
    assert not any(isinstance(h, T._TraceHandler) for h in trace_log.handlers)
    assert "debug" not in vars(trace_log)
    (rc,) = of(sink.events, ev.RecompileTriggered)
    assert rc.reason.startswith("0/0: tensor 'x'")
    # Ours only: in a suite, records of another test's leftovers may come meanwhile.
    ours = [r for r in made if getattr(r, "payload", None) == rc.reason]
    assert len(ours) == (1 if beside else 0)
    seen = [r for r in other.records if getattr(r, "payload", None) == rc.reason]
    assert seen == (ours if beside else [])


@pytest.mark.parametrize("beside", [False, True], ids=["alone", "beside-another-handler"])
def test_records_nobody_reads_are_not_made_while_the_handler_listens_alone(
    beside: bool, monkeypatch
):
    """torch builds a record's payload before any handler sees it: alone, the
    probe has torch make only the records the dispatcher reads (an artifact
    judged by the name its metadata gives); beside another handler, every one,
    which that handler may want. Bound where torch's modules hold it by name."""
    import logging

    import torch._logging as torch_logging
    import torch._subclasses.meta_utils as meta_utils
    from torch._logging._internal import trace_log

    built: list[str] = []

    def payload(name: str):
        def build() -> str:
            built.append(name)
            return f"{name} payload"

        return build

    monkeypatch.setattr(trace_log, "handlers", [])
    sink = ListEmitter()
    uninstall = T.install(TraceDispatcher(sink, "r"), ProbeNotes(sink, "r"))
    assert uninstall is not None
    other = logging.NullHandler()
    if beside:
        trace_log.addHandler(other)
    try:
        assert meta_utils.trace_structured is torch_logging.trace_structured
        meta_utils.trace_structured("describe_tensor", payload_fn=payload("describe_tensor"))
        torch_logging.trace_structured(
            "artifact",
            metadata_fn=lambda: {"name": "fx_graph_runnable", "encoding": "string"},
            payload_fn=payload("fx_graph_runnable"),
        )
        torch_logging.trace_structured(
            "artifact",
            lambda: {"name": "recompile_reasons", "encoding": "string"},
            payload_fn=payload("recompile_reasons"),
        )
    finally:
        trace_log.removeHandler(other)
        uninstall()
    wanted = ["recompile_reasons"]
    assert built == (["describe_tensor", "fx_graph_runnable", *wanted] if beside else wanted)
    (rc,) = of(sink.events, ev.RecompileTriggered)
    assert rc.reason == "recompile_reasons payload"


@pytest.mark.parametrize("unread", [frozenset(), frozenset({DYNAMO_GRAPH})], ids=["read", "unread"])
def test_a_dynamo_graph_is_printed_only_for_a_host_that_reads_it(unread, monkeypatch):
    """The printed Dynamo graph is for the kernel profile's replay (the worker's
    run): a dispatcher that leaves it unread has torch not print it at all."""
    import torch._logging as torch_logging
    from torch._guards import CompileId
    from torch._logging._internal import trace_log

    printed: list[str] = []
    monkeypatch.setattr(trace_log, "handlers", [])
    sink = ListEmitter()
    kernels = K.KernelCollector(sink, "r", lambda op: True)
    dispatcher = TraceDispatcher(sink, "r", kernels, unread=unread)
    uninstall = T.install(dispatcher, ProbeNotes(sink, "r"))
    assert uninstall is not None

    def graph() -> str:
        printed.append("graph")
        return "def forward(self, x): ..."

    try:
        torch_logging.trace_structured(
            DYNAMO_GRAPH,
            lambda: {"sizes": {}},
            payload_fn=graph,
            compile_id=CompileId(frame_id=0, frame_compile_id=0),
        )
    finally:
        uninstall()
    assert printed == ([] if unread else ["graph"])
    assert kernels.dynamo_graphs == ({} if unread else {"0/0": "def forward(self, x): ..."})


def _same(x: object) -> object:
    return x


def _installed_feeding(monkeypatch) -> tuple[ListEmitter, list[object], Any]:
    """The trace probe alone on torch's logger (no placeholder), its
    dispatcher's sink, each payload fed to it, and the uninstall."""
    from torch._logging._internal import trace_log

    fed: list[object] = []
    monkeypatch.setattr(trace_log, "handlers", [])
    sink = ListEmitter()
    dispatcher = TraceDispatcher(sink, "r")
    feed = dispatcher.feed

    def feeding(md: dict[str, Any], payload: payloads.Payload, *rest: Any) -> None:
        fed.append(payload)
        feed(md, payload, *rest)

    monkeypatch.setattr(dispatcher, "feed", feeding)
    uninstall = T.install(dispatcher, ProbeNotes(sink, "r"))
    assert uninstall is not None
    return sink, fed, uninstall


@pytest.mark.parametrize("beside", [False, True], ids=["alone", "beside-another-handler"])
def test_a_phase_event_reaches_the_dispatcher_as_torch_made_it(beside: bool, monkeypatch):
    """Alone, a phase's event is handed over as the dict torch made, past
    trace_structured: not JSON-encoded by Python's indenting encoder, hashed and
    parsed back; beside another handler, torch's record (its JSON payload) as
    before. The same phase of the same compile either way, and torch's event is
    left as it was."""
    import logging

    import torch._logging as torch_logging
    from torch._guards import CompileContext, CompileId, compile_context
    from torch._logging._internal import trace_log

    class Kept(logging.Handler):
        def __init__(self) -> None:
            super().__init__(logging.DEBUG)
            self.payloads: list[object] = []

        def emit(self, record: logging.LogRecord) -> None:
            self.payloads.append(getattr(record, "payload", None))

    sink, fed, uninstall = _installed_feeding(monkeypatch)
    other = Kept()
    if beside:
        trace_log.addHandler(other)
    events = [
        {"name": "inductor_compile", "ph": ph, "ts": ts, "args": {}, "pid": 1}
        for ph, ts in (("B", 1_000_000), ("E", 3_500_000))
    ]
    kept = json.dumps(events)
    # The compile in progress names the phase (its event does not): the record's
    # metadata as torch's trace_structured makes it, either way.
    compiling = CompileContext(CompileId(frame_id=3, frame_compile_id=1))
    try:
        with compile_context(compiling):
            for e in events:
                torch_logging.trace_structured(
                    "chromium_event", payload_fn=functools.partial(_same, e)
                )
    finally:
        trace_log.removeHandler(other)
        uninstall()
    (ended,) = of(sink.events, ev.PhaseEnded)
    assert (ended.name, ended.compile_id, ended.duration_s) == ("inductor_compile", "3/1", 2.5)
    if beside:
        assert [json.loads(str(p)) for p in fed] == events
        assert other.payloads == fed
    else:
        assert all(p is e for p, e in zip(fed, events, strict=True))
    assert json.dumps(events) == kept


def _log_cache_lookup(cache_info: dict[str, Any], shape: str) -> None:
    """A cache layer's record, its payload_fn as torch's three cache sites write
    it ("lambda"), or of another shape."""
    import torch._logging as torch_logging

    payload_fn = (
        (lambda: json.dumps(cache_info))
        if shape == "lambda"
        else functools.partial(json.dumps, cache_info)
    )
    torch_logging.trace_structured(
        "artifact",
        metadata_fn=lambda: {"name": "fx_graph_cache_hit", "encoding": "json"},
        payload_fn=payload_fn,
    )


@pytest.mark.parametrize(
    ("beside", "shape"),
    [(False, "lambda"), (True, "lambda"), (False, "other")],
    ids=["alone", "beside-another-handler", "another-payload-fn"],
)
def test_a_cache_lookup_reaches_the_dispatcher_as_the_dict_torch_would_encode(
    beside: bool, shape: str, monkeypatch
):
    """Alone, a cache lookup's record is handed over as the dict its payload_fn
    JSON-encodes (~75 KB of key components in a real lookup), which is then not
    encoded, hashed and parsed back; beside another handler, or from a
    payload_fn of another shape, torch's record as before. The same lookup is
    read either way."""
    import logging

    from torch._guards import CompileContext, CompileId, compile_context
    from torch._logging._internal import trace_log

    sink, fed, uninstall = _installed_feeding(monkeypatch)
    other = logging.NullHandler()
    if beside:
        trace_log.addHandler(other)
    cache_info = {
        "key": "fabc",
        "cache_state": "hit",
        "time_saved_ns": 2_000_000,
        "components": [
            "[pq2ozyh5hn] gm: torch.ops.aten.mm(x, y)",
            "[kxd3wlam3z] fx_kwargs[cpp_wrapper]: False",
        ],
    }
    try:
        with compile_context(CompileContext(CompileId(frame_id=2, frame_compile_id=0))):
            _log_cache_lookup(cache_info, shape)
    finally:
        trace_log.removeHandler(other)
        uninstall()
    (lookup,) = of(sink.events, ev.CacheLookedUp)
    assert (lookup.compile_id, lookup.layer, lookup.state, lookup.key) == (
        "2/0",
        "fx_graph",
        "hit",
        "fabc",
    )
    assert (lookup.saved_s, lookup.graph_ops) == (0.002, 1)
    assert lookup.parts == {
        "gm": "pq2ozyh5hn torch.ops.aten.mm(x, y)",
        "fx_kwargs[cpp_wrapper]": "kxd3wlam3z False",
    }
    (payload,) = fed
    assert payload is cache_info if not beside and shape == "lambda" else isinstance(payload, str)


def test_torchs_cache_layers_log_their_lookups_as_the_trace_probe_reads_them():
    """The shape the probe reads a lookup's dict from (``lambda:
    json.dumps(cache_info)``), in each of this torch's cache sites: where torch
    changes it, lookups still arrive (JSON, torch's path), at that cost."""
    import importlib

    def nested(code: types.CodeType) -> list[types.CodeType]:
        inner = [c for c in code.co_consts if isinstance(c, types.CodeType)]
        return [code, *(x for c in inner for x in nested(c))]

    for module in (
        "torch._inductor.compile_fx",
        "torch._functorch._aot_autograd.autograd_cache",
        "torch._functorch._aot_autograd.aot_autograd_result",
    ):
        source = Path(importlib.import_module(module).__file__ or "").read_text()
        codes = nested(compile(source, module, "exec"))
        cells = [tuple(types.CellType({}) for _ in c.co_freevars) for c in codes]
        fns = [types.FunctionType(c, {}, closure=cs) for c, cs in zip(codes, cells, strict=True)]
        assert any(T._encoded_dict(fn) == {} for fn in fns), module


def test_probes_degrade_when_torch_moved_things(monkeypatch):
    # Imported first, so only the lookups below fail (no half-imported package).
    pytest.importorskip("torch._inductor.config")
    pytest.importorskip("torch._logging._internal")
    sink = ListEmitter()
    notes = ProbeNotes(sink, "r")
    monkeypatch.setitem(sys.modules, "torch._logging._internal", None)
    monkeypatch.setitem(sys.modules, "torch._inductor.config", None)
    assert T.install(TraceDispatcher(sink, "r"), notes) is None
    assert provenance.enable_provenance(notes) is False
    assert provenance.enable_provenance(notes) is False  # said once
    probes = [e.probe for e in of(sink.events, ev.ProbeUnavailable)]
    assert probes == ["trace", "kernels.provenance"]


def test_provenance_traces_inductors_search_patterns_without_stack_traces(monkeypatch):
    """Provenance makes make_fx capture a stack for every node it creates; the
    patterns Inductor traces once per process need none and capture none."""
    pytest.importorskip("torch._inductor.pattern_matcher")
    import torch
    import torch._inductor.config as inductor_config
    import torch._inductor.pattern_matcher as pm
    import torch.fx.proxy
    from torch.fx.experimental.proxy_tensor import make_fx

    def search(x):
        return torch.relu(x) + 1

    captured = []
    extract = torch.fx.proxy.CapturedTraceback.extract

    def counted(*a: Any, **k: Any) -> Any:
        captured.append(1)
        return extract(*a, **k)

    monkeypatch.setattr(torch.fx.proxy.CapturedTraceback, "extract", staticmethod(counted))
    level = inductor_config.trace.provenance_tracking_level
    try:
        assert provenance.enable_provenance(ProbeNotes(ListEmitter(), "r"))
        wrapped = pm.gen_pattern_and_search_gm
        assert provenance.enable_provenance(
            ProbeNotes(ListEmitter(), "r")
        )  # a forked child's install
        assert pm.gen_pattern_and_search_gm is wrapped, "wrapped once"
        make_fx(search)(torch.ones(4))
        assert captured, "provenance is on: make_fx captures stacks"
        captured.clear()
        _, gm = pm.gen_pattern_and_search_gm(search, [torch.ones(4)], pm.fwd_only)
        assert len(gm.graph.nodes) > 2 and not captured
        assert inductor_config.trace.provenance_tracking_level == 1
    finally:
        inductor_config.trace.provenance_tracking_level = level


def test_emitter_lines_never_interleave_across_threads():
    r, w = os.pipe()
    emitter = Emitter(w)
    big = "x" * 20_000  # larger than a pipe's atomic write

    def writer(i: int) -> None:
        for _ in range(20):
            emitter.emit(ev.LogEmitted(run_id=f"{i}", level="info", source="probe", message=big))

    chunks: list[bytes] = []
    reader = threading.Thread(target=lambda: chunks.extend(iter(lambda: os.read(r, 1 << 16), b"")))
    reader.start()
    threads = [threading.Thread(target=writer, args=(i,)) for i in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    emitter.close()
    reader.join()
    os.close(r)
    lines = b"".join(chunks).splitlines()
    assert len(lines) == 80
    assert all(getattr(ev.decode(line), "message", None) == big for line in lines)
    emitter.emit(ev.LogEmitted(run_id=None, level="info", source="probe", message="closed"))


def test_small_helpers():
    assert median_iqr([1.0, 2.0, 3.0, 4.0, 100.0]) == (3.0, 2.0)
    assert median_iqr([2.0]) == (2.0, 0.0)
    assert one_line(ValueError("bad\nmore")) == "ValueError: bad"
    assert one_line(RuntimeError("backend='inductor' raised:\nAssertionError: x")) == (
        "RuntimeError: backend='inductor' raised: AssertionError: x"
    )


def test_a_symbol_made_twice_in_one_compile_is_reported_once():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    md = {
        "create_symbol": {"symbol": "s77", "source": "L['x'].size()[0]"},
        "frame_id": 0,
        "frame_compile_id": 1,
    }
    d.feed(md, None, 1)
    d.feed(md, None, 1)  # the restarted trace of the same frame
    (dim,) = of(sink.events, ev.DimMadeDynamic)
    assert (dim.compile_id, dim.symbol, dim.source) == ("0/1", "s77", "L['x'].size()[0]")


def test_a_failed_compile_names_the_users_line_and_the_frame_inside_the_library():
    from dlcprof.worker.probes.dynamo import failure_frames

    torch_file = f"{sys.prefix}/lib/python3.11/site-packages/torch/_library/custom_ops.py"
    err: Any = RuntimeError("when making fake tensor call")
    # Dynamo's errors carry the user code it was tracing (torch/_dynamo/exc.py).
    err.real_stack = traceback.StackSummary.from_list(
        [("/home/me/model.py", 16, "forward", None), (torch_file, 863, "__call__", None)]
    )
    assert failure_frames(err) == ("/home/me/model.py:16", f"{torch_file}:863")
    # Without it: torch's compile record names the user's frame of the failure.
    assert (
        payloads.failed_at(
            {
                "fail_user_frame_filename": "/m.py",
                "fail_user_frame_lineno": 3,
                "co_filename": "/m.py",
                "co_firstlineno": 1,
            }
        )
        == "/m.py:3"
    )
    assert payloads.failed_at({"co_filename": "/m.py", "co_firstlineno": 1}) == "/m.py:1"


def test_nothing_compiled_only_when_no_frame_made_a_graph():
    sink = ListEmitter()
    d = TraceDispatcher(sink, "r")
    for line in (TRACES / "graph_breaks.jsonl").read_text().splitlines():
        rec = json.loads(line)
        d.feed(rec["metadata"], rec["payload"], rec["thread"])
    assert d.nothing_compiled() is None  # graph breaks, but the frames around them compiled
    refused = TraceDispatcher(sink, "r")
    refused._metrics(
        {
            "compile_id": "0/0",
            "fail_type": "Unsupported",
            "graph_op_count": None,
            "fail_reason": "Attempted to wrap RNN, GRU, or LSTM",
        },
        False,
        {},
        "0/0",
    )
    e = refused.nothing_compiled()
    assert e is not None and (e.frames, e.fail_type) == (1, "Unsupported")
    # torch 2.15 breaks an LSTM's frame instead of failing it: the break is the refusal.
    broke = TraceDispatcher(sink, "r")
    artifact = {"name": "dynamo_graph_break_reason", "encoding": "string"}
    broke.feed({"artifact": artifact, "frame_id": 0, "frame_compile_id": 0}, DELAYED_BREAK, 1)
    broke._metrics({"compile_id": "0/0", "graph_op_count": 0}, False, {}, "0/0")
    e = broke.nothing_compiled()
    assert e is not None and (e.fail_type, e.fail_reason) == (
        None,
        "graph break GB0148: Unsupported function call (delayed): Dynamo does not support "
        "RNN, GRU, or LSTM",
    )
    assert e.hints and "allow_rnn=True" in e.hints[0]


def test_fresh_lines_follow_code_that_moved_and_prefer_the_workloads_file(tmp_path):
    from dlcprof.worker.fresh_lines import FreshLines

    old, new = tmp_path / "old", tmp_path / "new"
    old.mkdir(), new.mkdir()
    (old / "m.py").write_text("x = 1\ny = f(x)\n")
    (new / "m.py").write_text("# added\n\nx = 1\ny = f(x)\n")
    fresh = FreshLines()
    cited = f"{new / 'm.py'}:2 y = f(x)"
    assert fresh.line(cited) == f"{new / 'm.py'}:4 y = f(x)"  # edited in place
    fresh.home = str(new)
    assert fresh.line(f"{old / 'm.py'}:2 y = f(x)") == f"{new / 'm.py'}:4 y = f(x)"
    assert fresh.line(f"{old / 'm.py'}:2 z = g(y)") == f"{old / 'm.py'}:2 z = g(y)"  # no match


@pytest.fixture
def header_folder(tmp_path, monkeypatch) -> Path:
    """Torch's precompiled-header folder under a TMPDIR of the test's own."""
    import tempfile

    from torch._inductor.runtime import cache_dir_utils  # noqa: F401 - before a stand-in codecache

    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    return tmp_path / f"torchinductor_{getpass.getuser()}" / "precompiled_headers"


def _stand_in_codecache(
    monkeypatch: pytest.MonkeyPatch, folder: Path, with_builder: bool = True
) -> types.ModuleType:
    """A stand-in for torch's codecache, imported: ``_precompile_header`` builds
    each header's .gch once (torch caches the call), in ``folder``."""
    codecache = types.ModuleType("torch._inductor.codecache")

    @functools.cache
    def _precompile_header(header: str, cmd_line: str) -> str:
        folder.mkdir(parents=True, exist_ok=True)
        path = folder / f"{header}-{cmd_line}.h"
        Path(f"{path}.gch").write_bytes(b"")
        return str(path)

    if with_builder:
        setattr(codecache, "_precompile_header", _precompile_header)  # noqa: B010 - a module
    monkeypatch.setitem(sys.modules, "torch._inductor.codecache", codecache)
    return codecache


def test_a_header_is_the_compiles_when_this_process_built_it(header_folder, monkeypatch):
    """The header folder is the user's, shared: one another process builds
    meanwhile (a rank beside this one, a second dlcprof) is not this compile's."""
    from dlcprof.worker.probes.caches import HeaderWatch

    folder = header_folder
    codecache = _stand_in_codecache(monkeypatch, folder)
    sink = ListEmitter()
    watch = HeaderWatch(ProbeNotes(sink, "r"))
    assert watch.folder == str(folder) and watch.built() == []
    folder.mkdir(parents=True)
    (folder / "other.h.gch").write_bytes(b"")  # another process's, meanwhile
    # As torch's callers call it: by name, from the module.
    built = codecache._precompile_header("cpp_prefix", "O3")
    assert codecache._precompile_header("cpp_prefix", "O3") == built  # cached: built once
    assert watch.built() == [f"{built}.gch"] and not sink.events
    # A later compile of the process: that header is no longer new.
    later = HeaderWatch(ProbeNotes(sink, "r2"))
    codecache._precompile_header("cpp_prefix", "O3")
    assert later.built() == []


def test_without_torchs_header_builder_any_new_header_counts_and_a_note_says_so(
    header_folder, monkeypatch
):
    from dlcprof.worker.probes.caches import HeaderWatch

    folder = header_folder
    _stand_in_codecache(monkeypatch, folder, with_builder=False)
    sink = ListEmitter()
    watch = HeaderWatch(ProbeNotes(sink, "r"))
    folder.mkdir(parents=True)
    (folder / "abc.h.gch").write_bytes(b"")
    assert watch.built() == [str(folder / "abc.h.gch")]
    (note,) = sink.events
    assert isinstance(note, ev.ProbeUnavailable)
    assert note.probe == "caches.precompiled_headers.owner" and "another process" in note.reason


def test_the_raw_trace_starts_with_torch_version_and_imports_with_it(tmp_path):
    """As TORCH_TRACE's log does (issue 40, item 4): ``dlcprof import`` of a report
    folder's torch_trace.log names the torch that wrote it."""
    import torch
    from torch._logging._internal import _log_torch_version

    from dlcprof.trace_import.process_log import read_log
    from dlcprof.trace_records.log_file import Damage, read_records
    from dlcprof.worker.probes import rawtrace

    sink = ListEmitter()
    close = rawtrace.install(sink, "r", ProbeNotes(sink, "r"), directory=str(tmp_path))
    assert close is not None
    version = [{"name": "torch_version", "encoding": "json"}]
    opened = str(tmp_path / "r.log")
    assert [r.metadata.get("artifact") for r in read_records(opened, Damage())] == version
    _log_torch_version()  # what TORCH_TRACE logs to every handler: not a second one
    close()
    (saved,) = [e for e in sink.events if isinstance(e, ev.TraceSaved)]
    records = list(read_records(saved.path, Damage()))
    assert [r.metadata.get("artifact") for r in records] == version
    version = json.loads(records[0].payload)
    assert version["pytorch_version"] == torch.__version__ and saved.records == 1
    process = read_log(saved.path, "host", run_id="r").process
    assert process is not None
    (attached, *_) = process.events
    assert isinstance(attached, ev.ProcessAttached) and attached.torch_version == torch.__version__
