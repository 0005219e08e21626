"""The compiler's own hot Python frames, sampled by py-spy from outside the worker.

How "live" works with py-spy 0.4.3 (measured on this 2-vCPU machine against
a compiling torch worker):

- ``py-spy record`` writes its output only when it stops (on exit of the
  target or on SIGINT): a raw/speedscope file never grows while it runs, so
  there is nothing to read incrementally.
- ``py-spy top`` refuses to run without a TTY ("Not a tty").
- ``py-spy dump --json`` is one stack per call and costs ~40 ms (spawn +
  attach) per call: 1 sample a second is too sparse for a profile, 20 a
  second would keep a core busy.
- So we chain short ``record`` windows: one py-spy process samples for
  ``live_interval_s`` (default 1 s) at ``rate_hz`` (100); the next one is
  spawned shortly before, and the current one is stopped with SIGINT (it then
  writes its speedscope file) only once the next has printed "Sampling
  process" (it attached, ~50-80 ms here). Windows therefore overlap by a few
  ms instead of leaving gaps; each window is parsed as it ends, added to the
  running aggregate and emitted as ``HotFramesSampled``, about once a second.
  At the end the windows are merged into one speedscope file.
- Because we know when each window attached and was stopped (``time.time()``),
  every sample gets an (interpolated) wall-clock time: a plain py-spy
  speedscope has weights but no timestamps; ours puts the epoch time in each
  profile's ``startValue`` and fills uncovered time with empty-stack samples,
  so ``load_samples`` recovers per-sample times and ``attribute_phases`` can
  group samples by compile phase (to within a sample or two).
- ``--idle`` is on: waiting on g++ is idle time, and without it only ~6 s of
  a 25 s compile were sampled. Threads stay apart (one speedscope profile
  each).
- Numbers (benchmarks/pyspy_overhead.py, 2 vCPUs shared with other load,
  median of 3-5 alternating runs): ~97-99 ticks/s (of 100), windows cover
  100% of the run; a 4-shape compile took 1.10x (warm cache, new shapes) to
  1.26x (fresh cache dir) as long with live sampling, vs 1.08x-1.11x with
  one single record (min-of-runs ratios 1.09-1.12 for both). py-spy itself
  used ~14-15% of a core live vs ~12.5% single (re-attaching every second
  costs ~2.5% of a core); parsing and aggregating here ~0.5%. Give
  ``live_interval_s=0`` for one window (no live rows) where that matters.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import selectors
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import psutil

from dlcprof.events import Event, HotFramesSampled, MonitorStatus, ProfileSaved

Emit = Callable[[Event], None]
Frame = tuple[str, str, int]  # (function, file, line)

NOT_FOUND_MESSAGE = "py-spy not found: pip install py-spy (no hot-frames pane without it)"
DENIED_MESSAGE = (
    "py-spy may not attach to the worker (ptrace denied): run as root, or "
    "`sysctl kernel.yama.ptrace_scope=0`, or in a container `--cap-add SYS_PTRACE`"
)
_ATTACHED = b"Sampling process"
_DENIED_RE = re.compile(r"permission denied|operation not permitted|ptrace", re.IGNORECASE)


@dataclass(frozen=True)
class Sample:
    """One sampled stack of one thread (``count`` identical ones when aggregated)."""

    thread: str  # "main", "pool", or the thread's name
    frames: tuple[Frame, ...]  # root first, leaf last
    t: float | None = None  # epoch seconds, when known
    count: int = 1


# --- locating py-spy ---------------------------------------------------------------


def find_pyspy() -> str | None:
    """The py-spy binary: next to this Python first (the venv's), then on PATH."""
    here = Path(sys.executable).parent / "py-spy"
    if here.is_file() and os.access(here, os.X_OK):
        return str(here)
    return shutil.which("py-spy")


def pyspy_status(binary: str | None = None) -> tuple[bool, str]:
    """(available, one line): is a runnable py-spy there, and which version."""
    binary = binary or find_pyspy()
    if binary is None or not os.access(binary, os.X_OK):
        return False, NOT_FOUND_MESSAGE
    try:
        out = subprocess.run(
            [binary, "--version"], capture_output=True, text=True, timeout=10, check=False
        )
    except (OSError, subprocess.SubprocessError) as e:
        return False, f"py-spy at {binary} does not run: {e}"
    version = out.stdout.strip() or out.stderr.strip()
    if out.returncode != 0:
        return False, f"py-spy at {binary} failed: {version.splitlines()[0] if version else ''}"
    return True, f"{version} ({binary})"


def ptrace_check(binary: str | None = None, timeout_s: float = 15.0) -> tuple[bool, str]:
    """Try what the sampler does: attach py-spy to a short-lived child Python."""
    binary = binary or find_pyspy()
    if binary is None:
        return False, NOT_FOUND_MESSAGE
    child = subprocess.Popen(
        [sys.executable, "-c", "import time; time.sleep(30)"],
        stdin=subprocess.DEVNULL,
        start_new_session=True,
    )
    deadline = time.monotonic() + timeout_s
    last = ""
    try:
        while time.monotonic() < deadline:
            try:
                out = subprocess.run(
                    [binary, "dump", "--pid", str(child.pid)],
                    capture_output=True, text=True, timeout=10, check=False,
                )  # fmt: skip
            except (OSError, subprocess.SubprocessError) as e:
                return False, f"py-spy dump failed: {e}"
            if out.returncode == 0:
                return True, "py-spy can attach to child processes"
            last = _error_line(out.stderr + out.stdout)
            if _DENIED_RE.search(last):
                return False, DENIED_MESSAGE
            time.sleep(0.2)  # the child's interpreter may not be initialized yet
        return False, f"py-spy could not attach: {last}"
    finally:
        child.kill()
        child.wait()


def _error_line(text: str) -> str:
    """The one line of py-spy's output that says what went wrong."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("Error:") or _DENIED_RE.search(ln):
            return ln.removeprefix("Error:").strip()
    return lines[0] if lines else "unknown error"


# --- pure functions over samples ------------------------------------------------------


def thread_label(name: str) -> str:
    """'Thread 8633 "MainThread"' -> "main"; ThreadPoolExecutor workers -> "pool"."""
    m = re.match(r'Thread (\d+)(?: "(.*)")?$', name)
    tname = name if m is None else (m.group(2) or f"thread {m[1]}")
    if tname == "MainThread":
        return "main"
    if tname.startswith("ThreadPoolExecutor") or tname.startswith("AsyncCompile"):
        return "pool"
    return tname


def short_path(path: str) -> str:
    """Drop the install prefix: '…/site-packages/torch/_inductor/x.py' -> 'torch/_inductor/x.py'."""
    for marker in ("/site-packages/", "/dist-packages/"):
        i = path.rfind(marker)
        if i >= 0:
            return path[i + len(marker) :]
    m = re.search(r"/lib/python\d+\.\d+/", path)
    if m:
        return path[m.end() :]
    return path


class FrameStats:
    """Own/total counts per frame, built incrementally (the live view adds each
    window's samples once instead of re-walking every stack each second)."""

    def __init__(self) -> None:
        self.own: Counter[tuple[str, str, str]] = Counter()
        self.total: Counter[tuple[str, str, str]] = Counter()
        self.lines: dict[tuple[str, str, str], Counter[int]] = defaultdict(Counter)

    def add(self, s: Sample) -> None:
        if not s.frames:
            return
        seen: set[tuple[str, str, str]] = set()
        for func, file, line in s.frames:
            key = (func, file, s.thread)
            self.lines[key][line] += s.count
            if key not in seen:
                seen.add(key)
                self.total[key] += s.count
        func, file, _ = s.frames[-1]
        self.own[(func, file, s.thread)] += s.count

    def rows(self, top: int = 15) -> list[dict[str, Any]]:
        own, total = self.own, self.total
        chosen = {k for k, _ in own.most_common(top)} | {k for k, _ in total.most_common(top)}
        ordered = sorted(chosen, key=lambda k: (-own[k], -total[k], k))
        return [
            {
                "function": func,
                "file": short_path(file),
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
    (once per sample, also under recursion). Rows are the union of the top
    ``top`` by own and by total, own-heaviest first, then total.
    """
    stats = FrameStats()
    for s in stacks:
        stats.add(s)
    return stats.rows(top)


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


# --- the sampler --------------------------------------------------------------------------


class _Window:
    """One ``py-spy record`` process sampling the worker until SIGINT."""

    def __init__(self, binary: str, pid: int, rate_hz: int, path: Path, nonblocking: bool):
        self.path = path
        self.t_spawn = time.time()
        self.t_attached: float | None = None
        self.t_end: float | None = None
        cmd = [binary, "record", "--pid", str(pid), "--rate", str(rate_hz), "--idle"]
        cmd += ["--format", "speedscope", "--output", str(path)]
        if nonblocking:
            cmd.append("--nonblocking")
        self._err_path = path.with_suffix(".err")
        with open(self._err_path, "wb") as err:
            # Own session: a Ctrl-C in the terminal is ours to handle, not py-spy's.
            self.proc = subprocess.Popen(
                cmd,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=err,
                start_new_session=True,
            )
        assert self.proc.stdout is not None
        os.set_blocking(self.proc.stdout.fileno(), False)
        self._out = b""

    def wait_attached(self, timeout_s: float, stop: threading.Event) -> bool:
        """True once py-spy says it is sampling; False if it exited, timed out or we stop."""
        assert self.proc.stdout is not None
        deadline = time.monotonic() + timeout_s
        with selectors.DefaultSelector() as sel:
            sel.register(self.proc.stdout, selectors.EVENT_READ)
            while time.monotonic() < deadline and not stop.is_set():
                if sel.select(0.05):
                    chunk = self.proc.stdout.read() or b""
                    self._out += chunk
                    if _ATTACHED in self._out:
                        self.t_attached = time.time()
                        return True
                    if not chunk and self.proc.poll() is not None:
                        return False
                elif self.proc.poll() is not None:
                    return False
        return False

    def exited(self) -> bool:
        if self.proc.poll() is not None:
            if self.t_end is None:
                self.t_end = time.time()
            return True
        return False

    def finish(self, timeout_s: float = 10.0) -> None:
        """Stop sampling (SIGINT makes py-spy write its file) and reap it."""
        if self.proc.poll() is None:
            self.t_end = time.time()
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)
            try:
                self.proc.wait(timeout_s)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        elif self.t_end is None:
            self.t_end = time.time()
        assert self.proc.stdout is not None
        with contextlib.suppress(OSError, ValueError):
            self._out += self.proc.stdout.read() or b""
            self.proc.stdout.close()

    def error(self) -> str:
        try:
            err = self._err_path.read_text(errors="replace")
        except OSError:
            err = ""
        return _error_line(err + self._out.decode(errors="replace"))

    def profiles(self) -> list[tuple[str, list[tuple[Frame, ...]], list[float]]] | None:
        try:
            return parse_speedscope(json.loads(self.path.read_text()))
        except (OSError, ValueError):
            return None


class PySpySampler:
    """Samples worker ``pid`` with py-spy; live ``HotFramesSampled``, speedscope at the end.

    Never raises: a missing or denied py-spy becomes one ``MonitorStatus``
    (available=False) with the fix. When sampling works it emits
    ``MonitorStatus(available=True)`` once, then ``HotFramesSampled`` after
    each window (cumulative since start; ``own``/``total`` are sample counts,
    ``samples`` the sampling ticks, so own/samples is that thread's share of
    wall time). When the worker exits or ``stop()`` is called it writes
    ``out_path`` and emits ``ProfileSaved``. ``live_interval_s <= 0`` samples
    in one window (no live rows, no restarts).
    """

    def __init__(
        self,
        pid: int,
        emit: Emit,
        out_path: str | Path | None,
        rate_hz: int = 100,
        live_interval_s: float = 1.0,
        *,
        binary: str | None = None,
        top: int = 15,
        nonblocking: bool = False,
    ) -> None:
        self.pid = pid
        self.emit = emit
        self.out_path = Path(out_path) if out_path is not None else None
        self.rate_hz = rate_hz
        self.live_interval_s = live_interval_s
        self.binary = binary
        self.top = top
        self.nonblocking = nonblocking
        self.ticks = 0  # sampling ticks so far (each samples every thread)
        self.windows: list[tuple[float, float, int]] = []  # (attached, stopped, ticks)
        self._stats = FrameStats()
        # (profile name, t, weight, frames): the timeline for the merged speedscope.
        self._timeline: list[tuple[str, float, float, tuple[Frame, ...]]] = []
        self._frames: dict[tuple[Frame, ...], tuple[Frame, ...]] = {}  # interning
        self._worker: psutil.Process | None = None
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, name="dlcprof-pyspy", daemon=True)

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 15.0) -> None:
        """Stop sampling, write the profile, emit ProfileSaved; returns when done."""
        self._stop.set()
        self.wait(timeout_s)

    def wait(self, timeout_s: float | None = None) -> bool:
        """True once sampling ended (worker exited or stopped) and the profile is saved."""
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)
        return not self._thread.is_alive()

    @property
    def samples(self) -> list[Sample]:
        """Every sample with its interpolated wall-clock time (for attribute_phases)."""
        return [Sample(thread_label(n), f, t) for n, t, _, f in self._timeline]

    # -- thread ---------------------------------------------------------------------

    def _run(self) -> None:
        binary = self.binary or find_pyspy()
        if binary is None or not os.access(binary, os.X_OK):
            self._status(False, NOT_FOUND_MESSAGE)
            return
        try:
            self._worker = psutil.Process(self.pid)
        except psutil.Error:
            self._status(False, f"worker {self.pid} is not running")
            return
        tmp = Path(tempfile.mkdtemp(prefix="dlcprof-pyspy-"))
        try:
            self._sample(binary, tmp)
            self._finish()
        except Exception as e:  # a monitor never takes the UI down
            self._status(False, f"py-spy sampler stopped: {e}")
        finally:
            shutil.rmtree(tmp, ignore_errors=True)

    def _worker_alive(self) -> bool:
        if self._worker is None:
            return False
        try:
            return self._worker.is_running() and self._worker.status() != psutil.STATUS_ZOMBIE
        except psutil.Error:
            return False

    def _sample(self, binary: str, tmp: Path) -> None:
        cur: _Window | None = None
        failures = 0
        attach_s = 0.1  # running estimate of spawn -> attached
        announced = False
        for k in range(10**9):
            nxt = _Window(binary, self.pid, self.rate_hz, tmp / f"w{k}.json", self.nonblocking)
            attached = nxt.wait_attached(30.0, self._stop)
            if cur is not None:  # the next one samples now (or never will): hand over
                self._collect(cur)
                cur = None
            if not attached:
                nxt.finish()
                err = nxt.error()
                if _DENIED_RE.search(err):
                    self._status(False, DENIED_MESSAGE)
                    return
                if self._stop.is_set() or not self._worker_alive():
                    return
                failures += 1
                if failures >= 50:  # ~10 s of retries: not a start-up race
                    self._status(False, f"py-spy cannot sample the worker: {err}")
                    return
                self._stop.wait(0.2)  # the worker's interpreter may still be starting
                continue
            failures = 0
            assert nxt.t_attached is not None
            attach_s = 0.7 * attach_s + 0.3 * (nxt.t_attached - nxt.t_spawn)
            if not announced:
                announced = True
                self._status(
                    True, f"py-spy sampling pid {self.pid} at {self.rate_hz} Hz (idle incl.)"
                )
            cur = nxt
            # Spawn the successor early enough that it is attached when this window is due.
            live = self.live_interval_s > 0
            due = cur.t_attached + max(0.2, self.live_interval_s - attach_s)
            while not self._stop.is_set() and not cur.exited():
                if live and time.time() >= due:
                    break
                self._stop.wait(0.05)
            if self._stop.is_set() or cur.exited():
                self._collect(cur)
                if self._stop.is_set() or not self._worker_alive():
                    return
                cur = None

    def _collect(self, w: _Window) -> None:
        w.finish()
        profiles = w.profiles()
        if not profiles or w.t_attached is None or w.t_end is None:
            return
        ticks = max(len(stacks) for _, stacks, _ in profiles)
        if ticks == 0:
            return
        # Spread the window's ticks evenly over the time it sampled (py-spy falls
        # behind its nominal rate on a loaded machine, so 1/rate would drift).
        span = w.t_end - w.t_attached
        step = span / ticks if span > 0 else 1.0 / self.rate_hz
        main = f'Thread {self.pid} "MainThread"'
        for name, stacks, _ in profiles:
            # py-spy names the main thread "" while the interpreter starts or exits:
            # the thread whose id is the pid is the main thread.
            if name.startswith(f"Thread {self.pid} ") or name == f"Thread {self.pid}":
                name = main
            label = thread_label(name)
            start = w.t_end - len(stacks) * step  # threads born mid-window end with it
            for stack, n in Counter(stacks).items():  # one walk per distinct stack
                self._stats.add(Sample(label, stack, count=n))
            for i, stack in enumerate(stacks):
                frames = self._frames.setdefault(stack, stack)
                self._timeline.append((name, start + i * step, step, frames))
        self.ticks += ticks
        self.windows.append((w.t_attached, w.t_end, ticks))
        if self.live_interval_s > 0:
            self._emit_rows()

    def _emit_rows(self) -> None:
        self.emit(HotFramesSampled(samples=self.ticks, rows=self._stats.rows(self.top)))

    def _finish(self) -> None:
        if self.ticks == 0:
            return
        if self.live_interval_s <= 0:
            self._emit_rows()
        if self.out_path is None:
            return
        try:
            self.out_path.parent.mkdir(parents=True, exist_ok=True)
            tmp = self.out_path.with_name(self.out_path.name + ".tmp")
            tmp.write_text(json.dumps(self._speedscope()))
            tmp.replace(self.out_path)
        except OSError as e:
            self._status(False, f"could not save the py-spy profile: {e}")
            return
        self.emit(ProfileSaved(path=str(self.out_path), format="speedscope", samples=self.ticks))

    def _speedscope(self) -> dict[str, Any]:
        """All windows as one speedscope file: one sampled profile per thread on a
        shared epoch timeline (startValue), uncovered time as empty-stack samples."""
        index: dict[Frame, int] = {}
        per_thread: dict[str, list[tuple[float, float, tuple[Frame, ...]]]] = defaultdict(list)
        for name, t, w, frames in self._timeline:
            per_thread[name].append((t, w, frames))
        t0 = min(t for _, t, _, _ in self._timeline)
        profiles = []
        for name, entries in per_thread.items():
            entries.sort(key=lambda e: e[0])
            samples: list[list[int]] = []
            weights: list[float] = []
            cursor = t0
            for t, w, frames in entries:
                if t - cursor > 1.5 * w:  # nothing sampled this thread here
                    samples.append([])
                    weights.append(round(t - cursor, 6))
                    cursor = t
                samples.append([index.setdefault(f, len(index)) for f in frames])
                weights.append(round(w, 6))
                cursor += w
            profiles.append(
                {
                    "type": "sampled",
                    "name": name,
                    "unit": "seconds",
                    "startValue": t0,
                    "endValue": cursor,
                    "samples": samples,
                    "weights": weights,
                }
            )
        main = next((i for i, p in enumerate(profiles) if "MainThread" in p["name"]), 0)
        return {
            "$schema": "https://www.speedscope.app/file-format-schema.json",
            "name": f"dlcprof: py-spy on pid {self.pid}",
            "exporter": "dlcprof (py-spy record windows)",
            "activeProfileIndex": main,
            "shared": {
                "frames": [{"name": f, "file": file, "line": line} for f, file, line in index]
            },
            "profiles": profiles,
        }

    def _status(self, available: bool, message: str) -> None:
        self.emit(MonitorStatus(monitor="py-spy", available=available, message=message))
