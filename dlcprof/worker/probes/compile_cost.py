"""Compile seconds by the user's code: Dynamo's tracing time per function it
traced or inlined, and Inductor's lowering time per FX node, grouped by the
module the node came from (its ``nn_module_stack``).

Three private methods are wrapped, each timed on a per-thread stack so that a
caller's time excludes its callees (the times add up to the phase they sit in):

- ``InstructionTranslatorBase.run``: one call per frame Dynamo traces, the
  compiled frame's and each inlined function's (``self.f_code``);
- ``OutputGraph.call_user_compiler``: the backend compile Dynamo calls while
  tracing; its time is the backend's, taken off the function that called it;
- ``GraphLowering.run_node``: one FX node lowered to Inductor's IR.

Each compile also names the program's own line whose call reached it
(``call_site``, read once per compile): the functions of libraries it traced
are the cost of that call.

The wrappers time their own bookkeeping (``own_s``), so the probe's cost is
measured, not guessed. A missing method: ``ProbeUnavailable("compile_cost")``
and the run goes on without the view.
"""

from __future__ import annotations

import functools
import re
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import field
from typing import Any

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.trace_records.payloads import call_site
from dlcprof.worker.probes import ProbeNotes, lazy

PROBE = "compile_cost"
_TARGETS = (  # (module, class, method)
    ("torch._dynamo.symbolic_convert", "InstructionTranslatorBase", "run"),
    ("torch._dynamo.output_graph", "OutputGraph", "call_user_compiler"),
    ("torch._inductor.graph", "GraphLowering", "run_node"),
)
_FRAME = re.compile(r'File "([^"]+)", line (\d+), in (\S+)')
_BACKEND = "(backend compile)"  # time inside Dynamo's tracing that is the backend's


@data
class _Open:
    key: Any  # what the time is charged to; _BACKEND is charged to no function
    resumed: float
    self_s: float = 0.0
    callees_s: float = 0.0


@data
class _Totals:
    called_at: str  # the program's line whose call reached the compile
    functions: dict[tuple[str, str, int], list[float]] = field(default_factory=dict)
    modules: dict[str, dict[str, Any]] = field(default_factory=dict)


