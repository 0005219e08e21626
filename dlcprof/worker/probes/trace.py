"""Live compile events from torch's structured-trace logger (the feed behind tlparse).

``TraceDispatcher`` is pure: it is fed ``(metadata, payload, thread)`` triples,
exactly what a ``torch.__trace`` log record carries, and turns them into
dlcprof events. ``install`` is the only torch-facing part: it puts a
``logging.Handler`` at position 0 of ``trace_log.handlers`` (docs/torch-notes.md §1:
appended, it would miss the first ``B dynamo``; never replace ``Handler.lock``)
and one on ``torch._dynamo.convert_frame`` for the recompile-limit warning.
Records arrive from compile pool threads too: the dispatcher locks.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
import logging
import os
import re
import sysconfig
import threading
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import IO, Any

from dlcprof import events as ev
from dlcprof.text import in_torch
from dlcprof.worker.probes import ProbeNotes, Sink
from dlcprof.worker.probes.autotune import AutotuneCollector
from dlcprof.worker.probes.kernels import KernelCollector

PROBE = "trace"

# compilation_metrics fields kept in CompileFinished.metrics (as torch names them).
METRIC_FIELDS = (
    "co_name",
    "co_filename",
    "co_firstlineno",
    "frame_key",
    "is_forward",
    "start_time_us",
    "end_time_us",
    "duration_us",
    "entire_frame_compile_time_s",
    "backend_compile_time_s",
    "inductor_compile_time_s",
    "code_gen_time_s",
    "triton_compile_time_us",
    "compile_time_autotune_time_us",
    "dynamo_cumulative_compile_time_us",
    "aot_autograd_cumulative_compile_time_us",
    "inductor_cumulative_compile_time_us",
    "inductor_code_gen_cumulative_compile_time_us",
    "backward_cumulative_compile_time_us",
    "pre_grad_pass_time_us",
    "joint_graph_pass_time_us",
    "post_grad_pass_time_us",
    "gc_time_us",
    "guard_latency_us",
    "structured_logging_overhead_s",
    "dynamo_time_before_restart_s",
    "restart_reasons",
    "runtime_cudagraphify_time_us",
    "runtime_triton_autotune_time_us",
    "guard_count",
    "shape_env_guard_count",
    "graph_op_count",
    "graph_node_count",
    "graph_input_count",
    "ir_count",
    "num_graph_breaks",
    "cache_size",
    "accumulated_cache_size",
    "recompile_reason",
    "fail_type",
    "fail_reason",
    "fail_user_frame_filename",
    "fail_user_frame_lineno",
    "cudagraph_skip_reason",
    "inductor_fx_local_cache_hit_count",
    "inductor_fx_local_cache_miss_count",
    "inductor_fx_remote_cache_hit_count",
    "inductor_fx_remote_cache_miss_count",
    "aotautograd_local_cache_hit_count",
    "aotautograd_local_cache_miss_count",
    "aotautograd_remote_cache_hit_count",
    "aotautograd_remote_cache_miss_count",
    "remote_cache_time_saved_s",
    "triton_kernel_compile_times_us",
    "non_compliant_ops",
    "compliant_custom_ops",
    "has_guarded_code",
)

# DDPOptimizer's split of one Dynamo graph at DDP's bucket boundaries.
DDP_SPLIT = "optimize_ddp_split_graph"
DDP_PIECE = "optimize_ddp_split_child"

# Record names the dispatcher reads (also what the tee keeps for fixtures).
CONSUMED = frozenset(
    {
        "chromium_event",
        "compilation_metrics",
        "bwd_compilation_metrics",
        "create_symbol",
        "inductor_output_code",
        "inductor_post_grad_graph",
        "dynamo_output_graph",
        "recompile_reasons",
        "dynamo_graph_break_reason",
        "fx_graph_cache_hit",
        "fx_graph_cache_miss",
        "fx_graph_cache_bypass",
        "inductor_provenance_tracking_node_mappings",
        "inductor_provenance_tracking_kernel_stack_traces",
        DDP_SPLIT,
        DDP_PIECE,
    }
)

_KEEP = ("compile_id", "start_time", "stack_trace")
# The phase around a lazily compiled backward: what runs inside it (phases on
# any thread, kernels, the cache state) belongs to the backward compile, though
# torch stamps it with the forward's compile id.
BACKWARD_PHASE = "entire_backward_compile"
_LIMIT_TEXT = ("recompile limit", "recompile_limit", "cache_size_limit", "cache size limit")


# --- pure payload parsers ---------------------------------------------------------


def record_name(metadata: dict[str, Any]) -> str:
    """The event name: the first key, or the artifact's name."""
    if not metadata:
        return ""
    key = next(iter(metadata))
    if key == "artifact":
        art = metadata.get("artifact")
        if isinstance(art, dict) and art.get("name"):
            return str(art["name"])
    return key


