"""The profiling stage: where the compiled call spends its time, kernel by kernel.

It runs after the benchmark, which has already timed the code the user gets;
nothing here is inside it. On the same compiled function, arguments, thread
count and grad mode it:

1. times every launch of the compiled code in place, through the launch
   instrumentation (``launches.py``): on the CPU in repetitions alternating
   the plain and the instrumented call, on a GPU in one profiled window;
2. runs the Dynamo graph of each compile (the user's own ops) node by node on
   the inputs its compiled graph received, device-synchronized, and splits
   each op's time over the kernels its post-grad nodes went to (provenance
   ``preToPost`` and ``cppCodeToPost``): the eager cost of what each kernel
   fused;
3. measures the copy bandwidth: a 256 MiB tensor copy, same device and threads
   (on a GPU, ten copies between CUDA events).

Everything it cannot know is None with the reason.
"""

from __future__ import annotations

import functools
import json
import math
import os
import re
import shutil
import statistics
import time
from collections.abc import Callable
from dataclasses import field
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.trace_records.kernels import KernelCollector, parse_node_mappings
from dlcprof.worker import bench
from dlcprof.worker.gpu_trace import device_times
from dlcprof.worker.launches import (
    CPU_METHOD,
    GPU_METHOD,
    NOT_RUN,
    RANGE_PREFIX,
    GpuRecorder,
    GraphPlan,
    KernelResult,
    Timed,
    attribute_launches,
    chrome_trace,
    instrumented,
    kernel_dicts,
    plan_graph,
    summing_medians,
)
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import compiled_code as cc

REP_S = 0.05  # aim for repetitions of at least this long
GPU_CALLS = 10  # compiled calls in the one profiled window on a GPU
COPY_BYTES = 256 * 2**20
COPY_CALLS = 10  # copies per timed window on a GPU
# Keeps, per run, the GPU profiler's trace, the launches it ranges and the
# graphs' output code (tests/fixtures/gpu; scripts/gpu_check.sh).
GPU_TRACE_ENV = "DLCPROF_GPU_TRACE_DIR"

_ANN_SHAPE = re.compile(r"^\w+\[([^\]]*)\]")  # "f32[4, s0]...": a tensor's dtype and sizes


# --- pure helpers ---------------------------------------------------------------------


def shape_matches(annotation: str, shape: list[int] | None) -> bool:
    """Whether a placeholder's printed annotation ("f32[4, 1024][1024, 1]cpu")
    agrees with a tensor's shape (None: not a tensor). Symbolic sizes match anything."""
    m = _ANN_SHAPE.match(annotation)
    if not m:
        return shape is None or not annotation  # Sym(s0), or no annotation
    if shape is None:
        return False
    dims = [d.strip() for d in m.group(1).split(",") if d.strip()]
    if len(dims) != len(shape):
        return False
    return all(not d.isdigit() or int(d) == n for d, n in zip(dims, shape, strict=True))


def split_eager(
    node_ms: dict[str, float],
    pre_to_post: dict[str, list[str]],
    post_to_kernels: dict[str, list[int]],
    kernel_ms: dict[int, float],
    library: frozenset[int] = frozenset(),
) -> dict[int, float]:
    """Each user op's eager time, split over the kernels its post-grad nodes went
    to. One kernel takes it all. Between several, a library call (``library``:
    an extern addmm, SDPA) first takes its own compiled time, since eager runs
    the same call, and the rest goes to the others (a Linear's addmm and the
    kernel that fused a view of its output); otherwise in proportion to the
    kernels' compiled times, else (a kernel not timed) to how many of the op's
    nodes each holds. Ops whose nodes became no kernel (views) stay out."""
    out: dict[int, float] = {}
    budget = {k: kernel_ms[k] for k in library if kernel_ms.get(k)}
    for node, ms in node_ms.items():
        counts: dict[int, int] = {}
        for post in pre_to_post.get(node, []):
            for k in post_to_kernels.get(post, []):
                counts[k] = counts.get(k, 0) + 1
        others = {k: c for k, c in counts.items() if k not in budget}
        if others and len(others) < len(counts):
            for k in counts.keys() - others.keys():
                share = min(budget[k], ms)
                budget[k] -= share
                ms -= share
                out[k] = out.get(k, 0.0) + share
            counts = others
        weights: dict[int, float] = dict(counts)
        if all(kernel_ms.get(k) for k in counts):
            weights = {k: kernel_ms[k] for k in counts}
        total = sum(weights.values())
        for k, w in weights.items():
            out[k] = out.get(k, 0.0) + ms * w / total
            if k in budget:
                budget[k] = max(0.0, budget[k] - ms * w / total)
    return out