def node_modules(meta: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    """The modules an FX node came from, outermost first, as (path, class name);
    empty for nodes of the top-level function."""
    out = []
    for value in (meta.get("nn_module_stack") or {}).values():
        path, cls = value[0], value[1]
        name = getattr(cls, "__name__", None) or str(cls).rsplit(".", 1)[-1].strip("'>")
        out.append((_module_path(str(path)), name))
    return tuple(out)


def _module_path(path: str) -> str:
    """Dynamo's source expression as the user would write it: "L['self'].blocks[0]"
    or "L['self']._modules['blocks']._modules['0']" -> "blocks.0"; a wrapper's
    child (checkpoint_wrapper's) "L['self'].__dict__['_modules']['inner']" -> "inner"."""
    path = re.sub(r"\.?(?:__dict__\['_modules'\]|\._modules)\['([^']+)'\]", r".\1", path)
    path = re.sub(r"\[(\d+)\]", r".\1", path)
    path = re.sub(r"^L\['self'\]\.?|^L\['[^']+'\]\.?", "", path)
    return path.replace("getattr(", "").replace(")", "").lstrip(".")


def node_location(meta: dict[str, Any]) -> str:
    """The innermost "file:line" of the user's code in a node's stack trace."""
    found = _FRAME.findall(meta.get("stack_trace") or "")
    return f"{found[-1][0]}:{found[-1][1]}" if found else ""


class CompileCostProbe:
    def __init__(self, sink: ev.Sink, run_id: str, notes: ProbeNotes, prefix: Callable[[], str]):
        self.sink, self.run_id, self.notes, self.prefix = sink, run_id, notes, prefix
        self._local = threading.local()
        self._lock = threading.Lock()
        self._totals: dict[str, _Totals] = {}
        self._own_s = 0.0
        self._restore: list[Callable[[], None]] = []

    def follow(self, run_id: str, notes: ProbeNotes) -> None:
        """A forked child's own: its run and notes, none of its parent's totals."""
        with self._lock:
            self.run_id, self.notes = run_id, notes
            self._totals, self._own_s = {}, 0.0

    # Install --------------------------------------------------------------------

    def install(self) -> None:
        wraps = {
            "run": self._wrap_trace,
            "call_user_compiler": self._wrap_backend,
            "run_node": self._wrap_node,
        }
        for module, cls_name, method in _TARGETS:
            lazy.when_imported(
                module,
                functools.partial(
                    self._patch, cls_name=cls_name, method=method, wrap=wraps[method]
                ),
            )

    def _patch(self, module: Any, cls_name: str, method: str, wrap: Callable) -> None:
        cls = getattr(module, cls_name, None)
        original = getattr(cls, method, None) if cls is not None else None
        if original is None:
            self.notes.unavailable(
                PROBE,
                f"{module.__name__}.{cls_name}.{method} not found in this torch: "
                "no compile cost by function or module",
            )
            return
        setattr(cls, method, wrap(original))
        self._restore.append(lambda: setattr(cls, method, original))

    def uninstall(self) -> None:
        for restore in reversed(self._restore):
            restore()
        self._restore.clear()

    # Timing on a per-thread stack -------------------------------------------------

    def _stack(self) -> list[_Open]:
        stack = getattr(self._local, "stack", None)
        if stack is None:
            stack = self._local.stack = []
        return stack

    def _enter(self, key: Any) -> _Open:
        now = time.perf_counter()
        stack = self._stack()
        if stack:
            stack[-1].self_s += now - stack[-1].resumed
        frame = _Open(key, now)
        stack.append(frame)
        return frame

    def _exit(self, frame: _Open) -> tuple[float, float]:
        """(its own time, with its callees' but not the backend compile's)."""
        now = time.perf_counter()
        stack = self._stack()
        frame.self_s += now - frame.resumed
        if stack and stack[-1] is frame:
            stack.pop()
        total = frame.self_s + frame.callees_s
        if stack:
            stack[-1].resumed = now
            if frame.key != _BACKEND:
                stack[-1].callees_s += total
        return frame.self_s, total

    def _timed(self, key: Callable[..., Any], record: Callable[..., None]) -> Callable:
        def wrap(original: Callable) -> Callable:
            def timed(this: Any, *args: Any, **kwargs: Any) -> Any:
                t0 = time.perf_counter()
                try:
                    frame = self._enter(key(this, *args))
                except Exception:  # noqa: BLE001 - never break the compile we watch
                    return original(this, *args, **kwargs)
                t1 = time.perf_counter()
                try:
                    return original(this, *args, **kwargs)
                finally:
                    t2 = time.perf_counter()
                    try:
                        record(this, frame.key, self._exit(frame), *args)
                    except Exception:  # noqa: BLE001
                        pass
                    with self._lock:
                        self._own_s += (t1 - t0) + (time.perf_counter() - t2)

            return timed

        return wrap

    @property
    def _wrap_trace(self) -> Callable:
        def key(tx: Any) -> tuple[str, str, int]:
            code = tx.f_code
            return (
                code.co_qualname if hasattr(code, "co_qualname") else code.co_name,
                code.co_filename,
                code.co_firstlineno,
            )

        def record(tx: Any, key: tuple[str, str, int], times: tuple[float, float]) -> None:
            with self._lock:
                totals = self._compile(_dynamo_compile_id(False))
                entry = totals.functions.setdefault(key, [0, 0.0, 0.0])
                entry[0] += 1
                entry[1] += times[0]
                entry[2] += times[1]

        return self._timed(key, record)

    @property
    def _wrap_backend(self) -> Callable:
        return self._timed(lambda og, *a: _BACKEND, lambda og, k, s, *a: None)

    @property
    def _wrap_node(self) -> Callable:
        def key(graph: Any, node: Any) -> tuple[tuple[tuple[str, str], ...], str]:
            meta = getattr(node, "meta", {}) or {}
            if getattr(node, "op", "") in ("placeholder", "output"):
                return (), ""  # the graph's inputs and outputs: the top level
            return node_modules(meta), node_location(meta)

        def record(graph: Any, key: tuple, times: tuple[float, float], node: Any) -> None:
            self_s = times[0]
            stack, location = key
            backward = bool(getattr(graph, "is_backward", False))
            with self._lock:
                totals = self._compile(_dynamo_compile_id(backward))
                path, cls = stack[-1] if stack else ("", "")
                m = totals.modules.setdefault(
                    path,
                    {
                        "module": path,
                        "cls": cls,
                        "stack": [list(p) for p in stack],
                        "location": location,
                        "nodes": 0,
                        "self_s": 0.0,
                    },
                )
                m["nodes"] += 1
                m["self_s"] += self_s
                if not m["location"] and location:
                    m["location"] = location

        return self._timed(key, record)

    def _compile(self, raw: str | None) -> _Totals:
        cid = f"{self.prefix()}{raw}" if raw else "?"
        if raw and raw.endswith(ev.BACKWARD):
            cid = ev.backward_id(f"{self.prefix()}{raw[: -len(ev.BACKWARD)]}")
        totals = self._totals.get(cid)
        if totals is None:  # once per compile: the stack is the one that compiles
            totals = self._totals[cid] = _Totals(call_site(sys._getframe())[0])
        return totals

    # Emit -----------------------------------------------------------------------

    def flush(self) -> None:
        """One CompileCostMeasured per compile seen since the last flush."""
        with self._lock:
            totals, self._totals = self._totals, {}
            own, self._own_s = self._own_s, 0.0
        for cid, t in totals.items():
            functions = [
                {
                    "function": name,
                    "file": f,
                    "line": line,
                    "traced": n,
                    "self_s": s,
                    "total_s": total,
                }
                for (name, f, line), (n, s, total) in sorted(
                    t.functions.items(), key=lambda kv: -kv[1][1]
                )
            ]
            modules = sorted(t.modules.values(), key=lambda m: -m["self_s"])
            self.sink.emit(
                ev.CompileCostMeasured(
                    run_id=self.run_id,
                    compile_id=cid,
                    functions=functions,
                    modules=modules,
                    own_s=own,
                    called_at=t.called_at,
                )
            )
            own = 0.0


def _dynamo_compile_id(backward: bool) -> str | None:
    """The compile in progress as "frame/compile", the backward's with its suffix."""
    from torch._guards import CompileContext

    cid = CompileContext.current_compile_id()
    if cid is None:
        return None
    raw = f"{cid.frame_id}/{cid.frame_compile_id}"
    return ev.backward_id(raw) if backward else raw
