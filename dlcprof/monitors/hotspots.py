"""The compiler's own hot Python frames, sampled by py-spy from outside the worker
(where py-spy is: ``pyspy.py``; the samples as data: ``samples.py``).

Why it works the way it does (py-spy 0.4):

- ``py-spy record`` writes its output only when it stops (on the target's exit
  or SIGINT), ``py-spy top`` refuses to run without a TTY, and ``py-spy dump``
  pays a spawn and an attach per stack. So live rows come from chained short
  ``record`` windows: the next window is spawned shortly before the current
  one is due, and the current one is stopped (SIGINT: it then writes its
  speedscope file) only once the next has printed "Sampling process". Windows
  overlap by a few ms instead of leaving gaps; each is parsed as it ends,
  added to the running aggregate and emitted as ``HotFramesSampled``. At the
  end the windows are merged into one speedscope file.
- We know when each window attached and stopped (``time.time()``), so every
  sample gets an interpolated wall-clock time: the merged file puts the epoch
  time in each profile's ``startValue`` and fills uncovered time with
  empty-stack samples; ``samples.load_samples`` recovers per-sample times and
  ``samples.attribute_phases`` groups samples by compile phase.
- ``--idle``: waiting on g++ is idle time, and without it most of a cold
  compile goes unsampled. Threads stay apart (one speedscope profile each).
  Waiting is named as such (``waiting``): a compiling thread blocked on the
  C++ compiler shows as one row, not as ``Popen.communicate``.
- ``--nonblocking`` by default: py-spy's default mode stops the worker for
  every sample, which slows whatever it samples (and more on a loaded
  machine, where py-spy waits for a core while the worker is stopped).
  Non-blocking reads the stacks while the worker runs; what remains is
  py-spy's own CPU, reported as ``MonitorCostMeasured``. The rate and window
  length were chosen with benchmarks/pyspy_overhead.py (benchmarks/RESULTS.md).
- ``pause``/``resume``: the worker's timed repetitions run with no py-spy
  process attached (dlcprof/worker/quiet.py).
"""

from __future__ import annotations

import contextlib
import json
import os
import selectors
import shutil
import signal
import subprocess
import threading
import time
from collections import Counter, defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import psutil

from dlcprof import scratch
from dlcprof.events import (
    Event,
    HotFramesSampled,
    MonitorCostMeasured,
    MonitorStatus,
    ProfileSaved,
)
from dlcprof.monitors.pyspy import DENIED_MESSAGE, NOT_FOUND_MESSAGE, denied, error_line, find_pyspy
from dlcprof.monitors.samples import Frame, FrameStats, Sample, parse_speedscope, thread_label
from dlcprof.monitors.watch import WatchClock

Emit = Callable[[Event], None]
_ATTACHED = b"Sampling process"


