"""Device utilization of the compiling worker: NVML on a GPU machine, psutil always.

A daemon thread samples a few times a second and emits ``DeviceSampled``
events stamped with ``time.time()``, the clock of the compile phases, so
``figures.device.summarize`` can split utilization into during-compile and after.

CPU values (every mode): the worker's CPU and RSS, the system CPU, and the
backend compilers the worker runs (g++/cc1plus for the CPU backend, ptxas
for Triton): how many are in flight and how much CPU they burn. On the CPU
backend these are the live sign that Inductor is compiling kernels.
"""

from __future__ import annotations

import itertools
import os
import re
import threading
import time
from collections.abc import Callable
from typing import Any

import psutil

from dlcprof import proc_tree
from dlcprof.events import DeviceSampled, Event, MonitorCostMeasured, MonitorStatus
from dlcprof.monitors import nvml
from dlcprof.monitors.watch import WatchClock

Emit = Callable[[Event], None]

CPU_KEYS = (
    "worker_cpu_pct",  # % of one core (can exceed 100 with OpenMP threads)
    "worker_rss_mb",
    "cxx_compilers",  # backend compiles in flight (descendants of the worker)
    "children_cpu_pct",  # CPU of the worker's descendants (compilers, compile workers)
    "system_cpu_pct",  # all cores, 0..100
)
GPU_KEYS = (
    "gpu_util_pct",  # share of the last sample period in which a kernel ran
    "mem_util_pct",  # share of the period in which device memory was read/written
    "mem_used_mb",
    "mem_total_mb",
    "proc_mem_mb",  # the worker's own GPU memory (running compute processes)
    "proc_util_pct",  # the worker's own SM utilization (process utilization samples)
    "power_w",
    "temp_c",
    "sm_clock_mhz",
)

NVML_NOTE = (
    "NVML utilization is coarse: the share of the last sample period (1/6 s to 1 s, "
    "by driver) in which any kernel ran, not a per-kernel figure"
)

_MIB = 1024 * 1024
COST_EVERY = 20  # samples between MonitorCostMeasured events
# Compiler drivers and their stages, also versioned/cross names ("x86_64-linux-gnu-g++-12").
_COMPILER_RE = re.compile(
    r"(^|-)(g\+\+|c\+\+|gcc|cc|clang|clang\+\+|cc1|cc1plus|ptxas|nvcc)(-[\d.]+)?$"
)


def is_compiler(name: str) -> bool:
    return bool(_COMPILER_RE.search(os.path.basename(name)))


class _WorkerGone(Exception):
    pass


class _CpuProbe:
    """The worker and its descendants via psutil."""

    def __init__(self, pid: int) -> None:
        self.proc = psutil.Process(pid)  # NoSuchProcess when it is already gone
        self.proc.cpu_percent(None)  # the first call only primes the counter
        psutil.cpu_percent(None)
        self._prev = (time.monotonic(), self._tree_cpu_s(self._children()))

    def _children(self) -> list[psutil.Process]:
        if not proc_tree.SUPPORTED:
            try:
                return self.proc.children(recursive=True)  # reads every process on the host
            except psutil.Error:
                return []
        out = []
        for pid in proc_tree.descendants(self.proc.pid):
            try:
                out.append(psutil.Process(pid))
            except psutil.Error:
                continue  # ended meanwhile
        return out

    def _tree_cpu_s(self, children: list[psutil.Process]) -> float:
        """CPU seconds of every descendant, finished and running.

        A reaped child's time moves into its parent's children_* counters, so
        the sum of the worker's children_* and each live descendant's own plus
        children_* is continuous: short g++ runs between two samples still count.
        """
        try:
            t = self.proc.cpu_times()
        except psutil.Error:
            return 0.0
        total = t.children_user + t.children_system
        for child in children:
            try:
                c = child.cpu_times()
            except psutil.Error:
                continue
            total += c.user + c.system + c.children_user + c.children_system
        return total

    def sample(self) -> tuple[dict[str, float | None], set[int]]:
        """Values and the pids of the worker's process tree; _WorkerGone when it exited."""
        try:
            if not self.proc.is_running() or self.proc.status() == psutil.STATUS_ZOMBIE:
                raise _WorkerGone
            with self.proc.oneshot():
                cpu = self.proc.cpu_percent(None)
                rss = self.proc.memory_info().rss / _MIB
        except psutil.Error as e:
            raise _WorkerGone from e
        children = self._children()
        names: dict[int, bool] = {}
        parents: dict[int, int] = {}
        for child in children:
            try:
                names[child.pid] = _compiler_process(child)
                parents[child.pid] = child.ppid()
            except psutil.Error:
                continue
        # A compile is a compiler process whose parent is not one (g++ -> cc1plus -> as
        # is one compile, not three).
        compiles = sum(
            1 for pid, comp in names.items() if comp and not names.get(parents.get(pid, -1), False)
        )
        now = time.monotonic()
        tree = self._tree_cpu_s(children)
        prev_t, prev_tree = self._prev
        self._prev = (now, tree)
        dt = now - prev_t
        children_pct = max(0.0, (tree - prev_tree) / dt * 100.0) if dt > 0 else None
        values: dict[str, float | None] = {
            "worker_cpu_pct": float(cpu),
            "worker_rss_mb": rss,
            "cxx_compilers": float(compiles),
            "children_cpu_pct": children_pct,
            "system_cpu_pct": float(psutil.cpu_percent(None)),
        }
        return values, {self.proc.pid, *names}


