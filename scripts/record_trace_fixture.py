#!/usr/bin/env python
"""Record real ``TORCH_TRACE`` logs as test fixtures for ``dlcprof import``.

    .venv/bin/python scripts/record_trace_fixture.py [NAME ...]   # default: all

Writes under ``tests/fixtures/torch_trace/``:

- ``ddp_odd_batch/``: torch's own per-rank logs (gzipped) of the 2-rank gloo job
  ``tests/programs/ddp_odd_batch.py`` (rank 1 recompiles alone on its partial
  last batch), run under ``dlcprof run -- torchrun`` with ``TORCH_TRACE`` set, and
  ``live.jsonl``, the events that attached run saw: one run, both recordings.
- ``train/``: the log of the single-process script ``tests/programs/train.py``
  (a data-dependent graph break), run with ``TORCH_TRACE`` alone.
- ``cache_key/``: ``tests/programs/cache_key.py`` (two 1-op graphs, f and g)
  three times on one new Inductor cache folder: ``base/`` (cold: both miss),
  ``setting/`` (``fallback_random`` on for g: g misses, f hits), ``graph/``
  (one op more in f: f misses, g hits), each with ``TORCH_TRACE``.
- ``dynamo_reset/``: ``tests/programs/dynamo_reset.py`` (one function compiled
  three times, a ``torch._dynamo.reset()`` before each: compile 0/0 three
  times, a miss, a hit and a miss) on a new Inductor cache folder, with
  ``TORCH_TRACE``.
- ``aoti_linear/``: ``tests/programs/aoti_linear.py`` (a module compiled ahead
  of time by AOTInductor, on CPU) on a new Inductor cache folder, with
  ``TORCH_TRACE``.

This checkout's path (and another checkout's, handed back by the shared
Inductor cache) reads ``/home/user/dlcprof/`` in every file, like the other
recordings.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "tests" / "fixtures" / "torch_trace"
CHECKOUT = "/home/user/dlcprof/"


# Other checkouts of this project on the machine (a git worktree, a second
# clone): the shared Inductor cache hands their paths back in the output code
# and stack traces of the graphs they compiled first. A checkout is known by
# the folders only a checkout's root holds.
_CHECKOUTS = re.compile(r"/[^\s\"'<>:]*?/(?=tests/programs/|dlcprof/worker/|\.venv/)")


def _portable(text: str) -> str:
    text = text.replace(str(ROOT) + "/", CHECKOUT).replace(str(ROOT), CHECKOUT.rstrip("/"))
    return _CHECKOUTS.sub(CHECKOUT, text)


_MD5_RE = re.compile(r'"has_payload": "([0-9a-f]{32})"')


def rehashed(text: str) -> str:
    """Each record's payload md5 (its ``has_payload``) that of its payload as
    the text now holds it, as torch writes it (the payload's lines joined, no
    newline after the last): a path made portable leaves the log whole."""
    lines = text.split("\n")
    header: int | None = None
    for i, line in enumerate([*lines, ""]):
        if line.startswith("\t"):
            continue
        if header is not None:
            payload = "\n".join(x[1:] for x in lines[header + 1 : i])
            md5 = hashlib.md5(payload.encode()).hexdigest()
            lines[header] = _MD5_RE.sub(f'"has_payload": "{md5}"', lines[header])
        header = i if _MD5_RE.search(line) else None
    return "\n".join(lines)


def _save_logs(trace_dir: Path, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.log.gz"):
        old.unlink()
    for log in sorted(trace_dir.glob("*.log")):
        data = rehashed(_portable(log.read_text(encoding="utf-8"))).encode()
        (out / f"{log.name}.gz").write_bytes(gzip.compress(data, mtime=0))


def ddp_odd_batch(tmp: Path) -> None:
    trace, report = tmp / "ddp", tmp / "live.json"
    torchrun = str(Path(sys.executable).parent / "torchrun")
    program = str(ROOT / "tests" / "programs" / "ddp_odd_batch.py")
    subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(report), "--no-hotspots"]
        + ["--", torchrun, "--standalone", "--nproc-per-node", "2", program],
        check=True,
        cwd=ROOT,
        env={**os.environ, "TORCH_TRACE": str(trace)},
    )
    out = OUT / "ddp_odd_batch"
    _save_logs(trace, out)
    events = json.loads(report.read_text())["events"]
    lines = [_portable(json.dumps(e)) for e in events if e["type"] != "DeviceSampled"]
    (out / "live.jsonl").write_text("\n".join(lines) + "\n")


def train(tmp: Path) -> None:
    trace = tmp / "train"
    subprocess.run(
        [sys.executable, str(ROOT / "tests" / "programs" / "train.py")],
        check=True,
        cwd=ROOT,
        env={**os.environ, "TORCH_TRACE": str(trace)},
    )
    _save_logs(trace, OUT / "train")


def cache_key(tmp: Path) -> None:
    program = str(ROOT / "tests" / "programs" / "cache_key.py")
    cache = {"TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor-cache")}
    for name, env in (("base", {}), ("setting", {"FALLBACK_RANDOM": "1"}),
                      ("graph", {"ONE_MORE_OP": "1"})):  # fmt: skip
        trace = tmp / "cache_key" / name
        subprocess.run(
            [sys.executable, program],
            check=True,
            cwd=ROOT,
            env={**os.environ, **cache, **env, "TORCH_TRACE": str(trace)},
        )
        _save_logs(trace, OUT / "cache_key" / name)


def _on_a_new_cache(name: str) -> Callable[[Path], None]:
    """Record tests/programs/NAME.py run once on an Inductor cache of its own, its
    log saved as NAME."""

    def record(tmp: Path) -> None:
        trace = tmp / name
        subprocess.run(
            [sys.executable, str(ROOT / "tests" / "programs" / f"{name}.py")],
            check=True,
            cwd=ROOT,
            env={
                **os.environ,
                "TORCHINDUCTOR_CACHE_DIR": str(tmp / f"{name}-cache"),
                "TORCH_TRACE": str(trace),
            },
        )
        _save_logs(trace, OUT / name)

    return record


FIXTURES = {
    "ddp_odd_batch": ddp_odd_batch,
    "train": train,
    "cache_key": cache_key,
    "dynamo_reset": _on_a_new_cache("dynamo_reset"),
    "aoti_linear": _on_a_new_cache("aoti_linear"),
}


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for name in sys.argv[1:] or FIXTURES:
            FIXTURES[name](Path(tmp))


if __name__ == "__main__":
    main()
