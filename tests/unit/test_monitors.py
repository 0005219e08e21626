"""Device sampler: the real no-NVML path, NVML logic against a stand-in pynvml, summarize."""

from __future__ import annotations

import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest
from helpers.monitors import fake_pynvml, of_type
from helpers.paths import REPO

from dlcprof import events as ev
from dlcprof import proc_tree
from dlcprof.events import DeviceSampled, MonitorStatus
from dlcprof.figures.device import summarize
from dlcprof.monitors import nvml
from dlcprof.monitors.device import (
    CPU_KEYS,
    GPU_KEYS,
    DeviceSampler,
    is_compiler,
)

# Burns CPU in Python while a real g++ compiles a small C++ file (~0.5-2 s here).
BURN_AND_COMPILE = textwrap.dedent(
    """
    import os, subprocess, sys, time
    d = sys.argv[1]
    src = os.path.join(d, "x.cpp")
    with open(src, "w") as f:
        f.write("#include <algorithm>\\n#include <string>\\n#include <vector>\\n"
                "int main(){std::vector<std::string> v{\\"b\\", \\"a\\"};"
                " std::sort(v.begin(), v.end()); return v[0] == \\"a\\" ? 0 : 1;}\\n")
    gxx = subprocess.Popen(["g++", "-O2", "-o", os.path.join(d, "x"), src])
    t = time.time()
    while time.time() - t < 1.0 or gxx.poll() is None:
        sum(range(20000))
    sys.exit(gxx.wait())
    """
)


@pytest.mark.parametrize("lists", [True, False], ids=["kernel lists", "scan"])
def test_cpu_path_against_a_real_compiling_child(tmp_path: Path, lists, monkeypatch) -> None:
    """The compilers are found among the child's descendants both ways: from the
    kernel's lists of children (dlcprof/proc_tree.py), and by psutil's scan of
    every process where a kernel keeps none."""
    if lists and not proc_tree.SUPPORTED:
        pytest.skip("this kernel keeps no lists of children")
    monkeypatch.setattr(proc_tree, "SUPPORTED", lists)
    script = tmp_path / "burn.py"
    script.write_text(BURN_AND_COMPILE)
    events: list = []
    t0 = time.time()
    child = subprocess.Popen([sys.executable, str(script), str(tmp_path)])
    sampler = DeviceSampler(child.pid, events.append, interval_s=0.1)
    sampler.start()
    assert child.wait(60) == 0
    t1 = time.time()
    # The worker exiting ends sampling by itself: no stop() needed, no error event.
    deadline = time.monotonic() + 5
    while sampler.running and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not sampler.running
    sampler.stop()

    statuses = of_type(events, MonitorStatus)
    assert len(statuses) == 1, statuses
    status = statuses[0]
    samples = of_type(events, DeviceSampled)
    assert len(samples) >= 5
    if nvml.init() is None:  # a GPU machine: the NVML path runs instead
        nvml.shutdown()
        assert status.monitor == "nvml" and status.available
        assert all(s.source == "nvml" for s in samples)
    else:
        assert status == MonitorStatus(
            monitor="nvml",
            available=False,
            message="no NVIDIA GPU (NVML not found): showing CPU",
            t=status.t,
            how="10 Hz",
        )
        assert all(s.source == "cpu" for s in samples)
    for s in samples:
        assert t0 <= s.t <= t1 + 1  # time.time(): the compile phases' clock
        for key in CPU_KEYS:
            assert s.values[key] is not None, key
    assert max(s.values["cxx_compilers"] for s in samples) >= 1
    assert max(s.values["children_cpu_pct"] for s in samples) > 10
    assert max(s.values["worker_cpu_pct"] for s in samples) > 10
    assert max(s.values["worker_rss_mb"] for s in samples) > 1
    # What the sampler itself cost: its thread's CPU over the time it watched, last.
    cost = events[-1]
    assert isinstance(cost, ev.MonitorCostMeasured) and cost.monitor == "device"
    assert 0 < cost.cpu_s < cost.active_s and cost.active_s > 0.5


def test_worker_already_gone_is_one_status_not_an_exception() -> None:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    events: list = []
    sampler = DeviceSampler(child.pid, events.append, interval_s=0.05, cuda_index=None)
    sampler.start()
    sampler.stop()
    assert [type(e) for e in events] == [MonitorStatus, MonitorStatus]
    assert events[0].monitor == "cpu" and events[0].available
    assert not events[1].available and "not running" in events[1].message


def test_is_compiler_names() -> None:
    for name in ["g++", "c++", "cc1plus", "x86_64-linux-gnu-g++-12", "gcc", "ptxas", "clang++"]:
        assert is_compiler(name), name
    for name in ["python", "as", "ld", "bash", "g++x"]:
        assert not is_compiler(name), name


# --- NVML path with a stand-in pynvml --------------------------------------------------


