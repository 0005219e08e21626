"""Autotuning: what Inductor benchmarked for each op, what won, and what it cost.

Two torch sources, joined on the compile thread that autotunes:

- the feedback savers of ``torch._inductor.select_algorithm``
  (``add_feedback_saver``): called once per autotuned op, at the end of
  ``AlgorithmSelectorCache.do_autotuning``, with every choice's time in ms,
  the op's name and its input nodes. Also called when the timings came from
  Inductor's autotune cache (nothing benchmarked); never for an op with a
  single choice (nothing to tune).
- torch's own timers of that op: the structured-trace phases
  ``<op>_template_precompiling`` and ``<op>_template_autotuning`` (the same
  ones ``compilation_metrics.compile_time_autotune_time_us`` sums), which end
  on that thread just before its feedback call. No ``_autotuning`` phase since
  the previous op: the timings came from the cache.

``AutotuneCollector`` is pure (fed by the trace dispatcher and by the feedback
adapter). ``install`` registers the feedback saver when the first autotune
phase begins: registering creates torch's selector cache (and its timed system
probe), which must happen where torch would do it, inside the compile. Without
the trace probe it registers when torch imports ``select_algorithm``.
"""

from __future__ import annotations

import math
import sys
import threading
from collections.abc import Callable
from typing import Any

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported

PROBE = "autotune"
MODULE = "torch._inductor.select_algorithm"
PRECOMPILE = "_template_precompiling"
BENCHMARK = "_template_autotuning"


def autotune_phase(name: str) -> str | None:
    """ "precompile" / "benchmark" for torch's per-op autotune phases, else None."""
    if name.endswith(PRECOMPILE):
        return "precompile"
    if name.endswith(BENCHMARK):
        return "benchmark"
    return None


def choice_rows(timings: list[tuple[str, float | None, str]]) -> list[dict[str, Any]]:
    """(name, ms, description) per choice -> event rows, fastest first; a choice
    that failed (inf, nan, None) keeps ms None and goes last."""
    rows = []
    for name, ms, description in timings:
        kept = float(ms) if ms is not None and math.isfinite(ms) else None
        rows.append({"name": name, "ms": kept, "description": description})
    return sorted(rows, key=lambda r: (r["ms"] is None, r["ms"] or 0.0))


@data
class _Timers:
    compile_id: str | None = None
    precompile_s: float | None = None
    benchmark_s: float | None = None


class AutotuneCollector:
    """Joins each op's choices with the seconds torch timed for it (thread-safe)."""

    def __init__(
        self, sink: ev.Sink, run_id: str, compile_id: Callable[[], str | None] = lambda: None
    ) -> None:
        self.sink = sink
        self.run_id = run_id
        self.compile_id = compile_id  # the compile in progress, for an op with no timers
        self.timed = False  # the trace dispatcher feeds this collector its phases
        self.on_first_phase: Callable[[], None] | None = None
        self._lock = threading.Lock()
        self._timers: dict[int, _Timers] = {}

    def phase_began(self, name: str) -> None:
        if self.on_first_phase is not None and autotune_phase(name) is not None:
            with self._lock:
                hook, self.on_first_phase = self.on_first_phase, None
            if hook is not None:
                hook()

    def phase_ended(
        self, name: str, thread: int, duration_s: float, compile_id: str | None
    ) -> None:
        kind = autotune_phase(name)
        if kind is None:
            return
        with self._lock:
            t = self._timers.setdefault(thread, _Timers())
            t.compile_id = compile_id or t.compile_id
            if kind == "precompile":
                t.precompile_s = (t.precompile_s or 0.0) + duration_s
            else:
                t.benchmark_s = (t.benchmark_s or 0.0) + duration_s

    def autotuned(
        self,
        op: str,
        shapes: list[str],
        dtypes: list[str],
        timings: list[tuple[str, float | None, str]],
        thread: int,
    ) -> None:
        with self._lock:
            t = self._timers.pop(thread, _Timers())
        cached = (t.benchmark_s is None) if self.timed else None
        self.sink.emit(
            ev.OpAutotuned(
                run_id=self.run_id,
                compile_id=t.compile_id or self.compile_id(),
                op=op,
                shapes=shapes,
                dtypes=dtypes,
                choices=choice_rows(timings),
                precompile_s=t.precompile_s,
                benchmark_s=t.benchmark_s,
                cached=cached,
            )
        )


# --- torch adapter -------------------------------------------------------------------


def _size(node: Any) -> str:
    try:
        return "x".join(str(d) for d in node.get_size())
    except Exception:  # noqa: BLE001
        return "?"


def _dtype(node: Any) -> str:
    try:
        return str(node.get_dtype()).removeprefix("torch.")
    except Exception:  # noqa: BLE001
        return "?"


def install(collector: AutotuneCollector, notes: ProbeNotes) -> None:
    """Register a feedback saver with torch's autotuner (see the module docstring)."""

    def saver(timings: Any, name: Any, input_nodes: Any, *_: Any) -> None:
        try:
            rows = [
                (str(getattr(c, "name", c)), t, str(getattr(c, "description", "") or ""))
                for c, t in timings.items()
            ]
            collector.autotuned(
                str(name),
                [_size(n) for n in input_nodes],
                [_dtype(n) for n in input_nodes],
                rows,
                threading.get_ident(),
            )
        except Exception as e:  # noqa: BLE001 - never break the compile being tuned
            notes.unavailable(PROBE, f"could not read an autotune result: {type(e).__name__}")

    def register(module: Any) -> None:
        add = getattr(module, "add_feedback_saver", None)
        if add is None:
            notes.unavailable(
                PROBE,
                f"{MODULE}.add_feedback_saver not found: no per-op autotune table "
                "(compilation_metrics still give the autotune seconds)",
            )
            return
        try:
            add(saver)
        except Exception as e:  # noqa: BLE001
            notes.unavailable(PROBE, f"{MODULE}.add_feedback_saver failed: {type(e).__name__}")

    if collector.timed:
        # The phase is torch's autotuner at work: its module is imported.
        collector.on_first_phase = lambda: register(sys.modules.get(MODULE))
    else:
        when_imported(MODULE, register)
