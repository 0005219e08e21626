"""CUDA graphs: per compiled graph, whether Inductor wrapped it, and why not.

What torch 2.13 offers (docs/torch-notes.md §4):

- ``CompiledFxGraph.post_compile(example_inputs, constants, graph_kwargs)``
  runs for every compiled graph, fresh or from the FX graph cache. Its
  ``graph_kwargs["cudagraphs"]`` (a BoxedBool) is True on entry when the mode
  asks for CUDA graphs and False on exit when Inductor skipped them; the graph's
  ``disabled_cudagraphs_reason`` holds torch's words ("skipping cudagraphs due
  to cpu device (arg0_1)"). On the CPU that reason is never logged (only
  ``counters["inductor"]["cudagraph_skips"]`` moves), so it is read here.
- ``log_cudagraph_skip_and_bump_counter`` warns on the ``cudagraphs`` artifact
  logger of ``torch._inductor.cudagraph_utils`` for every skip of a CUDA graph
  (GPU): during post_compile it is that graph's reason, later it is a run-time
  skip (a mutated input, the re-recording limit).
- On a GPU, ``CUDAGraphTreeManager.record_function`` records a graph and
  ``execute_node`` replays one: counted per compile id and function id (one
  dict update each); with graph partitions a call replays each partition.

Each hook is installed when torch imports its module (``probes.lazy``).
"""

from __future__ import annotations

import logging
import threading
from typing import Any

from dlcprof import events as ev
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

PROBE = "cudagraphs"