def replay_notes(times: Any, calls: int) -> list[str]:
    """What a GPU window's trace could not give to a launch, said per call:
    device time launched outside the compiled code's launches, and CUDA-graph
    replays (each kernel in them is correlated to the graph's launch, not to
    a launch of ours: Triton kernels are found by name, library kernels not)."""
    notes = []
    if times.unattributed_us:
        notes.append(
            f"{text.ms(times.unattributed_us / 1e3 / calls)} of device time per call "
            "was launched outside the compiled code's launches"
        )
    if times.replayed_us:
        notes.append(
            f"{text.ms(times.replay_total_us / 1e3 / calls)} of device time per call ran in "
            "CUDA-graph replays: their Triton kernels are timed by name; a library kernel "
            "(cuBLAS, attention) in a graph is not tied to its call and stays untimed"
        )
    return notes


# --- the eager replay's clock ----------------------------------------------------------


class NodeClock:
    """The hook of a replayed graph: time per node, device-synchronized."""

    def __init__(self, nodes: int, sync: Callable[[], None]) -> None:
        self.seconds = [0.0] * nodes
        self.sync = sync

    def begin(self) -> float:
        self.sync()
        return time.perf_counter()

    def end(self, i: int, t0: float) -> None:
        self.sync()
        self.seconds[i] += time.perf_counter() - t0


# --- the stage --------------------------------------------------------------------------


@data
class Replay:
    """One graph's Dynamo forward, ready to run node by node."""

    plan: GraphPlan
    results: list[KernelResult]
    fn: Callable[..., Any]
    args: list[Any]
    nodes: list[str]
    clock: NodeClock
    pre_to_post: dict[str, list[str]]
    post_to_kernels: dict[str, list[int]]
    reps: list[list[float]] = field(default_factory=list)