def _compiler_process(proc: psutil.Process) -> bool:
    name = proc.name()
    if is_compiler(name):
        return True
    if len(name) >= 15:  # the kernel truncates comm to 15 chars: check argv[0]
        try:
            argv = proc.cmdline()
        except psutil.Error:
            return False
        return bool(argv) and is_compiler(argv[0])
    return False


class _GpuProbe:
    """One GPU through NVML; every call via nvml.query."""

    def __init__(self, handle: Any) -> None:
        self.handle = handle
        self.name = nvml.decode(nvml.query("nvmlDeviceGetName", handle)) or "NVIDIA GPU"
        self._last_ts = 0  # process utilization samples already seen (µs)

    @classmethod
    def open(cls, cuda_index: int) -> _GpuProbe | None:
        handle = _handle_for_cuda_index(cuda_index)
        return None if handle is None else cls(handle)

    def sample(self, pids: set[int]) -> dict[str, float | None]:
        lib = nvml.lib()
        h = self.handle
        rates = nvml.query("nvmlDeviceGetUtilizationRates", h)
        mem = nvml.query("nvmlDeviceGetMemoryInfo", h)
        power_mw = nvml.query("nvmlDeviceGetPowerUsage", h)
        temp = nvml.query("nvmlDeviceGetTemperature", h, getattr(lib, "NVML_TEMPERATURE_GPU", 0))
        clock = nvml.query("nvmlDeviceGetClockInfo", h, getattr(lib, "NVML_CLOCK_SM", 1))
        return {
            "gpu_util_pct": _num(_field(rates, "gpu")),
            "mem_util_pct": _num(_field(rates, "memory")),
            "mem_used_mb": _scaled(_field(mem, "used"), _MIB),
            "mem_total_mb": _scaled(_field(mem, "total"), _MIB),
            "proc_mem_mb": self._proc_mem_mb(pids),
            "proc_util_pct": self._proc_util_pct(pids),
            "power_w": _scaled(power_mw, 1000.0),
            "temp_c": _num(temp),
            "sm_clock_mhz": _num(clock),
        }

    def _proc_mem_mb(self, pids: set[int]) -> float | None:
        # NVML reports host pids: inside a pid namespace (some containers) the
        # worker is not found and this stays None; the device total still works.
        procs = nvml.query("nvmlDeviceGetComputeRunningProcesses", self.handle)
        used = [_field(p, "usedGpuMemory") for p in procs or () if _field(p, "pid") in pids]
        used = [u for u in used if isinstance(u, int | float) and 0 <= u < 2**63]
        return sum(used) / _MIB if used else None

    def _proc_util_pct(self, pids: set[int]) -> float | None:
        samples = nvml.query("nvmlDeviceGetProcessUtilization", self.handle, self._last_ts)
        if not samples:
            return None  # unsupported, or no process ran a kernel in the window
        latest: dict[int, tuple[int, float]] = {}
        for s in samples:
            pid, ts, sm = _field(s, "pid"), _field(s, "timeStamp"), _field(s, "smUtil")
            if not isinstance(ts, int) or sm is None:
                continue
            self._last_ts = max(self._last_ts, ts)
            if pid in pids and ts >= latest.get(pid, (-1, 0.0))[0]:
                latest[pid] = (ts, float(sm))
        return sum(sm for _, sm in latest.values()) if latest else None


