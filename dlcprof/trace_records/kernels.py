"""Fused kernels: which kernels Inductor generated and which aten ops each one fuses,
read from torch's structured-trace payloads without torch (the live probe feeds it
through ``worker/probes/kernels.py``, which asks torch which names are aten ops;
``dlcprof import`` feeds it a log's records). One idea past 600 lines: Inductor's
and AOTInductor's generated code, read as kernels.

Three structured-trace payloads per compiled graph are combined (docs/torch-notes.md §2):

- ``inductor_output_code``: the generated wrapper. Kernel definitions
  (``NAME = async_compile.<kind>(...)`` with the source inline), the call order
  in ``call(...)`` and the ``partition_N(...)`` functions it calls (graph
  partitions, under CUDA graphs) and the ``# [Provenance debug handles] NAME:N`` comment
  before each call; extern calls (``extern_kernels.mm``, ``torch.ops.*``).
- ``inductor_post_grad_graph``: post-grad FX node name -> aten op.
- ``inductor_provenance_tracking_node_mappings`` (``cppCodeToPost``:
  "NAME:N" -> post-grad nodes) and ``..._kernel_stack_traces`` ("NAME:N" ->
  user source lines), with ``provenance_tracking_level = 1``.

AOTInductor logs its generated C++ instead (``graph_dump`` records): the
wrapper (``inductor_aot_wrapper_code``: its ``run_impl`` launches each kernel,
a Triton one through ``call_NAME`` with its source inline in a comment, and
calls ``aoti_torch_<device>_<op>_out`` for extern ops) and, on CPU, the
kernels' code (``inductor_aot_kernel_code``: ``extern "C" void NAME(...) {``);
its provenance maps are the same (``parse_aot_code``).

All three arrive on FX-cache hits too, so kernels show on a warm cache. The
provenance level is kept out of the cache key (``provenance.py``): a
program's own entries hit, and they carry no provenance, so there each
kernel's user lines are read off the post-grad graph's ``# File:`` comments
by op (``lines_by_op``).

Kind: the exact route (wrapping ``Scheduler._codegen`` and asking each node
``is_template()/is_reduction()``) is not taken: on an FX/AOT cache hit the
scheduler never runs, so it would lose every kernel of a warm run. The
heuristic below held on every case tried: extern by call form; Triton names
carry it (``triton_poi_/red_/per_/tem_``); a C++ template uses ``micro_gemm``;
a C++ reduction keeps ``tmp_acc`` accumulators or fuses a reduction op.

Lazily compiled backward graphs come with an empty ``cppCodeToPost`` in torch
2.13 (provenance globals are only set inside the forward compile): there the
fused ops are read back from the kernel name, which Inductor builds from the
original aten ops (``cpp_fused_expand_gelu_gelu_backward_0``).
"""

from __future__ import annotations

import json
import re
import threading
from collections.abc import Callable
from dataclasses import field
from typing import Any

from dlcprof import events as ev
from dlcprof.data import data