class CudagraphTally:
    """Recordings, re-recordings and replays per compile id, per call (thread-safe).

    With graph partitioning each partition of a graph is a CUDA graph of its
    own (its own function id): one call of the compiled graph records or
    replays each of them once, so a compile id's count is the most any one of
    its functions had, not their sum. A replay costs one locked increment keyed
    by torch's own objects; ids are named (with the run's prefix, see
    TraceDispatcher.new_generation) when counted, as they were when recorded."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._replays: dict[tuple[Any, Any], int] = {}  # (raw compile id, function id)
        self._recordings: dict[tuple[str, Any], int] = {}  # (name, function id)
        self._names: dict[Any, str] = {}

    def recorded(self, raw: Any, name: str, function_id: Any) -> None:
        with self._lock:
            self._names[raw] = name
            key = (name, function_id)
            self._recordings[key] = self._recordings.get(key, 0) + 1

    def replayed(self, raw: Any, function_id: Any = None) -> None:
        key = (raw, function_id)
        with self._lock:
            self._replays[key] = self._replays.get(key, 0) + 1

    def counts(self) -> dict[str, dict[str, int]]:
        with self._lock:
            out: dict[str, dict[str, int]] = {}

            def most(name: str, field: str, n: int) -> None:
                row = out.setdefault(name, {"recordings": 0, "rerecordings": 0, "replays": 0})
                row[field] = max(row[field], n)

            for (name, _), n in self._recordings.items():
                most(name, "recordings", n)
                most(name, "rerecordings", n - 1)
            for (raw, _), n in self._replays.items():
                most(self._names.get(raw, str(raw)), "replays", n)
            return out


class CudagraphProbe:
    def __init__(
        self, sink: ev.Sink, run_id: str, notes: ProbeNotes, prefix: Any = lambda: ""
    ) -> None:
        self.sink = sink
        self.run_id = run_id
        self.notes = notes
        self.prefix = prefix  # compile ids restart at 0/0 after a dynamo reset (the sweep)
        self.tally = CudagraphTally()
        self._deciding = threading.local()  # the graph whose post_compile runs on this thread
        self._restore: list[tuple[Any, str, Any]] = []
        self._handler: tuple[logging.Logger, logging.Handler] | None = None

    def compile_id(self, raw: Any) -> str | None:
        return None if raw is None or str(raw) in ("", "None") else f"{self.prefix()}{raw}"

    # Pure entry points (the adapter calls these) ---------------------------------------

    def decided(
        self, compile_id: str | None, graph: str, graphed: bool, reason: str | None
    ) -> None:
        self.sink.emit(
            ev.CudagraphDecided(
                run_id=self.run_id,
                compile_id=compile_id,
                graph=graph,
                graphed=graphed,
                reason=reason,
            )
        )

    def skipped(self, message: str, compile_id: str | None) -> None:
        """A skip warning: this thread's graph's reason, or a run-time skip."""
        pending = getattr(self._deciding, "reasons", None)
        if pending is not None:
            pending.append(message)
        else:
            self.sink.emit(
                ev.CudagraphSkipped(run_id=self.run_id, compile_id=compile_id, reason=message)
            )

    def counted(self, skips: int | None) -> ev.CudagraphsCounted:
        return ev.CudagraphsCounted(
            run_id=self.run_id, skips=skips, per_compile=self.tally.counts()
        )

    # torch adapter ----------------------------------------------------------------

    def install(self) -> None:
        when_imported("torch._inductor.output_code", self._wrap_post_compile)
        when_imported("torch._inductor.cudagraph_utils", self._listen)
        when_imported("torch._inductor.cudagraph_trees", self._wrap_trees)

    def uninstall(self) -> None:
        for owner, attr, original in self._restore:
            setattr(owner, attr, original)
        self._restore.clear()
        if self._handler is not None:
            logger, handler = self._handler
            logger.removeHandler(handler)
            self._handler = None

    def _patch(self, owner: Any, attr: str, make: Any) -> bool:
        original = getattr(owner, attr, None)
        if original is None:
            return False
        setattr(owner, attr, make(original))
        self._restore.append((owner, attr, original))
        return True

    def _wrap_post_compile(self, module: Any) -> None:
        cls = getattr(module, "CompiledFxGraph", None)
        probe = self

        def make(original: Any) -> Any:
            def post_compile(
                graph: Any, example_inputs: Any, constants: Any, graph_kwargs: Any
            ) -> Any:
                if not _asked(graph, graph_kwargs):
                    return original(graph, example_inputs, constants, graph_kwargs)
                probe._deciding.reasons = []
                try:
                    return original(graph, example_inputs, constants, graph_kwargs)
                finally:
                    logged = probe._deciding.reasons
                    probe._deciding.reasons = None
                    probe._decide(graph, graph_kwargs, logged)

            return post_compile

        if cls is None or not self._patch(cls, "post_compile", make):
            self.notes.unavailable(
                PROBE,
                "torch._inductor.output_code.CompiledFxGraph.post_compile not found: "
                "no per-graph CUDA-graph status",
            )

    def _decide(self, graph: Any, graph_kwargs: dict[str, Any], logged: list[str]) -> None:
        try:
            graphed = bool(graph_kwargs.get("cudagraphs"))
            reason = None
            if not graphed:
                stored = getattr(graph, "disabled_cudagraphs_reason", None)
                reason = logged[-1] if logged else (str(stored) if stored else None)
            kind = "backward" if graph_kwargs.get("is_backward") else "forward"
            if not graph_kwargs.get("is_backward") and not _grad_enabled():
                kind = "inference"
            self.decided(self._current_compile_id(), kind, graphed, reason)
        except Exception as e:  # noqa: BLE001 - never break the compile
            self.notes.unavailable(PROBE, f"could not read a graph's CUDA-graph status: {e!r}")

    def _current_compile_id(self) -> str | None:
        try:
            from torch._guards import CompileContext

            return self.compile_id(CompileContext.current_compile_id())
        except Exception:  # noqa: BLE001
            return None

    def _listen(self, module: Any) -> None:
        logger = getattr(module, "cudagraphs_log", None)
        if not isinstance(logger, logging.Logger):
            self.notes.unavailable(
                PROBE + ".log",
                "torch._inductor.cudagraph_utils.cudagraphs_log not found: "
                "CUDA-graph skips on a GPU are not explained",
            )
            return
        handler = _SkipHandler(self)
        logger.addHandler(handler)
        self._handler = (logger, handler)

    def _wrap_trees(self, module: Any) -> None:
        manager = getattr(module, "CUDAGraphTreeManager", None)
        probe, tally = self, self.tally

        def make_record(original: Any) -> Any:
            def record_function(mgr: Any, new_inputs: Any, function_id: Any) -> Any:
                raw = getattr(mgr, "compile_id", None)
                name = probe.compile_id(raw) or "?"
                tally.recorded(raw, name, getattr(function_id, "id", function_id))
                return original(mgr, new_inputs, function_id)

            return record_function

        def make_execute(original: Any) -> Any:
            replayed = tally.replayed

            def execute_node(mgr: Any, node: Any, new_inputs: Any) -> Any:
                # compile_id: set by CUDAGraphTreeManager.run before _run; one
                # function id per partition of the graph.
                wrapped = getattr(node, "wrapped_function", None)
                replayed(mgr.compile_id, getattr(wrapped, "id", None))
                return original(mgr, node, new_inputs)

            return execute_node

        ok = manager is not None and self._patch(manager, "record_function", make_record)
        ok = ok and self._patch(manager, "execute_node", make_execute)
        if not ok:
            self.notes.unavailable(
                PROBE + ".trees",
                "torch._inductor.cudagraph_trees.CUDAGraphTreeManager.record_function/"
                "execute_node not found: no CUDA-graph replay counts",
            )


class _SkipHandler(logging.Handler):
    def __init__(self, probe: CudagraphProbe) -> None:
        super().__init__(logging.WARNING)
        self.probe = probe

    def emit(self, record: logging.LogRecord) -> None:
        try:
            self.probe.skipped(record.getMessage(), self.probe._current_compile_id())
        except Exception:  # noqa: BLE001 - never break the graph that warned
            pass


def _asked(graph: Any, graph_kwargs: Any) -> bool:
    """Does the mode ask for CUDA graphs for this graph? A fresh compile may have
    turned the graph's flag off already (on the CPU, when it stored its reason)."""
    if not isinstance(graph_kwargs, dict):
        return False
    if graph_kwargs.get("cudagraphs") or getattr(graph, "disabled_cudagraphs_reason", None):
        return True
    try:
        import torch._inductor.config as config

        return bool(config.triton.cudagraphs)
    except Exception:  # noqa: BLE001
        return False


def _grad_enabled() -> bool:
    import torch

    return bool(torch.is_grad_enabled())


def skip_count(notes: ProbeNotes) -> int | None:
    """torch's own count of CUDA-graph skips (moves on the CPU too)."""
    try:
        from torch._dynamo.utils import counters

        return int(counters["inductor"]["cudagraph_skips"])
    except Exception as e:  # noqa: BLE001
        notes.unavailable(PROBE + ".counters", f"torch._dynamo.utils.counters: {type(e).__name__}")
        return None