def _handle_for_cuda_index(cuda_index: int) -> Any | None:
    """CUDA index -> NVML handle, honouring CUDA_VISIBLE_DEVICES (indices or UUIDs).

    CUDA orders devices fastest-first unless CUDA_DEVICE_ORDER=PCI_BUS_ID while
    NVML uses PCI order; on mixed-GPU hosts set CUDA_DEVICE_ORDER=PCI_BUS_ID.
    """
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    target: str | int = cuda_index
    if visible is not None:
        entries = [e.strip() for e in visible.split(",") if e.strip()]
        if cuda_index >= len(entries):
            return None
        target = entries[cuda_index]
    if isinstance(target, str) and not target.isdigit():
        return _handle_for_uuid(target)
    return nvml.query("nvmlDeviceGetHandleByIndex", int(target))


def _handle_for_uuid(wanted: str) -> Any | None:
    """A GPU or MIG UUID as CUDA takes it: whole, or any unique prefix of it
    (``GPU-8932f937``), with or without its ``GPU-``/``MIG-`` tag; a MIG
    instance's handle is its own (memory reads, utilization is n/a there)."""
    handle = nvml.query("nvmlDeviceGetHandleByUUID", wanted)
    if handle is not None:
        return handle
    if wanted.startswith("MIG-GPU-"):  # the old MIG-GPU-<uuid>/<gi>/<ci> form: its GPU
        wanted = wanted[len("MIG-") :].split("/", 1)[0]
    found = []
    for i in range(nvml.query("nvmlDeviceGetCount") or 0):
        gpu = nvml.query("nvmlDeviceGetHandleByIndex", i)
        if gpu is None:
            continue
        for h in [gpu, *_mig_handles(gpu)]:
            uuid = nvml.decode(nvml.query("nvmlDeviceGetUUID", h)) or ""
            if uuid and (uuid.startswith(wanted) or uuid.split("-", 1)[-1].startswith(wanted)):
                found.append(h)
    return found[0] if len(found) == 1 else None  # CUDA refuses an ambiguous prefix too


def _mig_handles(gpu: Any) -> list[Any]:
    slots = nvml.query("nvmlDeviceGetMaxMigDeviceCount", gpu) or 0
    handles = (nvml.query("nvmlDeviceGetMigDeviceHandleByIndex", gpu, j) for j in range(slots))
    return [h for h in handles if h is not None]


def _field(obj: Any, name: str) -> Any:
    return None if obj is None else getattr(obj, name, None)


def _num(v: Any) -> float | None:
    return float(v) if isinstance(v, int | float) else None


def _scaled(v: Any, div: float) -> float | None:
    return float(v) / div if isinstance(v, int | float) else None


