"""Each call of what an attached program's ``torch.compile`` returned, timed
around the whole call, in both runs of ``--eager-baseline`` only (STEPS_ENV):
the per-step wall the eager baseline compares after warm-up
(``figures/job/steps.py``).

``compile_calls.py`` hands each compiled callable here as torch.compile
returns it: a function is wrapped (``functools.wraps`` keeps Dynamo's
attributes on it), an ``OptimizedModule``'s instance ``forward`` (Dynamo's own
wrapped call) is. Two clock reads a call; the first ``MAX_CALLS`` calls of each
are kept, the rest only counted. Inside another compiled region the call is not
timed: Dynamo traces it there, and a clock read would break its graph."""

from __future__ import annotations

import functools
import threading
import time
from collections.abc import Callable
from typing import Any

from dlcprof import events as ev

MAX_CALLS = 1000


class Steps:
    def __init__(self, is_compiling: Callable[[], bool]) -> None:
        self.is_compiling = is_compiling
        self._lock = threading.Lock()
        self._timed: list[tuple[str, list[float], list[float], list[int]]] = []

    def wrap(self, compiled: Any, caller: str) -> Any:
        """``compiled`` timed at each call; anything else returned as it is."""
        starts: list[float] = []
        walls: list[float] = []
        calls = [0]
        with self._lock:
            self._timed.append((caller, starts, walls, calls))
        is_compiling = self.is_compiling

        def timing(fn: Callable[..., Any]) -> Callable[..., Any]:
            @functools.wraps(fn)
            def timed(*args: Any, **kwargs: Any) -> Any:
                if is_compiling():
                    return fn(*args, **kwargs)
                calls[0] += 1
                if calls[0] > MAX_CALLS:
                    return fn(*args, **kwargs)
                at, t0 = time.time(), time.perf_counter()
                try:
                    return fn(*args, **kwargs)
                finally:
                    walls.append(time.perf_counter() - t0)
                    starts.append(at)

            return timed

        forward = getattr(compiled, "forward", None)
        if hasattr(compiled, "_orig_mod") and callable(forward):  # an OptimizedModule
            compiled.forward = timing(forward)
            return compiled
        return timing(compiled) if callable(compiled) else compiled

    def forget(self) -> None:
        """In a forked child: the calls so far were the parent's."""
        with self._lock:
            self._timed.clear()

    def timed(self, run_id: str, eager: bool) -> list[ev.StepsTimed]:
        with self._lock:
            return [
                ev.StepsTimed(
                    run_id=run_id,
                    caller=caller,
                    start_t=list(starts),
                    wall_s=list(walls),
                    calls=calls[0],
                    eager=eager,
                )
                for caller, starts, walls, calls in self._timed
                if calls[0]
            ]