_DEF_RE = re.compile(r"^(\w+) = async_compile\.(\w+)\(", re.M)
_TRIPLE_RE = re.compile(r"r?('''|\"\"\")(.*?)\1", re.S)
_AOT_ID_RE = re.compile(r"^# AOT ID: \['\d+_(\w+)'\]", re.M)
_PARTITION_CALL_RE = re.compile(r"\bpartitions\[(\d+)\]\(")
_HANDLE_RE = re.compile(r"#\s*\[Provenance debug handles\]\s*(\S+)")
_ATEN_COMMENT_RE = re.compile(r"Original ATen:\s*\[([^\]]*)\]")
_CALL_TOKEN_RE = re.compile(r"(?<![\w.])([A-Za-z_][\w.]*)\(")
_EXTERN_RE = re.compile(
    r"^(?:extern_kernels\.\w+|torch\.ops\.\w+\.\w+(?:\.\w+)?|aten\.\w+(?:\.\w+)?)$"
)
# AOTInductor's C++: a Triton kernel's source in the wrapper, a C++ kernel's
# definition (a declaration ends in ";"), an extern op's shim.
_AOT_TRITON_RE = re.compile(r"async_compile\.(\w+)\(\s*'(\w+)',\s*r?'{3}(.*?)'{3}", re.S)
_AOT_CPP_DEF_RE = re.compile(r'^extern "C"\s+void\s+(\w+)\([^;{]*\)\s*\{', re.M)
_AOT_EXTERN_RE = re.compile(r"^aoti_torch_(?:cpu|cuda|xpu|mps)_(\w+?)(?:_out)?$")
_AOT_RUN_RE = re.compile(r"AOTInductorModel::run_impl\(")
AOT_WRAPPER, AOT_KERNELS = "inductor_aot_wrapper_code", "inductor_aot_kernel_code"
_NODE_RE = re.compile(
    r"^\s+(\w+)(?:\s*:\s*\"[^\"]*\")?\s*=\s*torch\.ops\.(\w+)\.(\w+)(?:\.\w+)?\(", re.M
)
# The comment before a run of nodes (after an annotation or a recompute tag, if
# any): their user line, or that they have none.
_FILE_COMMENT_RE = re.compile(
    r"^\s+#[^\n]*? (?:File: (.+?:\d+) in [^\n]*?, code: ([^\n]*)|No stacktrace found[^\n]*)$", re.M
)
_FRAME_RE = re.compile(r'File "([^"]+)", line (\d+)(?:, in [^\n]*)?\n([^\n]*)')
_KERNEL_SUFFIX_RE = re.compile(r"_\d+$")
_FUSED_PREFIX_RE = re.compile(r"^(?:cpp|triton)_(?:(?:poi|red|per|tem|for|mix)_)?fused_")

# Wrapper helpers that look like calls but launch nothing.
_NOT_KERNELS_NS = ("torch.ops.inductor.", "aten._assert", "torch.ops.aten._assert")

# aten ops that reduce (post-grad names, and original names kernel names carry).
REDUCTION_OPS = frozenset(
    {
        "sum",
        "mean",
        "amax",
        "amin",
        "max",
        "min",
        "argmax",
        "argmin",
        "prod",
        "var",
        "var_mean",
        "std",
        "std_mean",
        "any",
        "all",
        "logsumexp",
        "norm",
        "linalg_vector_norm",
        "native_layer_norm",
        "native_group_norm",
        "native_batch_norm",
        "_native_batch_norm_legit",
        "_native_batch_norm_legit_functional",
        "_native_batch_norm_legit_no_training",
        "_softmax",
        "_log_softmax",
        "softmax",
        "log_softmax",
        "cumsum",
        "cumprod",
        "native_layer_norm_backward",
        "_softmax_backward_data",
        "_log_softmax_backward_data",
        "native_batch_norm_backward",
        "nll_loss_forward",
        "nll_loss_backward",
        "embedding_dense_backward",
    }
)


# --- pure parsing -----------------------------------------------------------------


@data
class KernelCall:
    name: str  # kernel name, or the extern call target ("extern_kernels.mm")
    extern: bool
    handle: str | None  # "NAME:N" provenance key, when the wrapper carries one
    aten_comment: list[str] = field(default_factory=list)  # "Original ATen: [...]"


@data
class OutputCode:
    graph: str | None  # "inference" | "forward" | "backward" (from the AOT ID)
    definitions: dict[str, tuple[str, str]]  # name -> (async_compile kind, source)
    calls: list[KernelCall]


def parse_output_code(code: str) -> OutputCode:
    """Kernel definitions and the launch order of one generated wrapper module."""
    m = _AOT_ID_RE.search(code)
    graph = m.group(1) if m else None
    definitions: dict[str, tuple[str, str]] = {}
    for d in _DEF_RE.finditer(code):
        name, kind = d.group(1), d.group(2)
        src = _TRIPLE_RE.search(code, d.end())
        # Only take a source that belongs to this definition (before the next one).
        nxt = _DEF_RE.search(code, d.end())
        if src and (nxt is None or src.start() < nxt.start()):
            definitions[name] = (kind, src.group(2).strip("\n"))
        else:
            definitions[name] = (kind, "")
    return OutputCode(graph, definitions, _parse_calls(_call_body(code), definitions))