class DeviceSampler:
    """Samples the device (or CPU) for worker ``pid`` on a daemon thread.

    Emits one ``MonitorStatus`` first, then a ``DeviceSampled`` every
    ``interval_s`` until ``stop()`` or until the worker exits (silently).
    ``cuda_index=None`` means a CPU run: no GPU is sampled.
    """

    def __init__(
        self,
        pid: int,
        emit: Emit,
        interval_s: float = 0.25,
        cuda_index: int | None = 0,
    ) -> None:
        self.pid = pid
        self.emit = emit
        self.interval_s = interval_s
        self.cuda_index = cuda_index
        self._stop = threading.Event()
        self._paused = threading.Event()
        self._nvml = threading.Event()  # set while NVML samples the GPU
        self._sampling = threading.Lock()  # held while a sample is taken
        self._thread = threading.Thread(target=self._run, name="dlcprof-device", daemon=True)

    @property
    def how(self) -> str:
        return f"{1 / self.interval_s:g} Hz"

    def start(self) -> None:
        self._thread.start()

    def pause(self, timeout_s: float = 5.0) -> bool:
        """No sample from now until ``resume``; True once none is in progress.

        A GPU sampler does not pause: the timed windows are when the GPU is
        busy, and NVML asked from this process neither stops the worker nor
        takes a core it uses (py-spy, which does, pauses)."""
        if self._nvml.is_set():
            return True
        self._paused.set()
        if self._sampling.acquire(timeout=timeout_s):
            self._sampling.release()
            return True
        return False

    def resume(self) -> None:
        self._paused.clear()

    def stop(self, timeout_s: float = 2.0) -> None:
        self._stop.set()
        if self._thread.is_alive() and self._thread is not threading.current_thread():
            self._thread.join(timeout_s)

    @property
    def running(self) -> bool:
        return self._thread.is_alive()

    def _run(self) -> None:
        gpu: _GpuProbe | None = None
        nvml_open = False
        try:
            if self.cuda_index is None:
                self.emit(
                    MonitorStatus(
                        monitor="cpu",
                        available=True,
                        message="CPU run: sampling the worker's CPU and its compilers",
                        how=self.how,
                    )
                )
            else:
                reason = nvml.init()
                nvml_open = reason is None
                if nvml_open:
                    try:
                        gpu = _GpuProbe.open(self.cuda_index)
                        reason = f"NVML has no device for CUDA index {self.cuda_index}"
                    except Exception as e:  # noqa: BLE001 - the driver failed (nvml.LOST)
                        reason = f"NVML failed ({type(e).__name__}: {e})"
                if gpu is None:
                    self.emit(
                        MonitorStatus(
                            monitor="nvml",
                            available=False,
                            message=f"{reason}: showing CPU",
                            how=self.how,  # it samples the CPU all the same
                        )
                    )
                else:
                    self._nvml.set()
                    self.emit(
                        MonitorStatus(
                            monitor="nvml",
                            available=True,
                            message=f"{gpu.name}: {NVML_NOTE}",
                            how=self.how,
                        )
                    )
            self._loop(gpu)
        except Exception as e:  # never let a monitor take the UI down
            message = f"device sampler stopped: {e}"
            self.emit(MonitorStatus(monitor="cpu", available=False, message=message))
        finally:
            self._nvml.clear()
            if nvml_open:
                nvml.shutdown()

    def _loop(self, gpu: _GpuProbe | None) -> None:
        try:
            cpu = _CpuProbe(self.pid)
        except psutil.Error:
            self.emit(
                MonitorStatus(
                    monitor="cpu", available=False, message=f"process {self.pid} is not running"
                )
            )
            return
        source = "nvml" if gpu is not None else "cpu"
        watched, cpu0 = WatchClock(), time.thread_time()
        next_t = time.monotonic() + self.interval_s
        try:
            for n in itertools.count(1):
                if self._stop.wait(max(0.0, next_t - time.monotonic())):
                    return
                next_t += self.interval_s
                if next_t < time.monotonic():  # fell behind (suspended, overloaded): no burst
                    next_t = time.monotonic() + self.interval_s
                with self._sampling:
                    watched.watching(not self._paused.is_set())
                    if self._paused.is_set():
                        continue
                    try:
                        values, pids = cpu.sample()
                    except _WorkerGone:
                        return  # the worker exited: end quietly
                    if gpu is not None:
                        try:
                            values.update(gpu.sample(pids))
                        except Exception as e:  # the driver went away mid-run: keep the CPU view
                            gpu, source = None, "cpu"
                            self._nvml.clear()
                            self.emit(
                                MonitorStatus(
                                    monitor="nvml",
                                    available=False,
                                    message=f"NVML failed mid-run ({type(e).__name__}: {e}): "
                                    "showing CPU",
                                )
                            )
                    t = time.time()
                self.emit(DeviceSampled(source=source, values=values, t=t))
                if n % COST_EVERY == 0:
                    self._emit_cost(time.thread_time() - cpu0, watched)
        finally:
            watched.watching(False)
            self._emit_cost(time.thread_time() - cpu0, watched)

    def _emit_cost(self, cpu_s: float, watched: WatchClock) -> None:
        self.emit(MonitorCostMeasured(monitor="device", cpu_s=cpu_s, active_s=watched.seconds))
