"""Drive ``python -m dlcprof.worker`` as a real subprocess (no dlcprof.runner).

Kept independent of conftest so scripts/record_fixtures.py can use it too.
"""

from __future__ import annotations

import json
import os
import selectors
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from dlcprof import events as ev
from dlcprof.settings import RunSettings

ROOT = Path(__file__).resolve().parent.parent
TEST_CACHE = os.environ.get("TORCHINDUCTOR_CACHE_DIR", "/tmp/dlcprof-test-cache")


@dataclass
class WorkerResult:
    events: list[ev.Event]
    returncode: int
    stdout: str
    stderr: str
    raw_lines: list[bytes] = field(default_factory=list)

    def of(self, cls: type[ev.Event]) -> list:
        return [e for e in self.events if isinstance(e, cls)]

    def one(self, cls: type[ev.Event]):
        found = self.of(cls)
        assert len(found) == 1, f"expected one {cls.__name__}, got {len(found)}: {found}"
        return found[0]


def run_worker(
    settings: RunSettings | dict | None,
    run_id: str = "test",
    timeout_s: float = 300.0,
    env: dict[str, str] | None = None,
) -> WorkerResult:
    """Spawn a worker, send one request (None: close stdin), collect everything."""
    child_env = dict(os.environ)
    child_env.setdefault("TORCHINDUCTOR_CACHE_DIR", TEST_CACHE)
    child_env["PYTHONPATH"] = os.pathsep.join(
        p for p in (str(ROOT), child_env.get("PYTHONPATH", "")) if p
    )
    child_env["PYTHONUNBUFFERED"] = "1"
    child_env.update(env or {})
    read_fd, write_fd = os.pipe()
    proc = subprocess.Popen(
        [sys.executable, "-m", "dlcprof.worker", "--events-fd", str(write_fd)],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        pass_fds=(write_fd,),
        env=child_env,
        cwd=str(ROOT),
        start_new_session=True,
    )
    os.close(write_fd)
    assert proc.stdin is not None
    if settings is not None:
        d = settings.to_dict() if isinstance(settings, RunSettings) else settings
        proc.stdin.write((json.dumps({"run_id": run_id, "settings": d}) + "\n").encode())
    proc.stdin.close()

    streams = {read_fd: "events", proc.stdout.fileno(): "stdout", proc.stderr.fileno(): "stderr"}
    chunks: dict[str, list[bytes]] = {"events": [], "stdout": [], "stderr": []}
    sel = selectors.DefaultSelector()
    for fd in streams:
        sel.register(fd, selectors.EVENT_READ)
    deadline = time.monotonic() + timeout_s
    try:
        while streams:
            if time.monotonic() > deadline:
                os.killpg(proc.pid, 9)
                raise TimeoutError(f"worker still running after {timeout_s} s")
            for key, _ in sel.select(timeout=0.5):
                data = os.read(key.fd, 1 << 16)
                if not data:
                    sel.unregister(key.fd)
                    del streams[key.fd]
                    continue
                chunks[streams[key.fd]].append(data)
    finally:
        sel.close()
        os.close(read_fd)
    rc = proc.wait(timeout=30)
    raw = b"".join(chunks["events"]).split(b"\n")
    lines = [ln for ln in raw if ln.strip()]
    return WorkerResult(
        events=[ev.decode(ln) for ln in lines],
        returncode=rc,
        stdout=b"".join(chunks["stdout"]).decode(errors="replace"),
        stderr=b"".join(chunks["stderr"]).decode(errors="replace"),
        raw_lines=lines,
    )


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
