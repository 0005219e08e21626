"""Inductor's kernel provenance (which kernel came from which graph nodes and
user lines) turned on for dlcprof, without moving what it measures: the
program's graph-cache keys stay its own, and Inductor's search patterns are
traced without the stacks provenance would capture. Each adapter degrades to
provenance off (a ``ProbeUnavailable`` note) on a torch that lacks its names.
"""

from __future__ import annotations

import functools
from typing import Any

from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes.lazy import when_imported


def enable_provenance(notes: ProbeNotes) -> bool:
    """Turn on Inductor's kernel -> node provenance (payloads, not files), kept
    out of the graph caches' keys: the program's own warm cache must hit."""
    global _users_level
    try:
        import torch._inductor.config as inductor_config

        trace_cfg = inductor_config.trace
        if not hasattr(trace_cfg, "provenance_tracking_level"):
            raise AttributeError("torch._inductor.config.trace.provenance_tracking_level")
        if "trace" not in getattr(inductor_config, "_cache_config_ignore_prefix", ()):
            raise LookupError("trace.* settings are part of the graph cache key")
        if _users_level is None:  # a forked child's install sees ours
            _users_level = trace_cfg.provenance_tracking_level
        trace_cfg.provenance_tracking_level = _users_level or 1
    except Exception as e:  # noqa: BLE001 - any failure means: no provenance
        notes.unavailable(
            "kernels.provenance",
            f"{type(e).__name__}: {e}; fused ops come from kernel names instead",
        )
        return False
    when_imported(CODECACHE, lambda module: _key_without_provenance(module, notes))
    when_imported(PATTERN_MATCHER, _patterns_without_stack_traces)
    return True


CODECACHE = "torch._inductor.codecache"
_users_level: int | None = None  # the program's own level, before ours
_USERS_KEY = "_dlcprof_users_key"  # marks the wrapper below


def _key_without_provenance(module: Any, notes: ProbeNotes) -> None:
    """Torch 2.13 hashes the provenance level into the FX graph and AOTAutograd
    cache keys (``FxGraphHashDetails.provenance_tracking_level``, which
    ``AOTAutogradCacheDetails`` inherits): with ours in it, a program whose
    cache is warm would miss every compile under dlcprof. The key gets the
    program's own level instead, so it is the key the program's own run
    computes. What changes under it is only what the entry carries besides the
    code (provenance payloads, comments), so an entry either run wrote serves
    both. Where it cannot be done provenance goes back off: a warm cache
    matters more than kernel source lines."""
    import torch._inductor.config as inductor_config

    details = getattr(module, "FxGraphHashDetails", None)
    init = getattr(details, "__init__", None)
    if details is None or init is None:
        inductor_config.trace.provenance_tracking_level = _users_level or 0
        notes.unavailable(
            "kernels.provenance",
            "torch._inductor.codecache.FxGraphHashDetails not found: provenance left off "
            "so the program's graph cache keeps hitting; fused ops come from kernel names",
        )
        return
    if getattr(init, _USERS_KEY, False):
        return  # wrapped once per process: a forked child installs the probes again

    @functools.wraps(init)
    def users_key(self: Any, *args: Any, **kwargs: Any) -> None:
        init(self, *args, **kwargs)
        if hasattr(self, "provenance_tracking_level"):  # older torch does not hash it
            self.provenance_tracking_level = _users_level

    setattr(users_key, _USERS_KEY, True)
    details.__init__ = users_key


PATTERN_MATCHER = "torch._inductor.pattern_matcher"
_UNTRACED = "_dlcprof_untraced"  # marks the wrapper below


def _patterns_without_stack_traces(module: Any) -> None:
    """Provenance tracking makes every ``make_fx`` capture a Python stack for
    each node it creates, also for the few hundred search patterns Inductor
    traces once per process at its first compile (``gen_pattern_and_search_gm``,
    called by name in its module): work moved into the user's first compile
    (benchmarks/RESULTS.md §9). A pattern needs no stack, so they are traced
    with provenance off. Missing on another torch: they cost more, no more."""
    import torch._inductor.config as inductor_config

    trace = getattr(module, "gen_pattern_and_search_gm", None)
    # Wrapped once per process: a forked child installs the probes again.
    if trace is None or getattr(trace, _UNTRACED, False):
        return

    @functools.wraps(trace)
    def untraced(*args: Any, **kwargs: Any) -> Any:
        with inductor_config.patch({"trace.provenance_tracking_level": 0}):
            return trace(*args, **kwargs)

    setattr(untraced, _UNTRACED, True)
    module.gen_pattern_and_search_gm = untraced
