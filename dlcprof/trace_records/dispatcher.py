"""Structured-trace records in, dlcprof events out: the ``TraceDispatcher``.
One idea past 600 lines: the one reader of every record name, live and imported.

It is fed ``(metadata, payload, thread)`` triples, exactly what a
``torch.__trace`` log record carries and what a line of a ``TORCH_TRACE`` log
holds: the live probe (``worker/probes/trace.py``) feeds it records as torch
logs them. One reader per record name (``READERS``, as tlparse registers one
parser per artifact). Records arrive from compile pool threads too: the
dispatcher locks.
"""

from __future__ import annotations

import dataclasses
import json
import re
import sys
import threading
from collections.abc import Callable
from dataclasses import field
from typing import IO, Any, Protocol

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.trace_records.kernels import AOT_KERNELS, AOT_WRAPPER
from dlcprof.trace_records.payloads import (
    METRIC_FIELDS,
    Payload,
    call_site,
    combine_cache_states,
    compile_id_of,
    compile_wall_s,
    failed_at,
    first_line,
    is_limit_failure,
    parse_cache_lookup,
    parse_chromium,
    parse_graph_break,
    parse_limit_warning,
    parse_recompile_reasons,
    record_name,
    restart_is_graph_break,
)

# The printed Dynamo graph: only the kernel profile replays it (worker/profile.py).
DYNAMO_GRAPH = "dynamo_output_graph"
# DDPOptimizer's split of one Dynamo graph at DDP's bucket boundaries.
DDP_SPLIT = "optimize_ddp_split_graph"
DDP_PIECE = "optimize_ddp_split_child"

# What the tee keeps of a compilation_metrics record beside METRIC_FIELDS.
_KEEP = ("compile_id", "start_time", "stack_trace")
# The phase around a lazily compiled backward: what runs inside it (phases on
# any thread, kernels, the cache state) belongs to the backward compile, though
# torch stamps it with the forward's compile id.
BACKWARD_PHASE = "entire_backward_compile"
# Inductor's compile of a backward graph: inside a forward compile (not a lazy
# backward's), AOTAutograd compiles the backward ahead, with the forward.
BACKWARD_COMPILER_PHASE = "compile_fx.<locals>.bw_compiler"
# Dynamo's outermost phase of a frame compile, and AOTInductor's of its compile
# (which torch logs with no compile id).
FRAME_PHASE, AOTI_PHASE = "dynamo", "compile_fx_aot"
AOT_POST_GRAD = "after_post_grad_graph"
# The function Dynamo resumes a frame in after a graph break, named for the
# line it resumes at (torch strips an earlier resume's prefix from the name).
_RESUME_RE = re.compile(r"^torch_dynamo_resume_in_(.+)_at_(\d+)$")


class KernelRecords(Protocol):
    """Takes Inductor's records of each compiled graph and emits its kernels
    (``trace_records/kernels.py``'s ``KernelCollector``)."""

    def post_grad(self, cid: str, text: str | None) -> None: ...
    def aot_code(self, cid: str, name: str, text: str | None) -> None: ...
    def output_code(self, cid: str, text: str | None, path: str | None = None) -> None: ...
    def dynamo_graph(self, cid: str, text: str | None) -> None: ...
    def mappings(self, cid: str, text: str | None) -> None: ...
    def stack_traces(self, cid: str, text: str | None) -> None: ...
    def flush(self, cid: str) -> None: ...
    def flush_all(self) -> None: ...


class PhaseTimers(Protocol):
    """Takes the phases that time an op's autotuning
    (``worker/probes/autotune.py``'s ``AutotuneCollector``)."""

    def phase_began(self, name: str) -> None: ...
    def phase_ended(
        self, name: str, thread: int, duration_s: float, compile_id: str | None
    ) -> None: ...


@data
class CompileCounts:
    """What the sweep asks between calls."""

    compiles: int = 0  # successful frame compiles (forward records)
    graphs: int = 0  # of those, the ones that made a graph (a tensor op in it)
    backward_compiles: int = 0
    failures: int = 0
    limit_hits: int = 0
    wall_s: float = 0.0  # sum of CompileFinished.wall_s (forward and backward)
    reasons: list[str] = field(default_factory=list)
    eager_calls: int = 0  # calls run eager past the recompile limit (worker/probes/guards.py)