def parse_aot_code(wrapper: str, kernel_code: str | None) -> OutputCode:
    """Kernel definitions and the launch order of AOTInductor's generated C++:
    the wrapper's ``run_impl``, and the CPU kernels' code beside it."""
    definitions: dict[str, tuple[str, str]] = {
        m.group(2): (m.group(1), m.group(3).strip("\n")) for m in _AOT_TRITON_RE.finditer(wrapper)
    }
    code = kernel_code or ""
    starts = list(_AOT_CPP_DEF_RE.finditer(code))
    for i, m in enumerate(starts):
        end = starts[i + 1].start() if i + 1 < len(starts) else len(code)
        definitions[m.group(1)] = ("cpp", code[m.start() : end].strip("\n"))

    def target(token: str, defined: dict[str, Any]) -> tuple[str, bool] | None:
        name = token.removeprefix("call_")
        if name in defined:
            return name, False
        return (token, True) if _AOT_EXTERN_RE.match(token) else None

    # AOTInductor compiles an inference graph (torch logs it as aot_inference_graph).
    return OutputCode(
        "inference", definitions, _parse_calls(_run_impl(wrapper), definitions, target)
    )


def _run_impl(wrapper: str) -> list[str]:
    """Lines of the wrapper's ``AOTInductorModel::run_impl`` body."""
    m = _AOT_RUN_RE.search(wrapper)
    if m is None:
        return []
    body: list[str] = []
    depth, opened = 0, False
    for line in wrapper[m.end() :].splitlines():
        depth += line.count("{") - line.count("}")
        opened = opened or "{" in line
        if opened and depth <= 0:
            break
        if opened:
            body.append(line)
    return body


def _function_body(code: str, name: str) -> list[str]:
    """Lines of the function ``name`` (module level or a method), or []."""
    m = re.search(rf"^([ \t]*)def {name}\(", code, re.M)
    if m is None:
        return []
    indent = len(m.group(1))
    body = []
    for line in code[m.end() :].splitlines()[1:]:
        if line.strip() and len(line) - len(line.lstrip()) <= indent:
            break  # back at the def's level
        body.append(line)
    return body


def _call_body(code: str) -> list[str]:
    """Lines of ``call(...)`` (``def call(args)`` or ``Runner.call(self, args)``),
    each ``self.partitions[N](...)`` followed by the lines of ``partition_N``:
    with graph partitioning (CUDA graphs) the launches it can capture move
    there, and this is their order."""
    lines: list[str] = []
    for line in _function_body(code, "call"):
        lines.append(line)
        m = _PARTITION_CALL_RE.search(line.split("#", 1)[0])
        if m:
            lines += _function_body(code, f"partition_{m.group(1)}")
    return lines


def launch_target(token: str, definitions: dict[str, Any]) -> tuple[str, bool] | None:
    """(kernel name, extern) when calling ``token`` launches a kernel: a kernel
    defined in the module (``NAME(`` or Triton's ``NAME.run(``), or an extern call."""
    base = token[: -len(".run")] if token.endswith(".run") else token
    if base in definitions:
        return base, False
    if _EXTERN_RE.match(token) and not token.startswith(_NOT_KERNELS_NS):
        return token, True
    return None


def _parse_calls(
    body: list[str],
    definitions: dict[str, tuple[str, str]],
    target: Callable[[str, dict[str, Any]], tuple[str, bool] | None] = launch_target,
) -> list[KernelCall]:
    calls: list[KernelCall] = []
    handle: str | None = None
    aten: list[str] = []
    for raw in body:
        line = raw.strip()
        if line.startswith(("#", "//")):
            h = _HANDLE_RE.search(line)
            if h:
                handle = h.group(1)
            a = _ATEN_COMMENT_RE.search(line)
            if a:
                aten = [s.strip() for s in a.group(1).split(",") if s.strip()]
            continue
        if not line:
            continue
        found = None
        for token in _CALL_TOKEN_RE.findall(line.split("#", 1)[0]):
            launched = target(token, definitions)
            if launched is not None:
                found = KernelCall(launched[0], launched[1], handle, aten)
                break
        if found is not None:
            # The comments just above a launch describe it (other statements, e.g.
            # `stream0 = get_raw_stream(0)`, may sit in between).
            calls.append(found)
            handle, aten = None, []
    return calls


def parse_post_grad_graph(text: str) -> dict[str, str]:
    """Post-grad node name -> op ("aten.mm"), in graph order."""
    return {m.group(1): f"{m.group(2)}.{m.group(3)}" for m in _NODE_RE.finditer(text)}