def compile_id_of(metadata: dict[str, Any]) -> str | None:
    """The compile id "frame/compile" from record metadata (the attempt is not part of it)."""
    frame, comp = metadata.get("frame_id"), metadata.get("frame_compile_id")
    if frame is None or comp is None:
        return None
    return f"{frame}/{comp}"


@dataclass
class GraphBreakInfo:
    reason: str
    location: str  # the innermost frame in the user's own code
    hints: list[str] = field(default_factory=list)
    detail: str = ""  # where Dynamo broke, when that is elsewhere (inside torch)


_GB_AT_RE = re.compile(r"Graph break in user code at (.+):(\d+)\s*$", re.M)
_GB_FILE_RE = re.compile(r'File "([^"]+)", line (\d+)')


def _package_dir(name: str) -> str | None:
    """Where a package is installed, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.realpath(locations[0]) + os.sep if locations else None


def _library_dirs() -> tuple[str, ...]:
    paths = sysconfig.get_paths()
    dirs = {os.path.realpath(paths[k]) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    return tuple(d + os.sep for d in dirs)


_TORCH_DIR = _package_dir("torch")
_LIBRARY_DIRS = _library_dirs()
# By name too, for tracebacks recorded on another machine.
_HARNESS_RE = re.compile(r"[/\\]dlcprof[/\\](?!bundled[/\\])")
_LIBRARY_RE = re.compile(r"[/\\](?:site|dist)-packages[/\\]")


def frame_owner(path: str) -> str:
    """Whose code a traceback frame is in: "harness" (dlcprof's worker, the
    interpreter), "torch", "library" (the standard library, installed
    packages, the bundled workloads) or "user"."""
    if path.startswith("<"):
        return "harness"
    real = os.path.realpath(path)
    if _HARNESS_RE.search(real):
        return "harness"
    if (_TORCH_DIR is not None and real.startswith(_TORCH_DIR)) or in_torch(real):
        return "torch"
    return "library" if real.startswith(_LIBRARY_DIRS) or _LIBRARY_RE.search(real) else "user"


def parse_graph_break(payload: str, owner: Callable[[str], str] = frame_owner) -> GraphBreakInfo:
    """Reason, location and hints of a ``dynamo_graph_break_reason`` artifact.

    Dynamo counts the frames it inlines as user code, so its own location for
    a break inside ``opt.step()`` is torch/optim/optimizer.py. The location
    given is the innermost frame of the user's traceback in the user's own
    files (else in another library, e.g. transformers); Dynamo's is the detail.
    """
    text = payload or ""
    m = _GB_AT_RE.search(text)
    dynamo_at = f"{m.group(1)}:{m.group(2)}" if m else ""
    user = text.split("User code traceback:", 1)
    frames = _GB_FILE_RE.findall(user[1].split("\n\n", 1)[0]) if len(user) > 1 else []
    location = ""
    for wanted in ("user", "library"):
        found = [f"{path}:{line}" for path, line in frames if owner(path) == wanted]
        if found:
            location = found[-1]
            break
    innermost = dynamo_at or (f"{frames[-1][0]}:{frames[-1][1]}" if frames else "")
    location = location or innermost
    detail = innermost if innermost != location else ""
    reason = ""
    if "Graph Break Reason:" in text:
        after = text.split("Graph Break Reason:", 1)[1]
        head = after.split("Explanation:", 1)[0] if "Explanation:" in after else after
        lines = [ln.strip() for ln in head.splitlines() if ln.strip()]
        # The last line before "Explanation:" is the break type ("Data-dependent
        # branching", "Unsupported Tensor.backward() call"); the first line may
        # be a generic "Encountered graph break when ...".
        if lines:
            reason = lines[-1] if "Explanation:" in after else lines[0]
    if not reason:
        reason = next((ln.strip() for ln in text.splitlines() if ln.strip()), "graph break")
    hints = []
    for ln in text.split("User code traceback:", 1)[0].splitlines():
        s = ln.strip()
        if s.startswith("Hint:"):
            hints.append(s[len("Hint:") :].strip())
    return GraphBreakInfo(reason=reason, location=location, hints=hints, detail=detail)


def parse_recompile_reasons(payload: str | None) -> list[str]:
    """One reason per failed cache entry; the payload is a JSON list or a bare line."""
    if not payload:
        return []
    try:
        data = json.loads(payload)
    except ValueError:
        data = payload
    if isinstance(data, list):
        return [str(x) for x in data if str(x).strip()]
    return [str(data).strip()] if str(data).strip() else []


def parse_chromium(payload: str | None) -> dict[str, Any] | None:
    if not payload:
        return None
    try:
        d = json.loads(payload)
    except ValueError:
        return None
    return d if isinstance(d, dict) else None


def is_limit_failure(record: dict[str, Any]) -> bool:
    reason = str(record.get("fail_reason") or "").lower()
    return bool(record.get("fail_type")) and any(t in reason for t in _LIMIT_TEXT)


_WARN_FN_RE = re.compile(r"function: '([^']+)'(?: \(([^)]*)\))?")
_WARN_LIMIT_RE = re.compile(r"recompile_limit \((\d+)\)|cache_size_limit \((\d+)\)")


def parse_limit_warning(message: str) -> tuple[str, int | None] | None:
    """(function, limit) from dynamo's "hit config.recompile_limit" warning, else None."""
    low = message.lower()
    if not any(t in low for t in _LIMIT_TEXT):
        return None
    fn = _WARN_FN_RE.search(message)
    lim = _WARN_LIMIT_RE.search(message)
    limit = int(next(g for g in lim.groups() if g)) if lim else None
    return (fn.group(1) if fn else "?", limit)


