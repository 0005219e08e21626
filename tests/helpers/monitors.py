"""A stand-in for NVML: ``pynvml`` shaped like nvidia-ml-py's, some calls
answering, some raising NVMLError, one absent (the device sampler's tests)."""

from __future__ import annotations

import types
from typing import Any

MIB = 1024 * 1024


def of_type(events: list, kind: type) -> list:
    """The events of one type, in order."""
    return [e for e in events if isinstance(e, kind)]


def fake_pynvml(worker_pid: int, *, init_error: type[Exception] | None = None) -> Any:
    """A pynvml look-alike: some calls answer, some raise NVMLError, one is absent
    (a module, Any to a checker: its attributes are set here)."""
    m: Any = types.ModuleType("pynvml")

    class NVMLError(Exception):
        pass

    class NVMLError_NotSupported(NVMLError):  # noqa: N801 (pynvml's names)
        pass

    class NVMLError_LibraryNotFound(NVMLError):  # noqa: N801
        pass

    m.NVMLError = NVMLError
    m.NVMLError_NotSupported = NVMLError_NotSupported
    m.NVMLError_LibraryNotFound = NVMLError_LibraryNotFound
    m.NVML_TEMPERATURE_GPU = 0
    m.NVML_CLOCK_SM = 1
    m.calls = []

    def init() -> None:
        if init_error is not None:
            raise init_error()

    def not_supported(*args):
        raise NVMLError_NotSupported()

    def handle_by_index(i: int) -> str:
        m.calls.append(("handle", i))
        return f"h{i}"

    ns = types.SimpleNamespace
    m.nvmlInit = init
    m.nvmlShutdown = lambda: None
    m.nvmlDeviceGetCount = lambda: 4
    m.nvmlDeviceGetHandleByIndex = handle_by_index
    m.nvmlDeviceGetName = lambda h: b"Fake H200"  # old bindings return bytes
    m.nvmlDeviceGetUtilizationRates = lambda h: ns(gpu=87, memory=40)
    m.nvmlDeviceGetMemoryInfo = lambda h: ns(used=3000 * MIB, total=80000 * MIB, free=0)
    m.nvmlDeviceGetComputeRunningProcesses = lambda h: [
        ns(pid=worker_pid, usedGpuMemory=1500 * MIB),
        ns(pid=1, usedGpuMemory=999 * MIB),  # another process: not the worker's
    ]
    m.nvmlDeviceGetProcessUtilization = lambda h, ts: [
        ns(pid=worker_pid, timeStamp=ts + 10, smUtil=20),
        ns(pid=worker_pid, timeStamp=ts + 20, smUtil=70),  # the latest one counts
        ns(pid=1, timeStamp=ts + 20, smUtil=99),
    ]
    m.nvmlDeviceGetPowerUsage = not_supported
    m.nvmlDeviceGetTemperature = lambda h, sensor: 55
    # nvmlDeviceGetClockInfo is absent: bindings too old for it.
    m.nvmlSystemGetDriverVersion = lambda: "999.1"
    return m