class KernelProfile:
    def __init__(
        self,
        sink: ev.Sink,
        run_id: str,
        notes: ProbeNotes,
        collector: KernelCollector,
        reps: int,
        iters: int,
    ) -> None:
        self.sink = sink
        self.run_id = run_id
        self.notes = notes
        self.collector = collector
        self.reps = max(1, reps)
        self.iters = max(1, iters)
        self.notes_out: list[str] = []

    def run(
        self,
        fn: Callable[..., Any],
        compiled: Callable[..., Any],
        args: tuple,
        timer: bench.Timer,
    ) -> None:
        graphs = list(self.collector.graphs)
        if not graphs:
            return
        gpu = timer.device == "cuda"
        method = GPU_METHOD if gpu else CPU_METHOD
        self.sink.emit(ev.ProfilingStarted(run_id=self.run_id, method=method))
        t0 = time.time()
        plans = [plan_graph(g, f"{RANGE_PREFIX}{i}", gpu) for i, g in enumerate(graphs)]
        results = [[KernelResult() for _ in g.kernels] for g in graphs]
        timed = Timed()
        try:
            timed = self._time_launches(compiled, args, timer, plans, results)
        except Exception as e:  # noqa: BLE001 - the stage must never cost the run
            why = f"timing failed: {type(e).__name__}: {e}"
            for res in results:
                for r in res:
                    r.why.setdefault("time_ms", why)
        eager_ms, nodes_ms, eager_why = self._eager(fn, args, plans, results, timer)
        copy, copy_why = self._copy_gbps(timer)
        for plan in plans:
            plan.recorder = None  # drop the captured inputs
        wall_s = time.time() - t0
        self.sink.emit(
            ev.LogEmitted(
                run_id=self.run_id,
                level="info",
                source="dlcprof",
                message=text.profiled(wall_s, timed.calls, method),
            )
        )
        self.sink.emit(
            ev.KernelsProfiled(
                run_id=self.run_id,
                method=method,
                calls=timed.calls,
                wall_s=wall_s,
                kernels=kernel_dicts(graphs, results),
                compiled_ms=timed.compiled_ms,
                call_ms=timed.call_ms,
                eager_ms=eager_ms,
                eager_nodes_ms=nodes_ms,
                eager_why=eager_why,
                copy_gbps=copy,
                copy_why=copy_why,
                device_busy_ms=timed.busy_ms,
                notes=self.notes_out,
            )
        )

    def _say_scale(self, what: str, scale: float) -> None:
        if abs(scale - 1.0) > 0.1:
            self.notes_out.append(
                f"background load: the {what} medians were scaled by {scale:.2f} to add up "
                "to the median repetition"
            )

    def _per_rep(self, fn: Callable[..., Any], args: tuple, timer: bench.Timer) -> int:
        """Calls per repetition: warmed up, at least REP_S long, at most --iters."""
        sink = bench.LastOutput()
        bench.warm_up(fn, args, timer, sink)
        per_call_s = bench.steady_call_s(fn, args, timer, sink, n=3)
        return max(1, min(self.iters, math.ceil(REP_S / max(per_call_s, 1e-6))))

    # 1. time inside the compiled call ---------------------------------------------------

    def _time_launches(
        self,
        compiled: Callable[..., Any],
        args: tuple,
        timer: bench.Timer,
        plans: list[GraphPlan],
        results: list[list[KernelResult]],
    ) -> Timed:
        live = [p for p in plans if p.recorder is not None]
        for p, res in zip(plans, results, strict=True):
            if p.why is not None:
                self.notes.unavailable(cc.PROBE, p.why)
                for r in res:
                    r.why["time_ms"] = r.why["bytes"] = p.why
        if not live:
            return Timed()
        with instrumented(live):  # the first calls capture inputs and bytes
            per_rep = self._per_rep(compiled, args, timer)
        if timer.device == "cuda":
            timed = self._gpu_window(compiled, args, timer, live, per_rep)
        else:
            timed = self._cpu_reps(compiled, args, timer, live, per_rep)
        self._say_scale("kernel", attribute_launches(plans, results, timed))
        return timed

    def _cpu_reps(
        self,
        compiled: Callable[..., Any],
        args: tuple,
        timer: bench.Timer,
        live: list[GraphPlan],
        per_rep: int,
    ) -> Timed:
        """Repetitions alternate the plain call and the instrumented one, so that
        background load hits both (as the benchmark alternates eager and compiled)."""
        recs = [p.recorder for p in live if p.recorder is not None]
        entered = [rec.entered for rec in recs]
        plain: list[float] = []
        inst: list[float] = []
        sink = bench.LastOutput()
        for _ in range(self.reps):
            plain.append(_settled_ms(compiled, args, per_rep, timer, sink))
            with instrumented(live):
                sink.value = compiled(*args)  # settle, untimed (see _settled_ms)
                for rec in recs:
                    rec.seconds = [0.0] * len(rec.seconds)
                inst.append(timer.per_call_ms(compiled, args, per_rep, sink))
            for rec in recs:
                rec.rep_ms.append([s * 1e3 / per_rep for s in rec.seconds])
        for rec, before in zip(recs, entered, strict=True):
            if rec.entered == before:
                rec.rep_ms = []  # ran at warm-up only
        return Timed(self.reps * per_rep, statistics.median(plain), statistics.median(inst))

    def _gpu_window(
        self,
        compiled: Callable[..., Any],
        args: tuple,
        timer: bench.Timer,
        live: list[GraphPlan],
        per_rep: int,
    ) -> Timed:
        import torch

        sink = bench.LastOutput()
        plain = statistics.median(
            timer.per_call_ms(compiled, args, per_rep, sink) for _ in range(self.reps)
        )
        acts = [torch.profiler.ProfilerActivity.CPU, torch.profiler.ProfilerActivity.CUDA]
        entered = {id(p): p.recorder.entered for p in live if p.recorder}
        counts = {id(p): list(p.recorder.count) for p in live if p.recorder}
        with instrumented(live), torch.profiler.profile(activities=acts) as prof:
            call_ms = timer.per_call_ms(compiled, args, GPU_CALLS, sink)
        trace = chrome_trace(prof)
        times = device_times(trace, RANGE_PREFIX)
        keep = os.environ.get(GPU_TRACE_ENV)
        if keep:
            _keep_trace(os.path.join(keep, re.sub(r"\W", "_", self.run_id)), trace, live)
        for p in live:
            rec = p.recorder
            assert isinstance(rec, GpuRecorder)
            if rec.entered == entered[id(p)]:
                continue  # replayed without call() (CUDA graphs): no launch to read
            # A partition CUDA graphs replay runs none of its launches in Python.
            rec.window(times, GPU_CALLS, counts[id(p)])
        self.notes_out += replay_notes(times, GPU_CALLS)
        return Timed(
            GPU_CALLS,
            plain,
            call_ms,
            times.total_us / 1e3 / GPU_CALLS,
            replayed_ms={n: us / 1e3 / GPU_CALLS for n, us in times.replayed_us.items()},
            replayed_n={n: c / GPU_CALLS for n, c in times.replayed_n.items()},
        )

    # 2. the eager cost of the ops each kernel fused ------------------------------------

    def _eager(
        self,
        fn: Callable[..., Any],
        args: tuple,
        plans: list[GraphPlan],
        results: list[list[KernelResult]],
        timer: bench.Timer,
    ) -> tuple[float | None, float | None, str | None]:
        """(the eager call, the graphs' user ops one by one, why not), per call, in
        repetitions alternating the two."""
        replays: list[Replay] = []
        reasons: list[str] = []
        for plan, res in zip(plans, results, strict=True):
            replay = self._replay(plan, res, timer)
            if isinstance(replay, str):
                for k in res:
                    k.why.setdefault("eager_ms", replay)
                if replay not in reasons:
                    reasons.append(replay)
            else:
                replays.append(replay)
        if not replays:
            return None, None, "; ".join(reasons) or "no graph could be replayed"
        if reasons:
            self.notes_out.append("eager replay left out some graphs: " + "; ".join(reasons))
        try:
            eager_ms = self._replay_reps(fn, args, replays, timer)
        except Exception as e:  # noqa: BLE001 - a graph that runs differently outside Dynamo
            why = f"the Dynamo graph did not run eagerly: {type(e).__name__}: {e}"
            for rp in replays:
                for k in rp.results:
                    k.why.setdefault("eager_ms", why)
            return None, None, why
        rows = [[ms for rp in replays for ms in rp.reps[j]] for j in range(self.reps)]
        medians, scale = summing_medians(rows)
        self._say_scale("eager op", scale)
        nodes_ms = sum(medians)
        for rp in replays:
            node_ms, medians = medians[: len(rp.nodes)], medians[len(rp.nodes) :]
            weights = {i: r.time_ms for i, r in enumerate(rp.results) if r.time_ms}
            library = frozenset(
                i for i, k in enumerate(rp.plan.graph.kernels) if k.kind == "extern"
            )
            by_kernel = split_eager(
                dict(zip(rp.nodes, node_ms, strict=True)),
                rp.pre_to_post,
                rp.post_to_kernels,
                weights,
                library,
            )
            for i, r in enumerate(rp.results):
                if i in by_kernel:
                    r.eager_ms = by_kernel[i]
                else:
                    r.why.setdefault("eager_ms", "none of its nodes comes from a user op")
        return eager_ms, nodes_ms, None

    def _replay(self, plan: GraphPlan, res: list[KernelResult], timer: bench.Timer) -> Replay | str:
        """The graph's Dynamo forward ready to run, or why it cannot be."""
        g = plan.graph
        rec = plan.recorder
        if g.code.graph == "backward":
            return "a backward graph runs autograd's ops, not the user's"
        if rec is None or rec.args is None:
            return plan.why or NOT_RUN
        text = self.collector.dynamo_graphs.get(g.compile_id)
        if not text:
            return "torch gave no Dynamo graph for this compile"
        pre_to_post = parse_node_mappings(g.mappings or "", "preToPost")
        cpp_to_post = parse_node_mappings(g.mappings or "")
        if not pre_to_post or not cpp_to_post:
            return "no kernel provenance for this graph"
        try:
            tree, nodes, placeholders = cc.timed_forward_source(text)
            if len(placeholders) != len(rec.args) or not all(
                shape_matches(p.annotation, _shape(a))
                for p, a in zip(placeholders, rec.args, strict=True)
            ):
                return "the compiled graph's inputs differ from the Dynamo graph's"
            clock = NodeClock(len(nodes), timer.sync)
            fn = cc.runnable_forward(tree, clock)
        except cc.CodeUnavailable as e:
            return str(e)
        except Exception as e:  # noqa: BLE001 - a printed graph that does not compile
            return f"the Dynamo graph does not compile: {type(e).__name__}: {e}"
        handles = {c.handle: plan.owner[i] for i, c in enumerate(g.code.calls) if c.handle}
        post_to_kernels: dict[str, list[int]] = {}
        for handle, posts in cpp_to_post.items():
            owner = handles.get(handle)
            if owner is None:
                continue
            for post in posts:
                owners = post_to_kernels.setdefault(post, [])
                if owner not in owners:
                    owners.append(owner)
        return Replay(plan, res, fn, rec.args, nodes, clock, pre_to_post, post_to_kernels)

    def _replay_reps(
        self, fn: Callable[..., Any], args: tuple, replays: list[Replay], timer: bench.Timer
    ) -> float:
        """The eager call's ms; each replay's per-node ms per repetition in ``reps``."""
        per_rep = self._per_rep(fn, args, timer)
        for rp in replays:
            bench.warm_up(rp.fn, tuple(rp.args), timer, bench.LastOutput())
        sink = bench.LastOutput()
        eager: list[float] = []
        for _ in range(self.reps):
            eager.append(_settled_ms(fn, args, per_rep, timer, sink))
            for rp in replays:
                sink.value = rp.fn(*rp.args)  # settle, untimed (see _settled_ms)
                rp.clock.seconds = [0.0] * len(rp.clock.seconds)
                for _ in range(per_rep):
                    sink.value = rp.fn(*rp.args)
                rp.reps.append([s * 1e3 / per_rep for s in rp.clock.seconds])
        return statistics.median(eager)

    # 3. copy bandwidth ------------------------------------------------------------------

    def _copy_gbps(self, timer: bench.Timer) -> tuple[float | None, str | None]:
        try:
            import torch

            n = COPY_BYTES // 4
            src = torch.ones(n, dtype=torch.float32, device=timer.device)
            dst = torch.empty_like(src)
            s = copy_seconds(functools.partial(dst.copy_, src), timer)
            del src, dst
        except Exception as e:  # noqa: BLE001 - out of memory, most likely
            return None, f"the {COPY_BYTES >> 20} MiB copy failed: {type(e).__name__}: {e}"
        return 2 * COPY_BYTES / s / 1e9, None


