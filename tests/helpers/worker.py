"""Drive ``python -m dlcprof.worker`` as a real subprocess through dlcprof.runner.

Kept independent of conftest so scripts/record_fixtures.py can use it too.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from dlcprof import events as ev
from dlcprof.runner import WorkerProcess
from dlcprof.settings import RunSettings

TEST_CACHE = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "/tmp/dlcprof-test-cache")


@dataclass
class WorkerResult:
    events: list[ev.Event]  # what the worker emitted (not its prints, not WorkerExited)
    returncode: int
    stdout: str
    stderr: str
    malformed: list[str] = field(default_factory=list)  # event lines that did not decode

    def of(self, cls: type[ev.Event]) -> list:
        return [e for e in self.events if isinstance(e, cls)]

    def one(self, cls: type[ev.Event]):
        found = self.of(cls)
        assert len(found) == 1, f"expected one {cls.__name__}, got {len(found)}: {found}"
        return found[0]


def run_worker(
    settings: RunSettings,
    run_id: str = "test",
    timeout_s: float = 300.0,
    env: dict[str, str] | None = None,
) -> WorkerResult:
    """Spawn a worker, send one request, collect everything."""
    child_env = {"TORCHINDUCTOR_CACHE_DIR": TEST_CACHE, **os.environ, **(env or {})}
    worker = WorkerProcess(idle_timeout_s=timeout_s, env=child_env)
    worker.start(settings, run_id)
    events: list[ev.Event] = []
    out: dict[str, list[str]] = {"stdout": [], "stderr": []}
    malformed: list[str] = []
    exited: ev.WorkerExited | None = None
    for e in worker.events():
        if isinstance(e, ev.WorkerExited):
            exited = e
        elif isinstance(e, ev.LogEmitted) and e.source in out:
            out[e.source].append(e.message)
        elif isinstance(e, ev.LogEmitted) and e.message.startswith("dropped a malformed event"):
            malformed.append(e.message)
        else:
            events.append(e)
    assert exited is not None and not exited.cancelled, exited
    return WorkerResult(
        events=events,
        returncode=exited.returncode,
        stdout="\n".join(out["stdout"]),
        stderr="\n".join(out["stderr"]),
        malformed=malformed,
    )


def clear_autotune_cache(cache_dir: str = TEST_CACHE) -> None:
    """Forget Inductor's autotune timings (``<cache dir>/cache/<system hash>``,
    docs/torch-notes.md §4), so the next max-autotune compile really benchmarks;
    compiled kernels and graphs stay cached."""
    shutil.rmtree(Path(cache_dir) / "cache", ignore_errors=True)


def phase_intervals(events: list[ev.Event]) -> list[ev.PhaseEnded]:
    return [e for e in events if isinstance(e, ev.PhaseEnded)]


def nesting_problems(phases: list[ev.PhaseEnded], slack_s: float = 2e-6) -> list[str]:
    """Phases on one thread must nest: each lies inside the one open around it.

    Returns a description per violation (empty when all nest). ``slack_s``
    absorbs the µs rounding of torch's timestamps.
    """
    problems: list[str] = []
    by_thread: dict[int, list[ev.PhaseEnded]] = {}
    for p in phases:
        by_thread.setdefault(p.thread, []).append(p)
    for thread, items in by_thread.items():
        # Parents first on equal starts: the longer interval opened first.
        items.sort(key=lambda p: (p.start_t, -p.duration_s))
        stack: list[ev.PhaseEnded] = []
        for p in items:
            end = p.start_t + p.duration_s
            while stack and stack[-1].start_t + stack[-1].duration_s <= p.start_t + slack_s:
                stack.pop()
            if stack:
                parent = stack[-1]
                parent_end = parent.start_t + parent.duration_s
                if end > parent_end + slack_s:
                    problems.append(
                        f"thread {thread}: {p.name} [{p.start_t:.6f}, {end:.6f}] overlaps "
                        f"{parent.name} [{parent.start_t:.6f}, {parent_end:.6f}]"
                    )
                    continue
            stack.append(p)
    return problems


def outermost(phases: list[ev.PhaseEnded]) -> list[ev.PhaseEnded]:
    """Phases not inside any other phase of the same thread."""
    out = []
    for p in phases:
        inside = any(
            q is not p
            and q.thread == p.thread
            and q.start_t <= p.start_t
            and q.start_t + q.duration_s >= p.start_t + p.duration_s
            and q.duration_s > p.duration_s
            for q in phases
        )
        if not inside:
            out.append(p)
    return out