def failed_at(record: dict[str, Any]) -> str:
    """A failed compile's "file:line": torch's user frame of the failure, else the
    first line of the function it was compiling; "" when the record names neither."""
    for file, line in (
        ("fail_user_frame_filename", "fail_user_frame_lineno"),
        ("co_filename", "co_firstlineno"),
    ):
        if record.get(file) and record.get(line) is not None:
            return f"{record[file]}:{record[line]}"
    return ""


def compile_wall_s(record: dict[str, Any]) -> float:
    if record.get("duration_us") is not None:
        return float(record["duration_us"]) / 1e6
    for key in ("entire_frame_compile_time_s", "inductor_compile_time_s"):
        if record.get(key) is not None:
            return float(record[key])
    return 0.0


def combine_cache_states(states: list[str]) -> str | None:
    if not states:
        return None
    if "miss" in states:
        return "miss"
    if all(s == "hit" for s in states):
        return "hit"
    return "bypass"


# --- the dispatcher ------------------------------------------------------------


@dataclass
class CompileCounts:
    """What the sweep asks between calls."""

    compiles: int = 0  # successful frame compiles (forward records)
    graphs: int = 0  # of those, the ones that made a graph (a tensor op in it)
    backward_compiles: int = 0
    failures: int = 0
    limit_hits: int = 0
    wall_s: float = 0.0  # sum of CompileFinished.wall_s (forward and backward)
    reasons: list[str] = field(default_factory=list)
    eager_calls: int = 0  # calls run eager past the recompile limit (probes/guards.py)


