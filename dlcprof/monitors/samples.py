"""Stacks sampled by py-spy, as plain data: one ``Sample`` per stack, read from a
speedscope file (``load_samples``, each sample's wall-clock time recovered),
named by thread, waits and the program's own work named as such, aggregated into hot-frame rows, and
grouped by compile phase (``attribute_phases``). Nothing here runs py-spy."""

from __future__ import annotations

import json
import re
from collections import Counter, defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dlcprof import own_code, text
from dlcprof.data import data

Frame = tuple[str, str, int]  # (function, file, line)


@data(frozen=True)
class Sample:
    """One sampled stack of one thread (``count`` identical ones when aggregated)."""

    thread: str  # "main", "pool", or the thread's name
    frames: tuple[Frame, ...]  # root first, leaf last
    t: float | None = None  # epoch seconds, when known
    count: int = 1


def thread_label(name: str) -> str:
    """'Thread 8633 "MainThread"' -> "main"; ThreadPoolExecutor workers -> "pool"."""
    m = re.match(r'Thread (\d+)(?: "(.*)")?$', name)
    tname = name if m is None else (m.group(2) or f"thread {m[1]}")
    if tname == "MainThread":
        return "main"
    if tname.startswith("ThreadPoolExecutor") or tname.startswith("AsyncCompile"):
        return "pool"
    return tname


# Where a compiling thread waits on another process, as (file suffix, functions):
# a stack through one of these is waiting, whatever frames lie below it.
_WAITS = (
    (
        "subprocess.py",
        frozenset({"run", "call", "check_call", "check_output", "Popen.communicate", "Popen.wait"}),
    ),
    ("concurrent/futures/_base.py", frozenset({"Future.result", "wait", "as_completed"})),
)


# Where the worker waits, before it times a workload, for dlcprof to stop
# sampling it (worker/quiet.py): samples py-spy takes until it stops.
_QUIET_FILE, _QUIET_WAIT = "worker/quiet.py", "QuietWindow._wait_for_parent"


