"""The device sampler's GPU paths against a stand-in pynvml shaped like
nvidia-ml-py's (issue 24: a GPU run's timed windows, optional queries that
fail, the devices CUDA_VISIBLE_DEVICES names)."""

from __future__ import annotations

import sys
import time
from typing import Any

from helpers.events import run_started
from helpers.monitors import fake_pynvml, of_type

from dlcprof.events import DeviceSampled, MonitorStatus
from dlcprof.monitors import nvml
from dlcprof.monitors.device import DeviceSampler, _handle_for_cuda_index

UUIDS = {
    "h0": "GPU-8932f937-d72c-4106-c12f-1b635e5d5342",
    "h1": "GPU-5a1c0b7e-1111-2222-3333-444455556666",
    "h2": "GPU-8932f9aa-0000-0000-0000-000000000000",  # shares "GPU-8932f9" with h0
}
MIG = "MIG-2d4e6f80-aaaa-5bbb-8ccc-0123456789ab"


def _with_uuids(fake: Any) -> Any:
    """nvidia-ml-py's UUID calls: GetHandleByUUID takes a whole UUID only (else
    NVMLError_NotFound); GPU 1 holds one MIG instance in slot 1 of 7."""

    class NVMLError_NotFound(fake.NVMLError):  # noqa: N801 (pynvml's name)
        pass

    uuids = {**UUIDS, "h1/mig1": MIG}

    def by_uuid(uuid: str) -> str:
        for h, u in uuids.items():
            if u == uuid:
                return h
        raise NVMLError_NotFound()

    def mig_by_index(h: str, j: int) -> str:
        if h == "h1" and j == 1:
            return "h1/mig1"
        raise NVMLError_NotFound()

    fake.nvmlDeviceGetCount = lambda: 3
    fake.nvmlDeviceGetHandleByUUID = by_uuid
    fake.nvmlDeviceGetUUID = lambda h: uuids[h]
    fake.nvmlDeviceGetMaxMigDeviceCount = lambda h: 7 if h == "h1" else 0
    fake.nvmlDeviceGetMigDeviceHandleByIndex = mig_by_index
    return fake


def test_cuda_visible_devices_by_uuid_prefix_and_mig(monkeypatch) -> None:
    """Issue 24 #9: CUDA takes a unique UUID prefix and MIG UUIDs; NVML's
    GetHandleByUUID only a whole UUID."""
    monkeypatch.setitem(sys.modules, "pynvml", _with_uuids(fake_pynvml(1)))
    assert nvml.init() is None
    try:
        cases = {
            UUIDS["h1"]: "h1",  # whole
            "GPU-5a1c0b7e": "h1",  # a prefix
            "5a1c0b7e-1111": "h1",  # without its GPU- tag
            MIG: "h1/mig1",
            "MIG-2d4e6f80": "h1/mig1",
            f"MIG-{UUIDS['h0']}/1/0": "h0",  # the old MIG-GPU-<uuid>/gi/ci form
            "GPU-8932f9": None,  # two GPUs start so: ambiguous, as CUDA says
            "GPU-ffffffff": None,
        }
        for visible, handle in cases.items():
            monkeypatch.setenv("CUDA_VISIBLE_DEVICES", f"{visible},0")
            assert _handle_for_cuda_index(0) == handle, visible
    finally:
        nvml.shutdown()


def test_unknown_error_from_an_optional_query_keeps_nvml(monkeypatch, sleeper) -> None:
    """Issue 24 #8: NVMLError_Unknown from one optional query is that value's n/a;
    only a lost GPU, an unloaded driver or a missing library turn NVML off."""
    fake: Any = fake_pynvml(sleeper.pid)

    class NVMLError_Unknown(fake.NVMLError):  # noqa: N801 (pynvml's name)
        pass

    def unknown(*args):
        raise NVMLError_Unknown()

    fake.nvmlDeviceGetProcessUtilization = unknown
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    events: list = []
    sampler = DeviceSampler(sleeper.pid, events.append, interval_s=0.05, cuda_index=0)
    sampler.start()
    deadline = time.monotonic() + 10
    while len(of_type(events, DeviceSampled)) < 4 and time.monotonic() < deadline:
        time.sleep(0.02)
    sampler.stop()
    samples = of_type(events, DeviceSampled)
    assert len(samples) >= 4 and all(s.source == "nvml" for s in samples)
    assert samples[-1].values["proc_util_pct"] is None
    assert samples[-1].values["gpu_util_pct"] == 87.0
    assert [s.available for s in of_type(events, MonitorStatus)] == [True]


def test_gpu_sampler_keeps_sampling_in_timed_windows(monkeypatch, sleeper) -> None:
    """Issue 24 #1: the timed windows are when the GPU is busy: NVML samples
    them (py-spy pauses; a CPU-only sampler pauses too, test_monitors.py)."""
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(sleeper.pid))
    events: list = []
    sampler = DeviceSampler(sleeper.pid, events.append, interval_s=0.02, cuda_index=0)
    sampler.start()
    try:
        deadline = time.monotonic() + 10
        while len(of_type(events, DeviceSampled)) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sampler.pause()
        paused = time.time()
        time.sleep(0.5)
        resumed = time.time()
        sampler.resume()
    finally:
        sampler.stop()
    inside = [e for e in of_type(events, DeviceSampled) if paused <= e.t <= resumed]
    assert len(inside) >= 5 and all(e.values["gpu_util_pct"] == 87.0 for e in inside)


def test_the_observer_line_says_nvml_sampled_the_timed_windows() -> None:
    """Issue 24 #1, in words: a GPU run's line does not claim every monitor paused."""
    from dlcprof import events as ev
    from dlcprof.figures import observer as fo
    from dlcprof.session import Session

    def run(nvml_ok: bool):
        return Session.from_events(
            [
                run_started(
                    device="cuda",
                    device_name="NVIDIA H200",
                    threads=15,
                    iters=1000,
                    torch_version="2.11.0+cu130",
                ),
                MonitorStatus("nvml", nvml_ok, "NVIDIA H200", "r", how="4 Hz"),
                MonitorStatus("py-spy", True, "py-spy sampling", "r", how="25 Hz"),
                ev.TimingEnded(run_id="r", what="benchmark", start_t=0.0, quiet=True),
            ]
        ).runs["r"]

    assert fo.line(run(True)).endswith(
        "the monitors were paused while the benchmark was timed, except that " + fo.NVML_KEPT
    )
    assert fo.line(run(False)).endswith("the monitors were paused while the benchmark was timed")
