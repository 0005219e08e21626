"""The launch instrumentation: every launch of a compiled graph's code timed in place.

Each compiled graph's ``call()`` gets a copy of its code with every launch
going through a recorder (``probes/compiled_code.py``), so the kernels run
exactly as the user's call runs them: same generated code, same buffers, same
order. On the CPU the recorder reads ``perf_counter`` around each launch
(Inductor's C++ kernels and extern calls return when done). On a GPU it opens
a ``record_function`` range per launch and reads the device time of what each
range launched from torch.profiler's CUDA activity (``gpu_trace.py``). The
bytes each launch reads and writes come from its tensor arguments (an
``in_out_ptr`` counts twice), measured once. ``attribute_launches`` adds the
launches' repetitions up to each kernel's figures.

Two users: the profiling stage after a run's benchmark (``profile.py``) and
the kernel sampler in an attached program (``attached/kernel_sample.py``).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import field
from typing import Any

from dlcprof.data import data
from dlcprof.stats import median_iqr
from dlcprof.trace_records.kernels import CompiledGraph
from dlcprof.worker.gpu_trace import DeviceTimes
from dlcprof.worker.probes import compiled_code as cc

CPU_METHOD = "perf_counter around each launch inside the compiled call"
GPU_METHOD = "torch.profiler CUDA activity, one range per launch inside the compiled call"
RANGE_PREFIX = "dlcprof:"
NOT_RUN = "not run by the profiled call (compiled for other inputs)"
NOT_TIMED = "its code ran at warm-up only (CUDA graphs replay it without launches to time)"

_PARAMS_CPP = re.compile(r'extern\s+"C"[^(]*\(([^)]*)\)', re.S)
_PARAMS_PY = re.compile(r"^def\s+\w+\(([^)]*)\)", re.M)


def param_names(source: str) -> list[str]:
    """A generated kernel's parameter names, in order: C++ ``kernel(const float*
    in_ptr0, ...)`` or Triton ``def triton_...(in_ptr0, ..., XBLOCK : tl.constexpr)``."""
    m = _PARAMS_CPP.search(source)
    if m:
        pieces = [p.strip() for p in m.group(1).split(",") if p.strip()]
        return [re.findall(r"\w+", p)[-1] for p in pieces]
    m = _PARAMS_PY.search(source)
    if m:
        pieces = [p.strip() for p in m.group(1).split(",") if p.strip()]
        return [re.split(r"[\s:=]", p, maxsplit=1)[0] for p in pieces]
    return []


def summing_medians(per_rep: list[list[float]]) -> tuple[list[float], float]:
    """Per column (a launch, a node), its median over repetitions, scaled so the
    columns add up to the median repetition; and that scale. Under background
    load each column's median drops the stalls that hit it while most
    repetitions hold a stall somewhere, so plain medians would add up to less
    than the call they are shares of; on a quiet machine the scale is ~1."""
    if not per_rep:
        return [], 1.0
    medians = [statistics.median(col) for col in zip(*per_rep, strict=True)]
    total = sum(medians)
    scale = statistics.median(sum(row) for row in per_rep) / total if total > 0 else 1.0
    return [m * scale for m in medians], scale


# --- recorders: what the instrumented code calls --------------------------------------


class Recorder:
    """The hook of one compiled graph: its inputs, and per launch time and bytes."""

    def __init__(self, launches: int, inout: list[list[bool]], extern: list[bool]) -> None:
        self.inout = inout  # per launch, per positional arg: an in_out_ptr (read and written)
        self.extern = extern
        self.args: list[Any] | None = None
        self.capture = True
        self.entered = 0  # calls of call(), warm-up included
        self.count = [0] * launches  # launches, warm-up included
        self.seconds = [0.0] * launches  # since the last reset
        self.bytes: list[int | None] = [None] * launches
        self.rep_ms: list[list[float]] = []  # per repetition, per launch: ms per call
        self.untimed: set[int] = set()  # launches the timed calls did not run (CUDA graphs)
        self.launch_ms: list[float] = []  # per launch: ms per call (summing_medians)

    def enter(self, args: list[Any]) -> None:
        self.entered += 1
        if self.capture:
            self.args = list(args)  # call() clears its list
            self.capture = False

    def launch(self, i: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        t0 = time.perf_counter()
        out = fn(*args, **kwargs)
        self.seconds[i] += time.perf_counter() - t0
        self._after(i, args, kwargs, out)
        return out

    def _after(self, i: int, args: tuple, kwargs: dict[str, Any], out: Any) -> None:
        self.count[i] += 1
        if self.bytes[i] is None:
            self.bytes[i] = _launch_bytes(args, kwargs, out, self.inout[i], self.extern[i])


class GpuRecorder(Recorder):
    """Names each launch's range; the device times come from the profiler trace."""

    def __init__(self, label: str, *a: Any) -> None:
        import torch

        super().__init__(*a)
        self.label = label
        self._range = torch.profiler.record_function

    def launch(self, i: int, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        with self._range(f"{self.label}:{i}"):
            out = fn(*args, **kwargs)
        self._after(i, args, kwargs, out)
        return out

    def window(self, times: DeviceTimes, calls: int, before: list[int]) -> None:
        """One repetition read from a profiled window of ``calls`` calls (launch
        counts ``before`` it): each launch's device ms per call. A partition
        CUDA graphs replay runs none of its launches in Python: untimed."""
        self.untimed = {i for i, n in enumerate(self.count) if n == before[i]}
        self.rep_ms.append(
            [
                times.by_label.get(f"{self.label}:{i}", 0.0) / 1e3 / calls
                for i in range(len(self.seconds))
            ]
        )


def chrome_trace(prof: Any) -> dict[str, Any]:
    """A finished ``torch.profiler.profile``'s Chrome trace (kineto's JSON)."""
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "trace.json")
        prof.export_chrome_trace(path)
        with open(path, encoding="utf-8") as f:
            return json.load(f)


