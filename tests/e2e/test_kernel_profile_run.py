"""The kernel profiling stage on a real run (transformer-block, small: generated
C++ kernels, extern GEMMs and attention), and one in-process compile for the
adapter that must degrade when torch moves its code cache."""

from __future__ import annotations

import re

import pytest
from helpers.worker import run_worker

from dlcprof import events as ev
from dlcprof.figures import kernels as fk
from dlcprof.session import Session
from dlcprof.settings import RunSettings
from dlcprof.trace_records import kernels as K
from dlcprof.worker import profile as P
from dlcprof.worker.probes import compiled_code as cc
from dlcprof.worker.probes import provenance
from dlcprof.worker.probes.kernels import aten_op_exists

# The module's real run is shared by its tests: one process runs them all.
pytestmark = pytest.mark.xdist_group("test_kernel_profile_run")


@pytest.fixture(scope="module")
def profiled_block():
    """One real run: transformer-block, small, benchmarked then profiled."""
    # On one thread: a test running beside it on another core slows the
    # benchmark and the profile alike, not one OpenMP thread of many.
    settings = RunSettings(target="transformer-block", size="small", reps=3, iters=5, threads=1)
    r = run_worker(settings)
    assert r.returncode == 0, r.stderr
    return r


def test_every_generated_kernel_has_a_time_and_no_time_is_invented(profiled_block):
    r = profiled_block
    bench, started, prof = (
        r.one(ev.BenchmarkMeasured),
        r.one(ev.ProfilingStarted),
        r.one(ev.KernelsProfiled),
    )
    # A separate stage, after the benchmark: the headline timed the user's code.
    assert r.events.index(bench) < r.events.index(started) < r.events.index(prof)
    assert prof.wall_s > 0 and prof.calls > 0
    kernels = r.of(ev.KernelGenerated)
    keys = {fk.kernel_key(k) for k in kernels}
    profiled = {
        fk.key_of(d["compile_id"], d["graph"], d["name"], d["order"]): d for d in prof.kernels
    }
    assert set(profiled) == keys  # nothing attributed to a kernel that does not exist
    # Every kernel in the output code (generated and extern) was timed.
    for key, d in profiled.items():
        assert d["time_ms"] and d["time_ms"] > 0, (key, d["why"])
        assert d["launches"] >= 1 and d["bytes"] > 0
    kinds = {k.kind for k in kernels}
    assert "extern" in kinds and kinds & {"pointwise", "reduction"}
    # The user's ops ran one by one; the generated kernels got their eager cost.
    assert prof.eager_nodes_ms and prof.eager_nodes_ms > 0 and prof.eager_ms
    generated = [profiled[fk.kernel_key(k)] for k in kernels if k.kind != "extern"]
    assert all(d["eager_ms"] and d["eager_ms"] > 0 for d in generated)
    assert prof.copy_gbps and prof.copy_gbps > 0.1
    assert not r.of(ev.ProbeUnavailable)
    # Shares sum to the coverage, worded the same in every figure.
    run = Session.from_events(r.events).runs["test"]
    s = fk.profile_summary(run)
    assert s is not None and s.coverage is not None
    shares = [t.share for t in fk.kernel_timings(run).values()]
    assert sum(x for x in shares if x) == pytest.approx(s.coverage)
    # Kernels cannot take longer than the call that runs them (noise aside). Under
    # background load the stage scales the kernel medians, and says by how much:
    # the bounds move with that note, not with the machine's load.
    scale = [float(x) for n in prof.notes for x in re.findall(r"kernel medians .* by ([\d.]+)", n)]
    low, high = min([1.0, *scale]), max([1.0, *scale])
    assert 0.2 * low < s.coverage < 1.5 * high, (s, prof.notes)


def test_a_library_call_states_no_fusion_gain(profiled_block):
    """Issue 20, 4 and 18: an extern GEMM or attention call fuses nothing, so its
    "fusion gain" is no figure (it compared one call with itself, split by
    attribution): n/a with why, while the generated kernels keep theirs."""
    run = Session.from_events(profiled_block.events).runs["test"]
    timings = fk.kernel_timings(run)
    library = [k for k in run.kernels if fk.is_library_call(k)]
    assert library
    for k in library:
        t = timings[fk.kernel_key(k)]
        assert t.gain is None and t.reason("gain") == fk.LIBRARY_GAIN, k.name
    fused = [timings[fk.kernel_key(k)] for k in run.kernels if not fk.is_library_call(k)]
    assert any(t.gain is not None for t in fused)


def test_the_stage_degrades_when_torch_moved_its_code_cache(monkeypatch):
    torch = pytest.importorskip("torch")
    from torch._inductor import codecache

    from dlcprof.trace_records.dispatcher import TraceDispatcher
    from dlcprof.worker import bench
    from dlcprof.worker.emit import ListEmitter
    from dlcprof.worker.probes import ProbeNotes
    from dlcprof.worker.probes import trace as T

    sink = ListEmitter()
    notes = ProbeNotes(sink, "r")
    collector = K.KernelCollector(sink, "r", aten_op_exists())
    provenance.enable_provenance(notes)
    uninstall = T.install(TraceDispatcher(sink, "r", collector), notes)
    torch._dynamo.reset()

    def f(x):
        return torch.sin(x) * torch.cos(x) + 1

    try:
        with torch.no_grad():
            compiled = torch.compile(f)
            args = (torch.randn(64, 64),)
            compiled(*args)
    finally:
        assert uninstall is not None
        uninstall()
    (graph,) = collector.graphs
    (module,) = cc.loaded_modules(graph.path or "")
    original = cc.call_function(module).__code__
    timer = bench.Timer("cpu")
    with torch.no_grad():
        monkeypatch.delattr(codecache.PyCodeCache, "modules")
        P.KernelProfile(sink, "r", notes, collector, reps=2, iters=3).run(f, compiled, args, timer)
        monkeypatch.undo()
        (gone,) = [e for e in sink.events if isinstance(e, ev.KernelsProfiled)]
        (note,) = [e for e in sink.events if isinstance(e, ev.ProbeUnavailable)]
        assert note.probe == cc.PROBE and "PyCodeCache" in note.reason
        (k,) = gone.kernels
        assert k["time_ms"] is None and "PyCodeCache" in k["why"]["time_ms"]
        assert gone.copy_gbps is not None  # the rest of the stage went on
        # Put back, the same stage times the kernel, and leaves the code as it was.
        P.KernelProfile(sink, "r", notes, collector, reps=2, iters=3).run(f, compiled, args, timer)
    (k,) = [e for e in sink.events if isinstance(e, ev.KernelsProfiled)][-1].kernels
    assert k["time_ms"] and k["time_ms"] > 0 and k["bytes"] == 2 * 64 * 64 * 4
    assert k["eager_ms"] and k["eager_ms"] > 0
    assert cc.call_function(module).__code__ is original
    assert cc.HOOK not in module.__dict__
    torch._dynamo.reset()
