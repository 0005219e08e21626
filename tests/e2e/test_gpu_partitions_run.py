"""Launches inside graph partitions timed in place: a real CPU compile with
graph partitions (issue 24), the GPU path's wrapper shape made on the CPU."""

from __future__ import annotations

import pytest

from dlcprof import events as ev
from dlcprof.trace_records import kernels as K
from dlcprof.worker import bench
from dlcprof.worker import profile as P
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes, provenance
from dlcprof.worker.probes import compiled_code as cc
from dlcprof.worker.probes.kernels import aten_op_exists


def test_launches_in_partitions_are_timed_in_place(monkeypatch):
    """A real partitioned compile (partitions forced on the CPU as the fixture
    script does): the profiling stage times every kernel, in both partitions
    and in call(), and puts torch's code back."""
    torch = pytest.importorskip("torch")
    import torch._inductor.config as config
    from torch._inductor import ir, scheduler

    from dlcprof.trace_records.dispatcher import TraceDispatcher
    from dlcprof.worker.probes import trace as T

    original = scheduler.Scheduler.should_partition

    def should_partition(self, node, *args, **kwargs):
        if isinstance(node.node, ir.ExternKernel):
            return original(self, node, *args, **kwargs)
        return None

    monkeypatch.setattr(scheduler.Scheduler, "should_partition", should_partition)
    sink = ListEmitter()
    notes = ProbeNotes(sink, "r")
    collector = K.KernelCollector(sink, "r", aten_op_exists())
    provenance.enable_provenance(notes)
    uninstall = T.install(TraceDispatcher(sink, "r", collector), notes)
    torch._dynamo.reset()

    def f(x, w):
        return (torch.sin(x) @ w).relu() + 1

    args = (torch.randn(32, 32), torch.randn(32, 32))
    try:
        with (
            config.patch(
                {"graph_partition": True, "fx_graph_cache": False, "triton.cudagraphs": True}
            ),
            torch.no_grad(),
        ):
            compiled = torch.compile(f)
            compiled(*args)
            (graph,) = collector.graphs
            assert [c.name for c in graph.code.calls] == [
                "cpp_fused_sin_0",
                "extern_kernels.mm",
                "cpp_fused_add_relu_1",
            ]
            (module,) = cc.loaded_modules(graph.path or "")
            before = module.partition_0.__code__
            P.KernelProfile(sink, "r", notes, collector, reps=2, iters=3).run(
                f, compiled, args, bench.Timer("cpu")
            )
    finally:
        assert uninstall is not None
        uninstall()
        torch._dynamo.reset()
    (prof,) = [e for e in sink.events if isinstance(e, ev.KernelsProfiled)]
    assert [k["name"] for k in prof.kernels] == [c.name for c in graph.code.calls]
    for k in prof.kernels:
        assert k["time_ms"] and k["time_ms"] > 0 and k["launches"] == 1, k
    assert module.partition_0.__code__ is before and cc.HOOK not in module.__dict__