class _Window:
    """One ``py-spy record`` process sampling the worker until SIGINT."""

    def __init__(self, binary: str, pid: int, rate_hz: int, path: Path, nonblocking: bool):
        self.path = path
        self.t_spawn = time.time()
        self.t_attached: float | None = None
        self.t_end: float | None = None
        self.cpu_s: float | None = None  # py-spy's own CPU, once it exited
        self.counted = False  # added to the sampler's cpu_s
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
                    if not chunk and self.poll() is not None:
                        return False
                elif self.poll() is not None:
                    return False
        return False

    def poll(self) -> int | None:
        """``Popen.poll``, reading the process's CPU time once it exited and
        before it is reaped (a zombie keeps its counters)."""
        if self.proc.returncode is None and hasattr(os, "waitid"):
            try:
                done = os.waitid(os.P_PID, self.proc.pid, os.WEXITED | os.WNOHANG | os.WNOWAIT)
            except ChildProcessError:
                done = None
            if done is None and self.proc.returncode is None:
                return None
            with contextlib.suppress(psutil.Error):
                t = psutil.Process(self.proc.pid).cpu_times()
                self.cpu_s = t.user + t.system
        return self.proc.poll()

    def exited(self) -> bool:
        if self.poll() is not None:
            if self.t_end is None:
                self.t_end = time.time()
            return True
        return False

    def finish(self, timeout_s: float = 10.0) -> None:
        """Stop sampling (SIGINT makes py-spy write its file) and reap it."""
        if self.poll() is None:
            self.t_end = time.time()
            with contextlib.suppress(ProcessLookupError):
                self.proc.send_signal(signal.SIGINT)
            deadline = time.monotonic() + timeout_s
            while self.poll() is None and time.monotonic() < deadline:
                time.sleep(0.005)
            if self.proc.returncode is None:
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
        return error_line(err + self._out.decode(errors="replace"))

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
        rate_hz: int = 25,
        live_interval_s: float = 1.0,
        *,
        binary: str | None = None,
        top: int = 15,
        nonblocking: bool = True,
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
        self.cpu_s = 0.0  # what the py-spy processes burned
        self.watched = WatchClock()
        self._empty: str | None = None  # why the last window gave no samples
        self._failed = False  # an unavailable status was emitted
        self._stats = FrameStats()
        # (profile name, t, weight, frames): the timeline for the merged speedscope.
        self._timeline: list[tuple[str, float, float, tuple[Frame, ...]]] = []
        self._frames: dict[tuple[Frame, ...], tuple[Frame, ...]] = {}  # interning
        self._worker: psutil.Process | None = None
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._interrupt = threading.Event()  # stop or pause: end the window now
        self._detached = threading.Event()  # paused: no py-spy process is attached
        self._thread = threading.Thread(target=self._run, name="dlcprof-pyspy", daemon=True)

    @property
    def how(self) -> str:
        return f"{self.rate_hz} Hz, {'non-blocking' if self.nonblocking else 'stops the worker'}"

    def start(self) -> None:
        self._thread.start()

    def stop(self, timeout_s: float = 15.0) -> None:
        """Stop sampling, write the profile, emit ProfileSaved; returns when done."""
        self._stop.set()
        self._interrupt.set()
        self.wait(timeout_s)

    def pause(self, timeout_s: float = 15.0) -> bool:
        """Detach from the worker until ``resume``: True once no py-spy process
        samples it (the current window is stopped and collected)."""
        self._paused.set()
        self._interrupt.set()
        if not self._thread.is_alive():
            return True
        return self._detached.wait(timeout_s) or not self._thread.is_alive()

    def resume(self) -> None:
        self._detached.clear()
        self._paused.clear()
        if not self._stop.is_set():
            self._interrupt.clear()

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
            self._status(False, f"process {self.pid} is not running")
            return
        tmp = scratch.new_folder("pyspy-windows")
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
            if self._paused.is_set():
                if cur is not None:
                    self._collect(cur)
                    cur = None
                self.watched.watching(False)
                self._detached.set()
                while self._paused.is_set() and not self._stop.wait(0.02):
                    # Still detached: a resume and a pause in quick succession (one
                    # timed window right after another) find it so at once.
                    self._detached.set()
                if self._stop.is_set() or not self._worker_alive():
                    return
            self.watched.watching(True)
            nxt = _Window(binary, self.pid, self.rate_hz, tmp / f"w{k}.json", self.nonblocking)
            attached = nxt.wait_attached(30.0, self._interrupt)
            if cur is not None:  # the next one samples now (or never will): hand over
                self._collect(cur)
                cur = None
            if not attached:
                self._finish_window(nxt)
                if self._paused.is_set() and not self._stop.is_set():
                    continue
                err = nxt.error()
                if denied(err):
                    self._status(False, DENIED_MESSAGE)
                    return
                if self._stop.is_set() or not self._worker_alive():
                    self._empty = f"py-spy did not attach before {self._ended()}"
                    return
                failures += 1
                if failures >= 50:  # ~10 s of retries: not a start-up race
                    self._status(False, f"py-spy cannot sample process {self.pid}: {err}")
                    return
                self._interrupt.wait(0.2)  # the worker's interpreter may still be starting
                continue
            failures = 0
            assert nxt.t_attached is not None
            attach_s = 0.7 * attach_s + 0.3 * (nxt.t_attached - nxt.t_spawn)
            if not announced:
                announced = True
                self._status(
                    True,
                    f"py-spy sampling pid {self.pid} at {self.rate_hz} Hz (idle incl.)",
                    self.how,
                )
            cur = nxt
            # Spawn the successor early enough that it is attached when this window is due.
            live = self.live_interval_s > 0
            due = nxt.t_attached + max(0.2, self.live_interval_s - attach_s)
            while not self._interrupt.is_set() and not cur.exited():
                if live and time.time() >= due:
                    break
                self._interrupt.wait(0.05)
            if self._stop.is_set() or cur.exited():
                self._collect(cur)
                if self._stop.is_set() or not self._worker_alive():
                    return
                cur = None

    def _finish_window(self, w: _Window) -> None:
        w.finish()
        if not w.counted:
            w.counted = True
            self.cpu_s += w.cpu_s or 0.0

    def _emit_cost(self) -> None:
        self.emit(
            MonitorCostMeasured(monitor="py-spy", cpu_s=self.cpu_s, active_s=self.watched.seconds)
        )

    def _collect(self, w: _Window) -> None:
        self._finish_window(w)
        profiles = w.profiles()
        if not profiles or w.t_attached is None or w.t_end is None:
            self._empty = f"py-spy attached but wrote no profile: {w.error()}"
            return
        ticks = max(len(stacks) for _, stacks, _ in profiles)
        if ticks == 0:
            self._empty = "py-spy attached but took no sample"
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
            self._emit_cost()

    def _emit_rows(self) -> None:
        self.emit(
            HotFramesSampled(
                samples=self.ticks,
                rows=self._stats.rows(self.top),
                threads=dict(self._stats.threads),
            )
        )

    def _ended(self) -> str:
        return "sampling ended" if self._stop.is_set() else f"process {self.pid} exited"

    def _finish(self) -> None:
        self.watched.watching(False)
        if self.ticks == 0:
            if not self._failed:  # never silent: no hot frames, no profile, and why
                self._status(False, self._empty or f"no sample taken before {self._ended()}")
            return
        self._emit_cost()
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
        profiles: list[dict[str, Any]] = []
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

    def _status(self, available: bool, message: str, how: str = "") -> None:
        self._failed = not available
        self.emit(MonitorStatus(monitor="py-spy", available=available, message=message, how=how))