def parse_post_grad_lines(text: str) -> dict[str, str]:
    """Post-grad node name -> "file:line code", from the ``# File:`` comment
    that heads each run of nodes traced at one user line (the node's own
    stack trace, which the printed graph carries whatever the provenance level)."""
    out: dict[str, str] = {}
    line: str | None = None
    for m in re.finditer(f"{_FILE_COMMENT_RE.pattern}|{_NODE_RE.pattern}", text, re.M):
        if m.group(0).lstrip().startswith("#"):
            line = f"{m.group(1)} {m.group(2).strip()}".rstrip() if m.group(1) else None
        elif line is not None:
            out[m.group(3)] = line
    return out


def lines_by_op(ops: list[str], nodes: dict[str, str], lines: dict[str, str]) -> list[str]:
    """The user lines of a kernel's ops, read off the post-grad graph where
    provenance is missing (a cache entry written without it): an op made at
    exactly one line of the graph gives that line; one made at several says
    nothing about which of them this kernel holds, and is left out."""
    out: list[str] = []
    for op in ops:
        found = {lines[n] for n, node_op in nodes.items() if node_op == op and n in lines}
        if len(found) == 1 and (line := found.pop()) not in out:
            out.append(line)
    return out


def parse_node_mappings(text: str, key: str = "cppCodeToPost") -> dict[str, list[str]]:
    """A provenance map, empty when untracked: ``cppCodeToPost`` ("NAME:N" ->
    post-grad node names) or ``preToPost`` (Dynamo graph node -> post-grad nodes)."""
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return {}
    mapping = data.get(key) if isinstance(data, dict) else None
    if not isinstance(mapping, dict):
        return {}
    return {str(k): [str(n) for n in v] for k, v in mapping.items() if isinstance(v, list)}


def format_frames(trace: str) -> list[str]:
    """Traceback text -> ["f.py:12 code", ...], one entry per frame."""
    return [
        f"{m.group(1)}:{m.group(2)} {m.group(3).strip()}".rstrip()
        for m in _FRAME_RE.finditer(trace)
    ]


def parse_kernel_stack_traces(text: str) -> dict[str, list[str]]:
    """Provenance key "NAME:N" -> the source lines its ops came from ("file:line
    code"), once each, in the order of the kernel's nodes.

    Each trace is the Python stack one fused node was traced in; its innermost
    frame is the line that made the op. The outer frames (``loss =
    model(x)``, a layer's call site) hold for every op of the model, so they
    say nothing about this kernel and are left out. A backward node carries
    the trace of the forward op it differentiates (AOTAutograd copies it).
    """
    try:
        data = json.loads(text)
    except (TypeError, ValueError):
        return {}
    if not isinstance(data, dict):
        return {}
    out: dict[str, list[str]] = {}
    for key, traces in data.items():
        lines: list[str] = []
        for trace in traces if isinstance(traces, list) else [traces]:
            frames = format_frames(str(trace))
            if frames and frames[-1] not in lines:
                lines.append(frames[-1])
        out[str(key)] = lines
    return out


def ops_from_kernel_name(name: str, is_op: Callable[[str], bool]) -> list[str]:
    """Inductor's descriptive name joins the original aten ops with "_": split it
    back greedily, longest known op first (``expand_gelu_gelu_backward`` ->
    expand, gelu, gelu_backward)."""
    stem = _KERNEL_SUFFIX_RE.sub("", _FUSED_PREFIX_RE.sub("", name))
    if stem == name or not stem:
        return []
    parts = stem.split("_")
    ops: list[str] = []
    i = 0
    while i < len(parts):
        for j in range(len(parts), i, -1):
            cand = "_".join(parts[i:j])
            if cand and is_op(cand):
                if f"aten.{cand}" not in ops:
                    ops.append(f"aten.{cand}")
                i = j
                break
        else:
            i += 1  # an unknown piece (e.g. a leading "_" of a private op): skip it
    return ops