class TraceDispatcher:
    """Structured-trace records in, dlcprof events out (thread-safe, no torch)."""

    def __init__(
        self,
        sink: Sink,
        run_id: str,
        kernels: KernelCollector | None = None,
        tee: IO[str] | None = None,
        autotune: AutotuneCollector | None = None,
    ) -> None:
        self.sink = sink
        self.run_id = run_id
        self.kernels = kernels
        self.autotune = autotune  # gets torch's timers of each autotuned op
        self.tee = tee
        self.prefix = ""  # set after torch._dynamo.reset(): compile ids restart at 0/0
        self.counts = CompileCounts()
        self._lock = threading.RLock()
        self._open: dict[tuple[int, str], list[tuple[float, str | None]]] = {}
        self._cache: dict[str, list[str]] = {}
        self._frame_names: dict[str, str] = {}
        self._limit_functions: set[str] = set()
        self._symbols: set[tuple[str | None, str, str]] = set()
        self._backward: set[str] = set()  # compile ids whose backward is compiling
        self._last_cid: str | None = None
        self._errors: set[str] = set()
        self._refusal: ev.CompileFinished | None = None  # the first frame Dynamo refused
        # "file:line" of the latest failed compile in the user's code, as torch names it.
        self.failed_at = ""
        self._breaks: dict[str | None, ev.GraphBroken] = {}  # the first break per compile id
        # DDPOptimizer: the pieces of each split compile, the Inductor graphs of
        # each compile so far, and the buckets DDPOptimizer chose last (probes/ddp.py).
        self._pieces: dict[str, list[str]] = {}
        self._inductor_graphs: dict[str, int] = {}
        self._buckets: tuple[int | None, list[int], list[list[str]]] | None = None
        self.on_limit: Callable[[], None] | None = None  # called at the first limit hit

    # Public -------------------------------------------------------------------

    def feed(self, metadata: dict[str, Any], payload: str | None, thread: int) -> None:
        name = record_name(metadata)
        if name not in CONSUMED:
            return
        with self._lock:
            if self.tee is not None:
                self._tee(metadata, payload, thread)
            try:
                self._dispatch(name, metadata, payload, thread)
            except Exception as e:  # noqa: BLE001 - a parse bug must never break a compile
                key = f"{name}: {type(e).__name__}"
                if key not in self._errors:
                    self._errors.add(key)
                    self.sink.emit(
                        ev.LogEmitted(
                            run_id=self.run_id,
                            level="warning",
                            source="probe",
                            message=f"trace probe could not read a {name} record: "
                            f"{type(e).__name__}: {e}",
                        )
                    )

    def ddp_buckets(self, cap: int | None, sizes: list[int], params: list[list[str]]) -> None:
        """DDPOptimizer chose its buckets (probes/ddp.py): they belong to the split
        record that follows on this compile."""
        with self._lock:
            self._buckets = (cap, sizes, params)

    def on_limit_warning(self, message: str) -> None:
        parsed = parse_limit_warning(message)
        if parsed is None:
            return
        function, limit = parsed
        with self._lock:
            self._limit_hit(function, limit, message.strip())

    def new_generation(self, prefix: str) -> None:
        """After torch._dynamo.reset(): torch restarts compile ids at 0/0, so later
        ids get ``prefix`` to stay unique within the run."""
        with self._lock:
            self.flush()
            self.prefix = prefix
            self._open.clear()
            self._backward.clear()

    @property
    def last_compile_id(self) -> str | None:
        """The compile id of the newest record: the compile in progress."""
        return self._last_cid

    def snapshot(self) -> CompileCounts:
        with self._lock:
            return dataclasses.replace(self.counts, reasons=list(self.counts.reasons))

    def nothing_compiled(self) -> ev.NothingCompiled | None:
        """None once a frame made a graph; else what torch said of the refusal."""
        with self._lock:
            c = self.counts
            if c.graphs:
                return None
            refused = self._refusal
            brk = self._breaks.get(refused.compile_id if refused else None) or next(
                iter(self._breaks.values()), None
            )
            return ev.NothingCompiled(
                run_id=self.run_id,
                frames=c.compiles + c.failures,
                fail_type=refused.fail_type if refused else None,
                fail_reason=refused.fail_reason if refused else None,
                location=brk.location if brk else "",
                hints=list(brk.hints) if brk else [],
            )

    def flush(self) -> None:
        """Emit kernels still buffered (a compile that failed half way)."""
        with self._lock:
            if self.kernels is not None:
                self.kernels.flush_all()

    # Dispatch -----------------------------------------------------------------

    def _cid(self, raw: Any) -> str | None:
        """torch's compile id as dlcprof names it: with the generation prefix,
        and as the backward's id while that compile's backward is compiling."""
        if raw is None or raw == "None" or raw == "":
            return None
        cid = f"{self.prefix}{raw}"
        return ev.backward_id(cid) if cid in self._backward else cid

    def _dispatch(self, name: str, md: dict[str, Any], payload: str | None, thread: int) -> None:
        chromium = parse_chromium(payload) if name == "chromium_event" else None
        if chromium and chromium.get("name") == BACKWARD_PHASE and chromium.get("ph") == "B":
            raw = (chromium.get("args") or {}).get("compile_id") or compile_id_of(md)
            if self._cid(raw) is not None:
                self._backward.add(f"{self.prefix}{raw}")
        md_cid = self._cid(compile_id_of(md))
        if md_cid is not None:
            self._last_cid = md_cid
        if name == "chromium_event":
            self._chromium(chromium, md_cid, thread)
        elif name in ("compilation_metrics", "bwd_compilation_metrics"):
            record = md.get(name) or {}
            self._metrics(record, name == "bwd_compilation_metrics", md, md_cid)
        elif name == "recompile_reasons":
            reasons = parse_recompile_reasons(payload)
            if reasons:
                self.counts.reasons.append(reasons[0])
                self.sink.emit(
                    ev.RecompileTriggered(
                        run_id=self.run_id, compile_id=md_cid, reason="; ".join(reasons)
                    )
                )
        elif name == "dynamo_graph_break_reason":
            info = parse_graph_break(payload or "")
            broken = ev.GraphBroken(
                run_id=self.run_id,
                compile_id=md_cid,
                reason=info.reason,
                location=info.location,
                hints=info.hints,
                detail=info.detail,
            )
            self._breaks.setdefault(md_cid, broken)
            self.sink.emit(broken)
        elif name == "create_symbol":
            d = md.get("create_symbol") or {}
            symbol, source = str(d.get("symbol", "?")), str(d.get("source", ""))
            # Dynamo creates each symbol again when it restarts the trace of a frame.
            if (md_cid, symbol, source) in self._symbols:
                return
            self._symbols.add((md_cid, symbol, source))
            self.sink.emit(
                ev.DimMadeDynamic(
                    run_id=self.run_id, compile_id=md_cid, symbol=symbol, source=source
                )
            )
        elif name in (DDP_SPLIT, DDP_PIECE) and md_cid is not None:
            pieces = self._pieces.setdefault(md_cid, [])
            if name == DDP_PIECE:
                pieces.append(str((md.get(name) or {}).get("name") or f"submod_{len(pieces)}"))
        elif name.startswith("fx_graph_cache_"):
            if md_cid is not None:
                self._cache.setdefault(md_cid, []).append(name.rsplit("_", 1)[-1])
        elif md_cid is not None:
            if name == "inductor_output_code":  # one per Inductor graph, hit or miss
                self._inductor_graphs[md_cid] = self._inductor_graphs.get(md_cid, 0) + 1
            if self.kernels is None:
                return
            if name == "inductor_post_grad_graph":
                self.kernels.post_grad(md_cid, payload)
            elif name == "inductor_output_code":
                self.kernels.output_code(md_cid, payload, (md.get(name) or {}).get("filename"))
            elif name == "dynamo_output_graph":
                self.kernels.dynamo_graph(md_cid, payload)
            elif name == "inductor_provenance_tracking_node_mappings":
                self.kernels.mappings(md_cid, payload)
            elif name == "inductor_provenance_tracking_kernel_stack_traces":
                self.kernels.stack_traces(md_cid, payload)

    def _chromium(self, d: dict[str, Any] | None, md_cid: str | None, thread: int) -> None:
        if not d or d.get("ph") not in ("B", "E") or "name" not in d or "ts" not in d:
            return
        name = str(d["name"])
        ts = float(d["ts"]) / 1e6  # µs since the epoch -> s
        args = d.get("args") or {}
        # Pool-thread events carry no compile id: they belong to the compile in flight.
        cid = self._cid(args.get("compile_id")) or md_cid or self._last_cid
        key = (thread, name)
        if d["ph"] == "B":
            if self.autotune is not None:
                self.autotune.phase_began(name)
            self._open.setdefault(key, []).append((ts, cid))
            self.sink.emit(
                ev.PhaseStarted(run_id=self.run_id, compile_id=cid, name=name, thread=thread, t=ts)
            )
            return
        stack = self._open.get(key)
        if not stack:
            return  # an End whose Begin came before the probe was installed
        start, begin_cid = stack.pop()
        cache_state = args.get("cache_state")
        if self.autotune is not None:
            self.autotune.phase_ended(name, thread, max(0.0, ts - start), cid or begin_cid)
        self.sink.emit(
            ev.PhaseEnded(
                run_id=self.run_id,
                compile_id=cid or begin_cid,
                name=name,
                thread=thread,
                start_t=start,
                duration_s=max(0.0, ts - start),
                cache_state=str(cache_state) if cache_state else None,
                t=ts,
            )
        )

    def _metrics(
        self, record: dict[str, Any], is_backward: bool, md: dict[str, Any], md_cid: str | None
    ) -> None:
        is_backward = is_backward or record.get("is_forward") is False
        cid = self._cid(record.get("compile_id")) or md_cid or "?"
        if is_backward:
            self._backward.discard(cid.removesuffix(ev.BACKWARD))
            cid = ev.backward_id(cid)
        if self.kernels is not None:
            self.kernels.flush(cid)  # kernels first, then the compile that made them
        frame = cid.rsplit("/", 1)[0]
        if record.get("co_name"):
            self._frame_names[frame] = str(record["co_name"])
        wall = compile_wall_s(record)
        start = record.get("start_time")
        if start is None and record.get("start_time_us") is not None:
            start = float(record["start_time_us"]) / 1e6
        fail_type = record.get("fail_type")
        self.counts.wall_s += wall
        if fail_type:
            self.counts.failures += 1
            self.failed_at = failed_at(record)
        elif is_backward:
            self.counts.backward_compiles += 1
        else:
            self.counts.compiles += 1
            # No op count field (an older torch) counts as a graph: "nothing compiled"
            # needs proof. A null one is a frame Dynamo skipped without a graph.
            self.counts.graphs += record.get("graph_op_count", 1) not in (0, None)
        metrics = {k: record[k] for k in METRIC_FIELDS if k in record}
        finished = ev.CompileFinished(
            run_id=self.run_id,
            compile_id=cid,
            wall_s=wall,
            start_t=float(start) if start is not None else ev.now() - wall,
            is_backward=is_backward,
            recompile_reason=record.get("recompile_reason"),
            fail_type=fail_type,
            fail_reason=_first_line(record.get("fail_reason")),
            graph_op_count=record.get("graph_op_count"),
            guard_count=record.get("guard_count"),
            cache=combine_cache_states(self._cache.pop(cid, [])),
            metrics=metrics,
        )
        if fail_type and not is_backward and self._refusal is None:
            self._refusal = finished
        graphs = self._inductor_graphs.pop(cid, 0)
        if not is_backward:
            self._ddp_split(cid, graphs)
        self.sink.emit(finished)
        if is_limit_failure(record):
            function = self._frame_names.get(frame) or str(record.get("co_name") or "?")
            self._limit_hit(function, None, str(record.get("fail_reason") or ""))

    def _ddp_split(self, cid: str, graphs: int) -> None:
        """The split of this forward compile, if DDPOptimizer split it (before its
        CompileFinished, so a view of the compile has it)."""
        pieces = self._pieces.pop(cid, None)
        buckets, self._buckets = self._buckets, None
        if not pieces:
            return
        cap, sizes, params = buckets if buckets is not None else (None, [], [])
        self.sink.emit(
            ev.GraphSplitForDDP(
                run_id=self.run_id,
                compile_id=cid,
                pieces=pieces,
                forward_graphs=graphs,
                bucket_cap_bytes=cap,
                bucket_bytes=sizes if len(sizes) == len(pieces) else [],
                bucket_params=params if len(params) == len(pieces) else [],
            )
        )

    def _limit_hit(self, function: str, limit: int | None, message: str) -> None:
        if function in self._limit_functions:
            return
        self._limit_functions.add(function)
        self.counts.limit_hits += 1
        if self.on_limit is not None:
            self.on_limit()
        self.sink.emit(
            ev.RecompileLimitHit(
                run_id=self.run_id, function=function, limit=limit, message=message
            )
        )

    def _tee(self, md: dict[str, Any], payload: str | None, thread: int) -> None:
        """Record what the dispatcher reads, minus bulk it never looks at."""
        name = record_name(md)
        if name == "chromium_event" and payload:
            d = parse_chromium(payload) or {}
            # End events of `dynamo` carry the whole compile record (configs included).
            args = d.get("args") or {}
            d["args"] = {
                k: v
                for k, v in args.items()
                if v is None or isinstance(v, (int, float, bool)) or len(str(v)) <= 200
            }
            payload = json.dumps(d, separators=(",", ":"))
        elif name.startswith("fx_graph_cache_"):
            payload = None  # the cache key's components: kilobytes, unused
        elif name in ("compilation_metrics", "bwd_compilation_metrics"):
            record = md.get(name) or {}
            md = dict(md)
            md[name] = {k: v for k, v in record.items() if k in METRIC_FIELDS or k in _KEEP}
        elif name == "create_symbol":
            md = dict(md)  # the Python stacks it was created in: kilobytes, unused
            md[name] = {k: v for k, v in (md.get(name) or {}).items() if "stack" not in k}
        try:
            self.tee.write(  # type: ignore[union-attr]
                json.dumps({"metadata": md, "payload": payload, "thread": thread}, default=str)
                + "\n"
            )
        except (OSError, ValueError):
            self.tee = None