def _tensor_bytes(x: Any) -> int:
    import torch

    if isinstance(x, torch.Tensor):
        return int(x.numel()) * int(x.element_size())
    if isinstance(x, (list, tuple)):
        return sum(_tensor_bytes(v) for v in x)
    return 0


def _launch_bytes(
    args: tuple, kwargs: dict[str, Any], out: Any, inout: list[bool], extern: bool
) -> int:
    """Bytes a launch must read and write: each tensor argument once, an
    ``in_out_ptr`` twice; an extern call's result (when not written in place) once."""
    total = 0
    for j, a in enumerate(args):
        n = _tensor_bytes(a)
        total += 2 * n if j < len(inout) and inout[j] else n
    total += sum(_tensor_bytes(v) for v in kwargs.values())
    if extern and "out" not in kwargs:
        total += _tensor_bytes(out)
    return total


# --- the plan: which graphs can be timed, and how launches map to kernels -----------------


@data
class GraphPlan:
    graph: CompiledGraph
    owner: list[int] = field(default_factory=list)  # launch -> index in graph.kernels
    modules: list[Any] = field(default_factory=list)
    code: Any = None
    recorder: Recorder | None = None
    why: str | None = None  # when its launches cannot be timed


def _owners(graph: CompiledGraph) -> list[int]:
    """Launch i of call() -> its kernel: a generated kernel by name (every launch
    of it), an extern call by its position (KernelInfo.order is the call index)."""
    by_name = {k.name: i for i, k in enumerate(graph.kernels) if k.kind != "extern"}
    by_order = {k.order: i for i, k in enumerate(graph.kernels) if k.kind == "extern"}
    owners = []
    for n, call in enumerate(graph.code.calls):
        owner = by_order.get(n) if call.extern else by_name.get(call.name)
        if owner is None:
            raise cc.CodeUnavailable(f"launch {n} ({call.name}) matches no listed kernel")
        owners.append(owner)
    return owners


def plan_graph(graph: CompiledGraph, label: str, gpu: bool) -> GraphPlan:
    plan = GraphPlan(graph)
    try:
        if not graph.path:
            raise cc.CodeUnavailable("torch did not say where the wrapper module was written")
        plan.modules = cc.loaded_modules(graph.path)
        if not plan.modules:
            raise cc.CodeUnavailable(f"no loaded module for {os.path.basename(graph.path)}")
        with open(graph.path, encoding="utf-8") as f:
            source = f.read()
        tree, launches = cc.instrument_source(source, graph.code.definitions)
        listed = [(c.name, c.extern) for c in graph.code.calls]
        if [(x.name, x.extern) for x in launches] != listed:
            raise cc.CodeUnavailable("the loaded module's launches differ from the reported code")
        plan.owner = _owners(graph)
        plan.code = cc.compile_instrumented(plan.modules[0], tree)
    except (cc.CodeUnavailable, OSError, SyntaxError) as e:
        plan.why = str(e)
        return plan
    inout, extern = [], []
    for i in plan.owner:
        k = graph.kernels[i]
        names = [] if k.kind == "extern" else param_names(k.source)
        inout.append([n.startswith("in_out_ptr") for n in names])
        extern.append(k.kind == "extern")
    n = len(plan.owner)
    plan.recorder = GpuRecorder(label, n, inout, extern) if gpu else Recorder(n, inout, extern)
    return plan