def kernel_kind(name: str, source: str, fused_ops: list[str], extern: bool) -> str:
    if extern:
        return "extern"
    for prefix, kind in (
        ("triton_poi_", "pointwise"),
        ("triton_red_", "reduction"),
        ("triton_per_", "reduction"),
        ("triton_tem_", "template"),
    ):
        if name.startswith(prefix):
            return kind
    if "micro_gemm" in source or "MicroGemm" in source:
        return "template"
    if any(op.rsplit(".", 1)[-1] in REDUCTION_OPS for op in fused_ops):
        return "reduction"
    # No ops known (none given, and none read back from the name without torch to
    # say which pieces are ops, as in an import): the name's pieces are
    # Inductor's original aten ops, so a reduction op among them still says it.
    if not fused_ops and any(f"_{op}_" in f"_{name}_" for op in REDUCTION_OPS):
        return "reduction"
    if "tmp_acc" in source:  # C++ reduction accumulators
        return "reduction"
    if name.startswith(("cpp_", "triton_")) or source:
        return "pointwise"
    return "unknown"


@data
class GraphPayloads:
    """The payloads of one compiled graph (a compile id may have a forward and a backward)."""

    post_grad: str | None = None
    output_code: str | None = None
    mappings: str | None = None
    stack_traces: str | None = None
    path: str | None = None  # where the wrapper module was written (and loaded from)
    kernel_code: str | None = None  # AOTInductor's C++ kernels (CPU), beside its wrapper
    aot: bool = False  # output_code is AOTInductor's C++ wrapper


@data
class CompiledGraph:
    """A compiled graph as the profiling stage needs it, kept after its kernels
    are emitted: the wrapper module's file, its launches, its kernels and the
    provenance that joins them to the graph's nodes."""

    compile_id: str
    path: str | None
    code: OutputCode
    kernels: list[KernelInfo]
    mappings: str | None


@data
class KernelInfo:
    name: str
    kind: str
    fused_ops: list[str]
    source: str
    source_lines: list[str]
    order: int
    graph: str | None


def build_kernels(
    payloads: GraphPayloads,
    is_op: Callable[[str], bool] = lambda _: False,
    code: OutputCode | None = None,
) -> list[KernelInfo]:
    """One entry per kernel (first launch wins) and one per extern call, in call order."""
    if not payloads.output_code:
        return []
    code = code or parse_output_code(payloads.output_code)
    nodes = parse_post_grad_graph(payloads.post_grad or "")
    position = {n: i for i, n in enumerate(nodes)}
    mappings = parse_node_mappings(payloads.mappings or "")
    traces = parse_kernel_stack_traces(payloads.stack_traces or "")
    # No provenance at all (an entry the program's own run wrote): lines by op.
    graph_lines = {} if traces else parse_post_grad_lines(payloads.post_grad or "")
    by_name: dict[str, list[str]] = {}  # "NAME" -> nodes, when a call has no handle
    for key, ns in mappings.items():
        by_name.setdefault(key.rsplit(":", 1)[0], []).extend(ns)
    # A name's pieces are aten ops torch knows, or (without torch to ask, as in
    # an import) ones the graph itself holds.
    graph_ops = {op.split(".", 1)[1] for op in nodes.values() if op.startswith("aten.")}

    def named_op(piece: str) -> bool:
        return piece in graph_ops or is_op(piece)

    calls = list(code.calls)
    called = {c.name for c in calls}
    # Defined but never launched from call() (e.g. inside a subgraph): list them last.
    calls += [KernelCall(n, False, None) for n in code.definitions if n not in called]

    kernels: list[KernelInfo] = []
    seen: set[str] = set()
    for order, call in enumerate(calls):
        if not call.extern and call.name in seen:
            continue
        seen.add(call.name)
        node_names = mappings.get(call.handle or "", []) or (
            [] if call.extern else by_name.get(call.name, [])
        )
        ops: list[str] = []
        for n in sorted(node_names, key=lambda n: position.get(n, len(position))):
            op = nodes.get(n)
            if op and op not in ops:
                ops.append(op)
        if not ops and call.aten_comment:
            ops = list(dict.fromkeys(call.aten_comment))
        if not ops and not call.extern:
            ops = ops_from_kernel_name(call.name, named_op)
        if not ops and call.extern:
            ops = [_extern_op(call.name)]
        source = "" if call.extern else code.definitions.get(call.name, ("", ""))[1]
        lines = traces.get(call.handle or "", [])
        if not lines and not call.extern:
            for key, v in traces.items():
                if key.rsplit(":", 1)[0] == call.name:
                    lines = v
                    break
        if not lines and graph_lines:
            lines = lines_by_op(ops, nodes, graph_lines)
        kernels.append(
            KernelInfo(
                name=call.name,
                kind=kernel_kind(call.name, source, ops, call.extern),
                fused_ops=ops,
                source=source,
                source_lines=lines,
                order=order,
                graph=code.graph,
            )
        )
    return kernels