def test_paused_sampler_takes_no_sample_until_resumed(sleeper) -> None:
    events: list = []
    sampler = DeviceSampler(sleeper.pid, events.append, interval_s=0.02, cuda_index=None)
    started = time.time()
    sampler.start()
    try:
        deadline = time.monotonic() + 10
        while len(of_type(events, DeviceSampled)) < 3 and time.monotonic() < deadline:
            time.sleep(0.02)
        assert sampler.pause()
        paused = time.time()  # no sample is in progress once pause() returned
        time.sleep(0.5)  # ~25 sampling periods
        resumed = time.time()
        sampler.resume()
        while time.time() < resumed + 0.5:
            time.sleep(0.02)
    finally:
        sampler.stop()
    stopped = time.time()
    times = [e.t for e in of_type(events, DeviceSampled)]
    assert not [t for t in times if paused <= t <= resumed]
    assert len([t for t in times if t < paused]) >= 3
    assert len([t for t in times if t > resumed]) >= 3
    cost = of_type(events, ev.MonitorCostMeasured)[-1]
    assert cost.active_s < stopped - started - 0.4  # the pause is not watched time


def test_query_turns_errors_and_missing_fields_into_none(monkeypatch) -> None:
    fake = fake_pynvml(123)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    assert nvml.init() is None
    try:
        assert nvml.query("nvmlDeviceGetCount") == 4
        assert nvml.query("nvmlDeviceGetPowerUsage", "h0") is None  # NVMLError
        assert nvml.query("nvmlDeviceGetClockInfo", "h0", 1) is None  # missing function
        rates = fake.nvmlDeviceGetUtilizationRates
        assert nvml.query(lambda: rates("h0").gpu) == 87
        assert nvml.query(lambda: rates("h0").no_such_field) is None  # older struct
        with pytest.raises(ZeroDivisionError):  # a bug is still a bug
            nvml.query(lambda: 1 / 0)
    finally:
        nvml.shutdown()
    assert nvml.query("nvmlDeviceGetCount") is None  # not initialized: n/a


def test_init_reasons(monkeypatch) -> None:
    fake = fake_pynvml(1)
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(1, init_error=fake.NVMLError))
    assert nvml.init().startswith("NVML unavailable")
    lnf = fake_pynvml(1)
    monkeypatch.setitem(
        sys.modules, "pynvml", fake_pynvml(1, init_error=lnf.NVMLError_LibraryNotFound)
    )
    assert nvml.init() == "no NVIDIA GPU (NVML not found)"
    monkeypatch.setitem(sys.modules, "pynvml", None)  # import fails
    assert "nvidia-ml-py" in nvml.init()


def test_nvml_sampler_values_with_fake_driver(monkeypatch, sleeper) -> None:
    fake = fake_pynvml(sleeper.pid)
    monkeypatch.setitem(sys.modules, "pynvml", fake)
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "2,3")
    events: list = []
    sampler = DeviceSampler(sleeper.pid, events.append, interval_s=0.05, cuda_index=1)
    sampler.start()
    deadline = time.monotonic() + 10
    while len(of_type(events, DeviceSampled)) < 3 and time.monotonic() < deadline:
        time.sleep(0.02)
    sampler.stop()

    status = events[0]
    assert isinstance(status, MonitorStatus) and status.monitor == "nvml" and status.available
    assert "Fake H200" in status.message and "not a per-kernel figure" in status.message
    assert ("handle", 3) in fake.calls  # CUDA index 1 under CUDA_VISIBLE_DEVICES=2,3
    samples = of_type(events, DeviceSampled)
    assert len(samples) >= 3 and all(s.source == "nvml" for s in samples)
    v = samples[-1].values
    assert set(GPU_KEYS) | set(CPU_KEYS) <= set(v)
    assert v["gpu_util_pct"] == 87.0
    assert v["mem_util_pct"] == 40.0
    assert v["mem_used_mb"] == 3000.0 and v["mem_total_mb"] == 80000.0
    assert v["proc_mem_mb"] == 1500.0  # only the worker's process
    assert v["proc_util_pct"] == 70.0
    assert v["power_w"] is None  # NVMLError_NotSupported: n/a, no crash
    assert v["sm_clock_mhz"] is None  # missing in the bindings: n/a
    assert v["temp_c"] == 55.0
    assert v["worker_cpu_pct"] is not None and v["worker_rss_mb"] > 1  # CPU too
    assert not [e for e in events[1:] if isinstance(e, MonitorStatus)]  # no error spam
    assert nvml.lib() is None  # shut down again


def test_nvml_without_the_cuda_device_falls_back_to_cpu(monkeypatch, sleeper) -> None:
    monkeypatch.setitem(sys.modules, "pynvml", fake_pynvml(sleeper.pid))
    monkeypatch.setenv("CUDA_VISIBLE_DEVICES", "0")
    events: list = []
    sampler = DeviceSampler(sleeper.pid, events.append, interval_s=0.05, cuda_index=1)
    sampler.start()
    deadline = time.monotonic() + 10
    while not of_type(events, DeviceSampled) and time.monotonic() < deadline:
        time.sleep(0.02)
    sampler.stop()
    assert not events[0].available and events[0].message.endswith("showing CPU")
    assert of_type(events, DeviceSampled)[0].source == "cpu"