def copy_seconds(copy: Callable[[], Any], timer: bench.Timer) -> float:
    """Seconds per copy, the median of three windows after a first touch. On a
    GPU a window is COPY_CALLS copies between CUDA events: one copy between
    synchronizes (~0.13 ms on an H200) would count the synchronize too."""
    sink = bench.LastOutput()
    timer.one_call_s(copy, (), sink)  # first touch of dst's pages
    if timer.device == "cuda":
        windows = [timer.per_call_ms(copy, (), COPY_CALLS, sink) / 1e3 for _ in range(3)]
    else:
        windows = [timer.one_call_s(copy, (), sink) for _ in range(3)]
    return statistics.median(windows)


def _settled_ms(
    fn: Callable[..., Any], args: tuple, calls: int, timer: bench.Timer, sink: bench.LastOutput
) -> float:
    """ms per call over ``calls`` calls, after one untimed call: the first call
    after switching between two codes pays for the switch (the allocator maps
    fresh pages for multi-MB outputs), which is neither code's steady cost."""
    sink.value = fn(*args)
    return timer.per_call_ms(fn, args, calls, sink)


def _keep_trace(where: str, trace: dict[str, Any], live: list[GraphPlan]) -> None:
    """The trace, what each range launched and each graph's output code, in a
    folder of the run's own (scripts/gpu_check.sh keeps every mode's)."""
    os.makedirs(where, exist_ok=True)
    launches = {}
    for n, p in enumerate(live):
        assert isinstance(p.recorder, GpuRecorder)
        for i, owner in enumerate(p.owner):
            k = p.graph.kernels[owner]
            launches[f"{p.recorder.label}:{i}"] = {
                "compile_id": p.graph.compile_id,
                "graph": k.graph,
                "kernel": k.name,
                "kind": k.kind,
                "order": k.order,
            }
        if p.graph.path and os.path.isfile(p.graph.path):
            shutil.copyfile(p.graph.path, os.path.join(where, f"output_code_{n}.txt"))
    with open(os.path.join(where, "trace.json"), "w", encoding="utf-8") as f:
        json.dump(trace, f)
    with open(os.path.join(where, "launches.json"), "w", encoding="utf-8") as f:
        json.dump(launches, f, indent=1)


def _shape(x: Any) -> list[int] | None:
    shape = getattr(x, "shape", None)
    return [int(n) for n in shape] if shape is not None else None