def _extern_op(target: str) -> str:
    """The op an extern call runs: extern_kernels.mm -> aten.mm,
    torch.ops.mkl._mkl_linear.default -> mkl._mkl_linear,
    aoti_torch_cuda_mm_out -> aten.mm."""
    aot = _AOT_EXTERN_RE.match(target)
    if aot:
        return f"aten.{aot.group(1)}"
    parts = target.split(".")
    if parts[0] == "extern_kernels":
        return f"aten.{parts[-1]}"
    if parts[:2] == ["torch", "ops"]:
        parts = parts[2:]
    if len(parts) >= 3 and parts[-1] in ("default", "Tensor", "out"):
        parts = parts[:-1]
    return ".".join(parts)


# --- the collector: payloads in, KernelGenerated out -------------------------------


class KernelCollector:
    """Buffers each compile's payloads and emits its kernels when they are complete.

    A graph is complete when its stack traces arrive (the last of the four), when
    a new graph starts for the same compile id (forward then backward), or at the
    compile's ``compilation_metrics``; ``flush_all`` catches the rest at run end.
    """

    def __init__(self, sink: ev.Sink, run_id: str, is_op: Callable[[str], bool] | None = None):
        self.sink = sink
        self.run_id = run_id
        self.is_op = is_op or (lambda _: False)
        self._pending: dict[str, GraphPayloads] = {}
        self._lock = threading.RLock()
        self.emitted = 0
        self.graphs: list[CompiledGraph] = []  # for the profiling stage
        self.dynamo_graphs: dict[str, str] = {}  # compile id -> printed Dynamo graph

    def post_grad(self, cid: str, text: str | None) -> None:
        with self._lock:
            p = self._pending.get(cid)
            if p is not None and (p.output_code or p.post_grad):
                self.flush(cid)
            self._graph(cid).post_grad = text

    def output_code(self, cid: str, text: str | None, path: str | None = None) -> None:
        with self._lock:
            p = self._pending.get(cid)
            if p is not None and p.output_code:
                self.flush(cid)
            g = self._graph(cid)
            g.output_code, g.path = text, path

    def aot_code(self, cid: str, name: str, text: str | None) -> None:
        """AOTInductor's generated C++: its wrapper, or its kernels' code."""
        with self._lock:
            g = self._graph(cid)
            if name == AOT_WRAPPER:
                g.output_code, g.aot = text, True
            else:
                g.kernel_code = text

    def dynamo_graph(self, cid: str, text: str | None) -> None:
        """The printed Dynamo graph of a frame compile (its nodes are the user's ops)."""
        with self._lock:
            if text:
                self.dynamo_graphs[cid] = text

    def mappings(self, cid: str, text: str | None) -> None:
        with self._lock:
            self._graph(cid).mappings = text

    def stack_traces(self, cid: str, text: str | None) -> None:
        with self._lock:
            self._graph(cid).stack_traces = text
            if self._pending[cid].output_code:
                self.flush(cid)

    def flush(self, cid: str) -> None:
        with self._lock:
            payloads = self._pending.pop(cid, None)
            if payloads is None or not payloads.output_code:
                return
            code = (
                parse_aot_code(payloads.output_code, payloads.kernel_code)
                if payloads.aot
                else parse_output_code(payloads.output_code)
            )
            kernels = build_kernels(payloads, self.is_op, code)
            for k in kernels:
                self.sink.emit(
                    # Its fields as they are: asdict would deep-copy every list of them.
                    ev.KernelGenerated(run_id=self.run_id, compile_id=cid, **vars(k))
                )
                self.emitted += 1
            if not payloads.aot:  # the profiling stage loads a Python wrapper module
                self.graphs.append(
                    CompiledGraph(cid, payloads.path, code, kernels, payloads.mappings)
                )

    def flush_all(self) -> None:
        with self._lock:
            for cid in list(self._pending):
                self.flush(cid)

    def _graph(self, cid: str) -> GraphPayloads:
        p = self._pending.get(cid)
        if p is None:
            p = self._pending[cid] = GraphPayloads()
        return p