def _sample_until(sampler: DeviceSampler, events: list, done, timeout_s: float = 10) -> None:
    sampler.start()
    deadline = time.monotonic() + timeout_s
    while not done() and time.monotonic() < deadline:
        time.sleep(0.02)
    sampler.stop()


@pytest.mark.parametrize("how", ["query-raises", "gpu-lost"])
def test_nvml_failing_mid_run_leaves_the_cpu_view(how, monkeypatch, sleeper) -> None:
    fake: Any = fake_pynvml(sleeper.pid)

    class NVMLError_GpuIsLost(fake.NVMLError):  # noqa: N801 (pynvml's name)
        pass

    monkeypatch.setitem(sys.modules, "pynvml", fake)
    answered = [0]
    rates = fake.nvmlDeviceGetUtilizationRates

    def failing_after_two(h):
        answered[0] += 1
        if answered[0] > 2:
            raise NVMLError_GpuIsLost()
        return rates(h)

    if how == "gpu-lost":  # the driver says the GPU fell off the bus
        fake.nvmlDeviceGetUtilizationRates = failing_after_two
    else:  # the query helper itself raises (a binding bug, ctypes, anything)
        real_query = nvml.query

        def query(fn, *args):
            if fn == "nvmlDeviceGetUtilizationRates":
                answered[0] += 1
                if answered[0] > 2:
                    raise OSError("ctypes: access violation")
            return real_query(fn, *args)

        monkeypatch.setattr(nvml, "query", query)
    events: list = []
    sampler = DeviceSampler(sleeper.pid, events.append, interval_s=0.05, cuda_index=0)
    _sample_until(sampler, events, lambda: len(of_type(events, DeviceSampled)) >= 6)

    samples = of_type(events, DeviceSampled)
    assert [s.source for s in samples[:2]] == ["nvml", "nvml"]
    assert samples[0].values["gpu_util_pct"] == 87.0
    statuses = of_type(events, MonitorStatus)
    assert [s.available for s in statuses] == [True, False]  # said once, not per sample
    assert "NVML failed mid-run" in statuses[1].message
    assert statuses[1].message.endswith("showing CPU")
    later = samples[2:]
    assert len(later) >= 3 and all(s.source == "cpu" for s in later)
    assert all(s.values["worker_rss_mb"] > 1 and "gpu_util_pct" not in s.values for s in later)
    assert nvml.lib() is None  # shut down again


# --- summarize ---------------------------------------------------------------------------


def test_summarize_splits_by_named_spans() -> None:
    def s(t: float, **values: float | None) -> DeviceSampled:
        return DeviceSampled(source="nvml", values=values, t=t)

    samples = [
        s(0.5, gpu_util_pct=0.0, mem_used_mb=100.0),
        s(1.5, gpu_util_pct=10.0, mem_used_mb=200.0),
        s(2.5, gpu_util_pct=None, mem_used_mb=300.0),  # n/a: left out of the mean
        s(10.5, gpu_util_pct=90.0, mem_used_mb=900.0),
        s(11.5, gpu_util_pct=70.0, mem_used_mb=950.0),
        s(20.5, gpu_util_pct=5.0, mem_used_mb=400.0),  # a recompile later on
        s(99.0, gpu_util_pct=100.0, mem_used_mb=1.0),  # in no span
    ]
    spans = [("compile", 0.0, 3.0), ("benchmark", 10.0, 12.0), ("compile", 20.0, 21.0)]
    out = summarize(samples, spans + [("idle", 50.0, 60.0)])
    assert list(out) == ["compile", "benchmark", "idle"]
    c = out["compile"]
    assert c["samples"] == 4 and c["duration_s"] == 4.0
    assert c["gpu_util_pct.mean"] == pytest.approx(5.0)
    assert c["gpu_util_pct.max"] == 10.0
    assert c["mem_used_mb.mean"] == pytest.approx(250.0)
    b = out["benchmark"]
    assert b["gpu_util_pct.mean"] == 80.0 and b["mem_used_mb.max"] == 950.0
    idle = out["idle"]
    assert idle["samples"] == 0 and idle["gpu_util_pct.mean"] is None
    assert idle["mem_used_mb.max"] is None
    assert summarize([], [("x", 0, 1)]) == {"x": {"samples": 0.0, "duration_s": 1.0}}


def test_monitors_never_import_torch_or_textual() -> None:
    code = (
        "import sys; import dlcprof.monitors.device, dlcprof.monitors.hotspots, "
        "dlcprof.doctor, dlcprof.monitors.nvml; "
        "bad = [m for m in ('torch', 'textual') if m in sys.modules]; "
        "sys.exit(f'imported {bad}' if bad else 0)"
    )
    root = REPO
    out = subprocess.run(
        [sys.executable, "-c", code], cwd=root, capture_output=True, text=True, check=False
    )
    assert out.returncode == 0, out.stderr