@contextlib.contextmanager
def instrumented(plans: list[GraphPlan]) -> Iterator[None]:
    """Every planned graph's loaded call() instrumented for the block."""
    with contextlib.ExitStack() as stack:
        for p in plans:
            for m in p.modules:
                stack.enter_context(cc.instrumented(m, p.code, p.recorder))
        yield


# --- what the launches add up to, per kernel ---------------------------------------------


@data
class KernelResult:
    time_ms: float | None = None  # median over repetitions
    spread_ms: float | None = None  # their IQR (None from one window)
    launches: int = 0
    bytes: int | None = None
    eager_ms: float | None = None
    why: dict[str, str] = field(default_factory=dict)


@data
class Timed:
    """What the launch timing measured, per compiled call."""

    calls: int = 0
    compiled_ms: float | None = None  # the plain call, in repetitions alternating with
    call_ms: float | None = None  # ... the instrumented call
    busy_ms: float | None = None  # GPU: every device activity in the window
    # GPU: CUDA-graph replays' device ms and kernels per call, by kernel name
    replayed_ms: dict[str, float] = field(default_factory=dict)
    replayed_n: dict[str, float] = field(default_factory=dict)


def attribute_launches(
    plans: list[GraphPlan], results: list[list[KernelResult]], timed: Timed
) -> float:
    """Each graph's launches, timed in its recorder's repetitions, added up to its
    kernels (``results``, per graph in kernel order): time per call (``summing_medians``
    over the repetitions, all graphs together), spread, launches and bytes; why
    where none. Returns the medians' scale (see ``summing_medians``)."""
    recs = [p.recorder for p in plans if p.recorder is not None and p.recorder.rep_ms]
    reps = len(recs[0].rep_ms) if recs else 0
    medians, scale = summing_medians(
        [[ms for rec in recs for ms in rec.rep_ms[j]] for j in range(reps)]
    )
    for each in recs:
        each.launch_ms, medians = medians[: len(each.seconds)], medians[len(each.seconds) :]
    for p, res in zip(plans, results, strict=True):
        rec = p.recorder
        if rec is None:
            continue
        if not rec.entered:
            for r in res:
                r.why["time_ms"] = r.why["bytes"] = NOT_RUN
            continue
        kernel_reps: dict[int, list[float]] = {}
        for i, owner in enumerate(p.owner):
            r = res[owner]
            if rec.bytes[i] is not None:
                r.bytes = (r.bytes or 0) + (rec.bytes[i] or 0)
            if i in rec.untimed:
                continue
            r.launches += rec.count[i] // rec.entered
            if rec.rep_ms:
                r.time_ms = (r.time_ms or 0.0) + rec.launch_ms[i]
                sums = kernel_reps.setdefault(owner, [0.0] * len(rec.rep_ms))
                for j, rep in enumerate(rec.rep_ms):
                    sums[j] += rep[i]
        for owner, sums in kernel_reps.items():
            res[owner].spread_ms = median_iqr(sums)[1] if len(sums) > 1 else None
        for i, r in enumerate(res):
            name = p.graph.kernels[i].name
            if r.time_ms is None and name in timed.replayed_ms:
                # Replayed in a CUDA graph: its device time by its Triton name.
                r.time_ms = timed.replayed_ms[name]
                r.launches = round(timed.replayed_n[name])
            if i not in p.owner:
                r.why.setdefault("time_ms", "never launched from the wrapper's call()")
                r.why.setdefault("bytes", r.why["time_ms"])
            elif r.time_ms is None:
                r.why.setdefault("time_ms", NOT_TIMED)
    return scale


def kernel_dicts(
    graphs: list[CompiledGraph], results: list[list[KernelResult]]
) -> list[dict[str, Any]]:
    out = []
    for g, res in zip(graphs, results, strict=True):
        for k, r in zip(g.kernels, res, strict=True):
            out.append(
                {
                    "compile_id": g.compile_id,
                    "graph": k.graph,
                    "name": k.name,
                    "order": k.order,
                    "time_ms": r.time_ms,
                    "spread_ms": r.spread_ms,
                    "launches": r.launches,
                    "bytes": r.bytes,
                    "eager_ms": r.eager_ms,
                    "why": {f: w for f, w in r.why.items() if getattr(r, f) is None},
                }
            )
    return out