class TraceDispatcher:
    """Structured-trace records in, dlcprof events out (thread-safe, no torch)."""

    def __init__(
        self,
        sink: ev.Sink,
        run_id: str,
        kernels: KernelRecords | None = None,
        tee: IO[str] | None = None,
        autotune: PhaseTimers | None = None,
        live: bool = False,
        now: Callable[[], float] = ev.now,
        unread: frozenset[str] = frozenset(),
    ) -> None:
        self.sink = sink
        # The record names read; ``unread``: those this host has no use for,
        # which torch need not make (worker/probes/trace.py).
        self.reads = CONSUMED - unread
        self.live = live  # in the compiling process: its stack is the program's
        # When the current record was written: a record without a start time
        # was written as its compile ended.
        self.now = now
        self.run_id = run_id
        self.kernels = kernels
        self.autotune = autotune  # gets torch's timers of each autotuned op
        self.tee = tee
        self.prefix = ""  # set after torch._dynamo.reset(): compile ids restart at 0/0
        self._base = ""  # the prefix new_generation set (the sweep's)
        self._resets = 0  # the program's own resets seen
        self._finished: set[str] = set()  # forward compile ids of this generation, finished
        self.counts = CompileCounts()
        self._lock = threading.RLock()
        self._open: dict[tuple[int, str], list[tuple[float, str | None]]] = {}
        self._cache: dict[str, list[str]] = {}
        self._frame_names: dict[str, str] = {}
        self._limit_functions: set[str] = set()
        self._symbols: set[tuple[str | None, str, str]] = set()
        self._backward: set[str] = set()  # compile ids whose backward is compiling
        self._last_cid: str | None = None
        self.named: set[str] = set()  # every compile id a record read named
        self._errors: set[str] = set()
        self._refusal: ev.CompileFinished | None = None  # the first frame Dynamo refused
        # "file:line" of the latest failed compile in the user's code, as torch names it.
        self.failed_at = ""
        self._breaks: dict[str | None, ev.GraphBroken] = {}  # the first break per compile id
        # Older torch's graph breaks, logged only as restarts, awaiting the line
        # their frame resumes at: by (file, function).
        self._restart_breaks: dict[tuple[str, str], list[ev.GraphBroken]] = {}
        # The AOTInductor compile in progress (its id, its span's start) and
        # its record, held until its span ends to take the span's time.
        self._aoti: tuple[str, float] | None = None
        self._aoti_count = 0
        self._aoti_record: ev.CompileFinished | None = None
        # DDPOptimizer: the pieces of each split compile, the Inductor graphs of
        # each compile so far (forward, and backward compiled ahead with it), the
        # forward compiles compiling a backward now, and the buckets DDPOptimizer
        # chose last (worker/probes/ddp.py).
        self._pieces: dict[str, list[str]] = {}
        self._inductor_graphs: dict[str, int] = {}
        self._ahead_graphs: dict[str, int] = {}
        self._ahead: set[str] = set()
        self._buckets: tuple[int | None, list[int], list[list[str]]] | None = None
        # Called with the function's file:line at each function's first limit hit.
        self.on_limit: Callable[[str], None] | None = None

    # Public -------------------------------------------------------------------

    def feed(
        self, metadata: dict[str, Any], payload: Payload, thread: int, name: str | None = None
    ) -> None:
        """One record; ``name``: its ``record_name``, when the caller has it."""
        name = record_name(metadata) if name is None else name
        if name not in self.reads:
            return
        with self._lock:
            if self.tee is not None:
                self._tee(self.tee, metadata, payload, thread)
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
        """DDPOptimizer chose its buckets (worker/probes/ddp.py): they belong to the split
        record that follows on this compile."""
        with self._lock:
            self._buckets = (cap, sizes, params)

    def on_limit_warning(self, message: str) -> None:
        parsed = parse_limit_warning(message)
        if parsed is None:
            return
        with self._lock:
            self._limit_hit(parsed.function, parsed.limit, message.strip(), parsed.location)

    def new_generation(self, prefix: str) -> None:
        """After torch._dynamo.reset(): torch restarts compile ids at 0/0, so later
        ids get ``prefix`` to stay unique within the run."""
        with self._lock:
            self._base = prefix
            self._generation(prefix)

    def _generation(self, prefix: str) -> None:
        self.flush()
        self.prefix = prefix
        self._open.clear()
        self._backward.clear()
        self._ahead.clear()
        self._finished.clear()

    def _frame_begins(self, raw: Any) -> None:
        """A frame compile begins. One whose id already compiled follows the
        program's own ``torch._dynamo.reset()`` (torch restarts its ids at 0/0
        and says nothing else): it and the compiles after it are the next
        generation's ("reset1:0/0"), each its own compile."""
        if raw is not None and f"{self.prefix}{raw}" in self._finished:
            self._resets += 1
            self._generation(f"{self._base}{ev.after_reset(self._resets)}")

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
                # No frame failed: Dynamo broke every frame before a tensor op (an
                # LSTM on torch 2.15): the break is the refusal.
                fail_reason=refused.fail_reason if refused else _break_words(brk),
                location=brk.location if brk else self.failed_at,
                hints=list(brk.hints) if brk else [],
            )

    def flush(self) -> None:
        """Emit kernels still buffered (a compile that failed half way), an
        AOTInductor record whose span never ended, and older torch's graph
        breaks whose frame never resumed (their line unknown)."""
        with self._lock:
            if self.kernels is not None:
                self.kernels.flush_all()
            if self._aoti_record is not None:
                self.sink.emit(self._aoti_record)
                self._aoti_record = None
            for waiting in self._restart_breaks.values():
                for broken in waiting:
                    self.sink.emit(broken)
            self._restart_breaks.clear()

    # Dispatch -----------------------------------------------------------------

    def _cid(self, raw: Any) -> str | None:
        """torch's compile id as dlcprof names it: with the generation prefix,
        and as the backward's id while that compile's backward is compiling."""
        if raw is None or raw == "None" or raw == "":
            return None
        cid = f"{self.prefix}{raw}"
        return ev.backward_id(cid) if cid in self._backward else cid

    def _record_cid(self, md: dict[str, Any]) -> str | None:
        """The record's compile id, which names the compile in progress (a
        record without one inside an AOTInductor compile is that compile's)."""
        cid = self._cid(compile_id_of(md)) or (self._aoti[0] if self._aoti else None)
        if cid is not None:
            self._last_cid = cid
            self.named.add(cid)
        return cid

    def _dispatch(self, name: str, md: dict[str, Any], payload: Payload, thread: int) -> None:
        if name == "chromium_event":
            self._phase(parse_chromium(payload), md, thread)
        elif isinstance(payload, dict):  # handed over live for a cache lookup only
            if READERS.get(name) is not TraceDispatcher._cache_state:
                raise TypeError(f"a {name} record's payload is not text")
            self._cache_state(name, md, payload, self._record_cid(md))
        elif name == "dynamo_start":  # older torch's only sign that a frame compile begins
            self._frame_begins(compile_id_of(md))
            self._record_cid(md)
        else:
            READERS[name](self, name, md, payload, self._record_cid(md))

    # Readers ------------------------------------------------------------------

    def _phase(self, d: dict[str, Any] | None, md: dict[str, Any], thread: int) -> None:
        """A phase began or ended (torch's chromium event); it may carry its own compile id."""
        d = d or {}
        ph = d.get("ph")
        if ph == "B":  # the commonest record of a log: each key looked up once
            began = d.get("name")
            if began == FRAME_PHASE:
                # The record's metadata names the compile (some torch's args lag behind).
                self._frame_begins(compile_id_of(md) or (d.get("args") or {}).get("compile_id"))
            elif began == AOTI_PHASE and "ts" in d:
                self._aoti = (f"{ev.AOTI}{self._aoti_count}", float(d["ts"]) / 1e6)
                self._aoti_count += 1
            elif began == BACKWARD_PHASE:
                raw = (d.get("args") or {}).get("compile_id") or compile_id_of(md)
                if self._cid(raw) is not None:
                    self._backward.add(f"{self.prefix}{raw}")
        md_cid = self._record_cid(md)
        if ph not in ("B", "E") or "name" not in d or "ts" not in d:
            return
        name = str(d["name"])
        ts = float(d["ts"]) / 1e6  # µs since the epoch -> s
        args = d.get("args") or {}
        # The record's metadata names the compile, as tlparse files it (some
        # torch's args lag behind it); pool-thread events carry no compile id:
        # they belong to the compile in flight.
        cid = md_cid or self._cid(args.get("compile_id")) or self._last_cid
        key = (thread, name)
        # Inside a forward compile (a lazy backward's id is the backward's own).
        forward = cid is not None and not cid.endswith(ev.BACKWARD)
        ahead = cid if forward and name == BACKWARD_COMPILER_PHASE else None
        if ph == "B":
            if self.autotune is not None:
                self.autotune.phase_began(name)
            self._open.setdefault(key, []).append((ts, cid))
            if ahead:
                self._ahead.add(ahead)
            self.sink.emit(
                ev.PhaseStarted(run_id=self.run_id, compile_id=cid, name=name, thread=thread, t=ts)
            )
            return
        stack = self._open.get(key)
        if not stack:
            return  # an End whose Begin came before the probe was installed
        start, begin_cid = stack.pop()
        if ahead:
            self._ahead.discard(ahead)
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
        if name == AOTI_PHASE and self._aoti is not None:
            self._aoti_ends(self._aoti[1], ts)

    def _aoti_ends(self, start: float, end: float) -> None:
        """The AOTInductor compile's span ended: its record (written just
        before) takes the span's time, torch's phases of the compile end to end."""
        held, self._aoti_record, self._aoti = self._aoti_record, None, None
        if held is not None:
            self.counts.wall_s += (end - start) - held.wall_s
            held.wall_s, held.start_t = end - start, start
            self.sink.emit(held)

    def _compile_record(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        self._metrics(md.get(name) or {}, name == "bwd_compilation_metrics", md, cid)

    def _metrics(
        self, record: dict[str, Any], is_backward: bool, md: dict[str, Any], md_cid: str | None
    ) -> None:
        is_backward = is_backward or record.get("is_forward") is False
        # The record's metadata names the compile, as for every other record (and
        # as tlparse reads it): some torch writes a stale compile_id in the
        # metrics. A compiled autograd id ("!0/0/0") is the metrics' own.
        raw = record.get("compile_id")
        own = self._cid(raw) if str(raw or "").startswith("!") else None
        cid = own or md_cid or self._cid(raw) or "?"
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
            start_t=float(start) if start is not None else self.now() - wall,
            is_backward=is_backward,
            recompile_reason=record.get("recompile_reason"),
            fail_type=fail_type,
            fail_reason=first_line(record.get("fail_reason")),
            graph_op_count=record.get("graph_op_count"),
            guard_count=record.get("guard_count"),
            cache=combine_cache_states(self._cache.pop(cid, [])),
            metrics=metrics,
        )
        if fail_type and not is_backward and self._refusal is None:
            self._refusal = finished
        graphs = self._inductor_graphs.pop(cid, 0)
        if not is_backward:
            self._finished.add(cid)
            self._ddp_split(cid, graphs, self._ahead_graphs.pop(cid, 0))
            self._restarted_at_breaks(record, cid)
        if self._aoti is not None and cid == self._aoti[0]:
            self._aoti_record = finished  # emitted when its span ends
        else:
            self.sink.emit(finished)
        if is_limit_failure(record):
            function = self._frame_names.get(frame) or str(record.get("co_name") or "?")
            # The function's first line, as torch's warning names it.
            where = failed_at({k: v for k, v in record.items() if k.startswith("co_")})
            self._limit_hit(function, None, str(record.get("fail_reason") or ""), where)

    def _restarted_at_breaks(self, record: dict[str, Any], cid: str) -> None:
        """Older torch logs a graph break only as a restart of the frame's
        analysis, the break's reason as the restart's (newer torch logs a
        ``dynamo_graph_break_reason`` record too): each such restart of a compile
        with no break record is a graph break. Its line is the one the frame
        resumes at, which the resume function's name gives when it compiles
        ("torch_dynamo_resume_in_fn_at_12")."""
        file, name = str(record.get("co_filename") or ""), str(record.get("co_name") or "")
        resumed = _RESUME_RE.match(name)
        function = resumed.group(1) if resumed else name
        if resumed and self._restart_breaks.get((file, function)):
            broken = self._restart_breaks[(file, function)].pop(0)
            broken.location = f"{file}:{resumed.group(2)}"
            self.sink.emit(broken)
        if cid in self._breaks:
            return
        for reason in record.get("restart_reasons") or []:
            if not restart_is_graph_break(str(reason)):
                continue
            broken = ev.GraphBroken(
                run_id=self.run_id, compile_id=cid, reason=str(reason).strip("'\""), location=""
            )
            self._breaks.setdefault(cid, broken)
            self._restart_breaks.setdefault((file, function), []).append(broken)

    def _recompile(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        reasons = parse_recompile_reasons(payload)
        if reasons:
            self.counts.reasons.append(reasons[0])
            # Live, the record is logged on the stack of the call that recompiles.
            called_at, through, call = (
                call_site(sys._getframe(), with_call=True) if self.live else ("", "", "")
            )
            self.sink.emit(
                ev.RecompileTriggered(
                    run_id=self.run_id,
                    compile_id=cid,
                    reason="; ".join(reasons),
                    called_at=called_at,
                    through=through,
                    call=call,
                )
            )

    def _graph_break(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        info = parse_graph_break(payload or "")
        broken = ev.GraphBroken(
            run_id=self.run_id,
            compile_id=cid,
            reason=info.reason,
            location=info.location,
            hints=info.hints,
            detail=info.detail,
            gb_id=info.gb_id,
            link=info.link,
            context=info.context,
        )
        self._breaks.setdefault(cid, broken)
        self.sink.emit(broken)

    def _symbol(self, name: str, md: dict[str, Any], payload: str | None, cid: str | None) -> None:
        d = md.get(name) or {}
        symbol, source = str(d.get("symbol", "?")), str(d.get("source", ""))
        # Dynamo creates each symbol again when it restarts the trace of a frame.
        if (cid, symbol, source) in self._symbols:
            return
        self._symbols.add((cid, symbol, source))
        self.sink.emit(
            ev.DimMadeDynamic(run_id=self.run_id, compile_id=cid, symbol=symbol, source=source)
        )

    def _ddp_piece(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        if cid is None:
            return
        pieces = self._pieces.setdefault(cid, [])
        if name == DDP_PIECE:
            pieces.append(str((md.get(name) or {}).get("name") or f"submod_{len(pieces)}"))

    def _cache_state(
        self, name: str, md: dict[str, Any], payload: Payload, cid: str | None
    ) -> None:
        lookup = parse_cache_lookup(name, payload)
        if lookup is None:
            return
        if cid is not None and lookup.layer == "fx_graph":
            self._cache.setdefault(cid, []).append(lookup.state)
        self.sink.emit(
            ev.CacheLookedUp(
                run_id=self.run_id,
                compile_id=cid,
                layer=lookup.layer,
                state=lookup.state,
                key=lookup.key,
                detail=lookup.detail,
                reason=lookup.reason,
                saved_s=lookup.saved_s,
                parts=lookup.parts,
                graph_ops=lookup.graph_ops,
            )
        )

    def _output_code(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        if cid is None:
            return
        # One per Inductor graph, hit or miss.
        graphs = self._ahead_graphs if cid in self._ahead else self._inductor_graphs
        graphs[cid] = graphs.get(cid, 0) + 1
        if self.kernels is not None:
            self.kernels.output_code(cid, payload, (md.get(name) or {}).get("filename"))

    def _graph_dump(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        dump = str((md.get(name) or {}).get("name") or "")
        if cid is not None and self.kernels is not None and dump in (AOT_WRAPPER, AOT_KERNELS):
            self.kernels.aot_code(cid, dump, payload)

    def _post_grad(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        # Some torch logs an AOTInductor compile's post-grad graph only as this
        # artifact; a JIT compile's comes as inductor_post_grad_graph.
        if name == AOT_POST_GRAD and not (cid or "").startswith(ev.AOTI):
            return
        if cid is not None and self.kernels is not None:
            self.kernels.post_grad(cid, payload)

    def _dynamo_graph(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        if cid is not None and self.kernels is not None:
            self.kernels.dynamo_graph(cid, payload)

    def _node_mappings(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        if cid is not None and self.kernels is not None:
            self.kernels.mappings(cid, payload)

    def _kernel_stack_traces(
        self, name: str, md: dict[str, Any], payload: str | None, cid: str | None
    ) -> None:
        if cid is not None and self.kernels is not None:
            self.kernels.stack_traces(cid, payload)

    def _ddp_split(self, cid: str, graphs: int, backward: int) -> None:
        """The split of this forward compile, if DDPOptimizer split it (before its
        CompileFinished, so a view of the compile has it); ``backward``: its
        backward's graphs compiled ahead, with it."""
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
                backward_graphs=backward,
                bucket_cap_bytes=cap,
                bucket_bytes=sizes if len(sizes) == len(pieces) else [],
                bucket_params=params if len(params) == len(pieces) else [],
            )
        )

    def _limit_hit(self, function: str, limit: int | None, message: str, location: str) -> None:
        if function in self._limit_functions:
            return
        self._limit_functions.add(function)
        self.counts.limit_hits += 1
        if self.on_limit is not None:
            self.on_limit(location)
        self.sink.emit(
            ev.RecompileLimitHit(
                run_id=self.run_id,
                function=function,
                limit=limit,
                message=message,
                location=location,
            )
        )

    def _tee(self, tee: IO[str], md: dict[str, Any], payload: Payload, thread: int) -> None:
        """Record what the dispatcher reads, minus bulk it never looks at."""
        name = record_name(md)
        if name == "chromium_event" and payload:
            d = dict(parse_chromium(payload) or {})  # torch's own event, where it was handed
            # End events of `dynamo` carry the whole compile record (configs included).
            args = d.get("args") or {}
            d["args"] = {
                k: v
                for k, v in args.items()
                if v is None or isinstance(v, (int, float, bool)) or len(str(v)) <= 200
            }
            payload = json.dumps(d, separators=(",", ":"), default=str)
        elif name in ("compilation_metrics", "bwd_compilation_metrics"):
            record = md.get(name) or {}
            md = dict(md)
            md[name] = {k: v for k, v in record.items() if k in METRIC_FIELDS or k in _KEEP}
        elif name == "dynamo_start":
            md = {**md, name: {}}  # the Python stack the compile began in: unused
        elif name == "create_symbol":
            md = dict(md)  # the Python stacks it was created in: kilobytes, unused
            md[name] = {k: v for k, v in (md.get(name) or {}).items() if "stack" not in k}
        try:
            tee.write(
                json.dumps({"metadata": md, "payload": payload, "thread": thread}, default=str)
                + "\n"
            )
        except (OSError, ValueError):
            self.tee = None


Reader = Callable[[TraceDispatcher, str, dict[str, Any], str | None, str | None], None]
# One reader per record name, given the record's name, metadata, payload and
# compile id; phases (chromium events) are read apart, with their thread.
READERS: dict[str, Reader] = {
    "compilation_metrics": TraceDispatcher._compile_record,
    "bwd_compilation_metrics": TraceDispatcher._compile_record,
    "recompile_reasons": TraceDispatcher._recompile,
    "dynamo_graph_break_reason": TraceDispatcher._graph_break,
    "create_symbol": TraceDispatcher._symbol,
    DDP_SPLIT: TraceDispatcher._ddp_piece,
    DDP_PIECE: TraceDispatcher._ddp_piece,
    "fx_graph_cache_hit": TraceDispatcher._cache_state,
    "fx_graph_cache_miss": TraceDispatcher._cache_state,
    "fx_graph_cache_bypass": TraceDispatcher._cache_state,
    "aotautograd_cache_hit": TraceDispatcher._cache_state,
    "aotautograd_cache_miss": TraceDispatcher._cache_state,
    "aotautograd_cache_bypass": TraceDispatcher._cache_state,
    "inductor_output_code": TraceDispatcher._output_code,
    "graph_dump": TraceDispatcher._graph_dump,
    "inductor_post_grad_graph": TraceDispatcher._post_grad,
    AOT_POST_GRAD: TraceDispatcher._post_grad,
    DYNAMO_GRAPH: TraceDispatcher._dynamo_graph,
    "inductor_provenance_tracking_node_mappings": TraceDispatcher._node_mappings,
    "inductor_provenance_tracking_kernel_stack_traces": TraceDispatcher._kernel_stack_traces,
}
# Record names the dispatcher reads (also what the tee keeps for fixtures).
CONSUMED = frozenset({"chromium_event", "dynamo_start", *READERS})
# The records whose payload it reads with no kernel collector (a cache lookup's
# state is in its name; its payload, the key, is only for a view of the lookup):
# all a rank's summary needs (trace_import/process_log.py).
SUMMARY_PAYLOADS = frozenset({"chromium_event", "recompile_reasons", "dynamo_graph_break_reason"})


def _break_words(brk: ev.GraphBroken | None) -> str | None:
    """ "graph break GB0148: Unsupported function call (delayed): Dynamo does not support RNN"."""
    if brk is None:
        return None
    return f"graph break {brk.gb_id + ': ' if brk.gb_id else ''}{brk.reason}"
