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
