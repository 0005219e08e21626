"""How many kernel-build workers a process's Inductor runs: its
``torch._inductor.config.compile_threads`` (TORCHINDUCTOR_COMPILE_THREADS, else
min(32, the process's cores)), the size of its pool of build subprocesses.

Read at the process's end from the module torch already loaded: importing
Inductor's config costs about a second, and a process that never loaded it
compiled nothing with Inductor (no workers)."""

from __future__ import annotations

import sys

from dlcprof import events as ev

NEVER_LOADED = "Inductor never loaded in this process: no kernel-build workers"


def read(run_id: str) -> ev.CompileThreadsRead:
    config = sys.modules.get("torch._inductor.config")
    if config is None:
        return ev.CompileThreadsRead(run_id=run_id, threads=0, why=NEVER_LOADED)
    try:
        return ev.CompileThreadsRead(run_id=run_id, threads=int(config.compile_threads))
    except Exception as e:  # noqa: BLE001 - a renamed option reads n/a
        why = f"torch._inductor.config.compile_threads: {type(e).__name__}: {e}"
        return ev.CompileThreadsRead(run_id=run_id, threads=None, why=why)