def waiting(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """The stack with its waiting tail replaced by one frame that names what it
    waits on (text.WAITING_*): Popen.communicate under Inductor's C++ builder
    is the C++ compiler, Future.result under Inductor is its compile workers,
    the worker's quiet window is dlcprof pausing its monitors. Stacks that do
    not wait come back as they are."""
    for i, (func, file, _) in enumerate(frames):
        if func == _QUIET_WAIT and own_code.module(file) == _QUIET_FILE:
            return (*frames[:i], (text.WAITING_QUIET, file, frames[i][2]))
        for suffix, funcs in _WAITS:
            if func in funcs and file.endswith(suffix):
                callers = "".join(f for _, f, _ in frames[:i])
                if suffix == "subprocess.py":
                    cxx = "cpp_builder" in callers
                    what = text.WAITING_COMPILER if cxx else text.WAITING_PROCESS
                elif "torch/_inductor" in callers:
                    what = text.WAITING_WORKERS
                else:
                    continue
                return (*frames[:i], (what, file, frames[i][2]))
    return frames


# Frames that start a compile (Dynamo's, or Inductor's for a graph such as a lazy
# backward): a stack through one is the compiler's, whatever frames lie above it.
_COMPILING = ("torch/_dynamo/convert_frame.py", "torch/_inductor/compile_fx.py")


def _kernel_sampler(func: str, file: str) -> bool:
    return own_code.module(file) in ("worker/launches.py", "worker/attached/kernel_sample.py")


def _compiled_code(func: str, file: str) -> bool:
    # The module's body runs once, as Inductor loads it (builds its kernels): compiling.
    return text.cache_file(file) is not None and func != "<module>"


def _optimizer(func: str, file: str) -> bool:
    return "torch/optim/" in file


# dlcprof's probe code (not its worker's harness, which runs a workload's own code).
_PROBES = ("worker/attached/", "worker/probes/", "trace_records/")


# A wrapper around the program's own call (two clock reads a call): what runs
# under it is the program's, so it names no stack dlcprof's.
_AROUND_PROGRAM = "worker/attached/steps.py"


def _dlcprof(func: str, file: str) -> bool:
    inside = own_code.module(file) or ""
    return inside.startswith(_PROBES) and inside != _AROUND_PROGRAM


# The program's own work a sampled stack can be in, first match wins (the kernel
# sampler runs inside the compiled code it times).
_WORK = (
    (_kernel_sampler, text.KERNEL_SAMPLER),
    (_compiled_code, text.RUNNING_COMPILED),
    (_optimizer, text.RUNNING_OPTIMIZER),
    # Last: dlcprof's wrappers sit above the compiler and the compiled code.
    (_dlcprof, text.DLCPROF_PROBES),
)


def program_work(frames: tuple[Frame, ...]) -> tuple[Frame, ...]:
    """The stack with the tail that runs the program's work (compiled code, the
    optimizer) or dlcprof's (its kernel sampler, its probes) replaced by one frame that names it, so
    the compiler's hot frames stay the compiler's. A stack that compiles below
    that frame (``_COMPILING``) is the compiler's and comes back as it is."""
    for matches, what in _WORK:
        for i, (func, file, line) in enumerate(frames):
            if matches(func, file):
                if any(f.endswith(_COMPILING) for _, f, _ in frames[i + 1 :]):
                    break
                return (*frames[:i], (what, file, line))
    return frames


class FrameStats:
    """Own/total counts per frame and samples per thread, built incrementally
    (the live view adds each window's samples once instead of re-walking every
    stack each second). Waiting tails and the program's own work are named as
    such (``waiting``, ``program_work``)."""

    def __init__(self) -> None:
        self.own: Counter[tuple[str, str, str]] = Counter()
        self.total: Counter[tuple[str, str, str]] = Counter()
        self.lines: dict[tuple[str, str, str], Counter[int]] = defaultdict(Counter)
        self.threads: Counter[str] = Counter()  # samples per thread: the 100% of its shares

    def add(self, s: Sample) -> None:
        if not s.frames:
            return
        self.threads[s.thread] += s.count
        frames = waiting(program_work(s.frames))
        seen: set[tuple[str, str, str]] = set()
        for func, file, line in frames:
            key = (func, file, s.thread)
            self.lines[key][line] += s.count
            if key not in seen:
                seen.add(key)
                self.total[key] += s.count
        func, file, _ = frames[-1]
        self.own[(func, file, s.thread)] += s.count

    def rows(self, top: int = 15) -> list[dict[str, Any]]:
        """The top ``top`` by own and by total of each thread (so a view that
        shows one thread still has its rows)."""
        own, total = self.own, self.total
        chosen: set[tuple[str, str, str]] = set()
        for thread in self.threads:
            for counts in (own, total):
                mine = Counter({k: n for k, n in counts.items() if k[2] == thread and n})
                chosen.update(k for k, _ in mine.most_common(top))
        ordered = sorted(chosen, key=lambda k: (-own[k], -total[k], k))
        return [
            {
                "function": func,
                "file": text.short_path(file),
                "line": self.lines[(func, file, thread)].most_common(1)[0][0],
                "thread": thread,
                "own": own[(func, file, thread)],
                "total": total[(func, file, thread)],
                "phase": None,
            }
            for func, file, thread in ordered
        ]


def aggregate(stacks: Iterable[Sample], top: int = 15) -> list[dict[str, Any]]:
    """Top frames by own and by total sample count, per thread.

    A frame is a function in a file on a thread; ``line`` is the line seen
    most often in it. ``own`` counts samples where it is the leaf (running or
    waiting right there), ``total`` samples where it is anywhere on the stack
    (once per sample, also under recursion). Rows are the union of each
    thread's top ``top`` by own and by total, own-heaviest first, then total.
    """
    stats = FrameStats()
    for s in stacks:
        stats.add(s)
    return stats.rows(top)


def thread_samples(stacks: Iterable[Sample]) -> dict[str, int]:
    """Samples per thread (those with Python frames)."""
    out: Counter[str] = Counter()
    for s in stacks:
        if s.frames:
            out[s.thread] += s.count
    return dict(out)


def attribute_phases(
    samples: Iterable[Sample], phases: Iterable[tuple[str, float, float]], top: int = 15
) -> list[dict[str, Any]]:
    """``aggregate`` per compile phase: each timed sample goes to the innermost
    (shortest) phase ``(name, start, end)`` containing its time; samples in
    no phase, or without a time, aggregate under phase None. Rows carry
    ``phase``; phases come in the order given, None last.
    """
    spans = sorted(((end - start, start, end, name) for name, start, end in phases))
    order = list(dict.fromkeys(name for _, _, _, name in sorted(spans, key=lambda x: x[1])))
    groups: dict[str | None, list[Sample]] = defaultdict(list)
    for s in samples:
        phase = None
        if s.t is not None:
            for _, start, end, name in spans:
                if start <= s.t <= end:
                    phase = name
                    break
        groups[phase].append(s)
    rows: list[dict[str, Any]] = []
    for phase in [*order, None]:
        if phase in groups:
            for row in aggregate(groups[phase], top):
                row["phase"] = phase
                rows.append(row)
    return rows


def parse_speedscope(doc: dict[str, Any]) -> list[tuple[str, list[tuple[Frame, ...]], list[float]]]:
    """(profile name, stacks root-first, weights) for each sampled profile."""
    frames = [
        (str(f.get("name", "?")), str(f.get("file") or ""), int(f.get("line") or 0))
        for f in doc.get("shared", {}).get("frames", [])
    ]
    out = []
    for p in doc.get("profiles", []):
        if p.get("type") != "sampled":
            continue
        stacks = [tuple(frames[i] for i in stack) for stack in p.get("samples", [])]
        weights = [float(w) for w in p.get("weights", [1.0] * len(stacks))]
        out.append((str(p.get("name", "")), stacks, weights))
    return out


def load_samples(path: str | Path) -> list[Sample]:
    """Timed samples from a speedscope file written by ``PySpySampler``.

    Times are ``startValue`` plus the weights before each sample; empty
    stacks are the time no window covered. (For a plain py-spy file
    ``startValue`` is 0, so ``t`` is relative to the start of sampling.)
    """
    doc = json.loads(Path(path).read_text())
    starts = {p.get("name"): float(p.get("startValue", 0.0)) for p in doc.get("profiles", [])}
    out: list[Sample] = []
    for name, stacks, weights in parse_speedscope(doc):
        t = starts.get(name, 0.0)
        label = thread_label(name)
        for stack, w in zip(stacks, weights, strict=False):
            if stack:
                out.append(Sample(label, stack, t))
            t += w
    return out