def _first_line(text: Any) -> str | None:
    """The first line, plus the next when the first only introduces it ("... raised:")."""
    lines = [ln.strip() for ln in str(text or "").splitlines() if ln.strip()]
    if not lines:
        return None
    if lines[0].endswith(":") and len(lines) > 1:
        return f"{lines[0]} {lines[1]}"
    return lines[0]


# --- torch adapter -----------------------------------------------------------------


class _TraceHandler(logging.Handler):
    def __init__(self, dispatcher: TraceDispatcher) -> None:
        super().__init__(logging.DEBUG)
        self.dispatcher = dispatcher

    def emit(self, record: logging.LogRecord) -> None:
        md = getattr(record, "metadata", None)
        if isinstance(md, dict):
            self.dispatcher.feed(md, getattr(record, "payload", None), record.thread or 0)


class _LimitWarningHandler(logging.Handler):
    def __init__(self, dispatcher: TraceDispatcher) -> None:
        super().__init__(logging.WARNING)
        self.dispatcher = dispatcher

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.dispatcher.on_limit_warning(record.getMessage())
        except Exception:  # noqa: BLE001 - never break the compile that warned
            pass


def install(dispatcher: TraceDispatcher, notes: ProbeNotes) -> Callable[[], None] | None:
    """Attach the handlers; returns an uninstall function, or None when unavailable."""
    try:
        from torch._logging._internal import trace_log
    except Exception as e:  # noqa: BLE001
        notes.unavailable(
            PROBE,
            f"torch._logging._internal.trace_log not found ({type(e).__name__}): "
            "no live phases, compile records, kernels, recompiles or graph breaks",
        )
        return None
    handler = _TraceHandler(dispatcher)
    # Position 0: torch's lazy placeholder handler removes itself while the list
    # is iterated for the very first record; appended, we would miss `B dynamo`.
    trace_log.handlers.insert(0, handler)
    if trace_log.level > logging.DEBUG or trace_log.level == logging.NOTSET:
        trace_log.setLevel(logging.DEBUG)
    warn_logger = logging.getLogger("torch._dynamo.convert_frame")
    warn_handler = _LimitWarningHandler(dispatcher)
    warn_logger.addHandler(warn_handler)

    def uninstall() -> None:
        if handler in trace_log.handlers:
            trace_log.handlers.remove(handler)
        warn_logger.removeHandler(warn_handler)

    return uninstall
