"""``dlcprof doctor``: what this machine can profile, and what each missing piece costs.

torch is imported only in a child ``python -c`` that prints JSON, so the UI
process never pays for (or crashes on) importing it.
"""

from __future__ import annotations

import getpass
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from rich.table import Table
from rich.text import Text

from dlcprof import allocator
from dlcprof.data import data
from dlcprof.monitors import nvml
from dlcprof.monitors.pyspy import find_pyspy, ptrace_check, pyspy_status


@data
class Check:
    name: str
    status: str  # "ok" | "missing" | "warn"
    detail: str
    cost: str = ""  # what the missing piece costs the user; "" when ok


# Runs in a child interpreter: everything torch-side the checks need, as one JSON line.
_TORCH_PROBE = r"""
import importlib.util, json, os, sys
out = {"python": sys.version.split()[0]}
try:
    import torch
except Exception as e:
    out["error"] = f"{type(e).__name__}: {e}"
    print(json.dumps(out)); sys.exit(0)
out["torch"] = torch.__version__
out["cuda_build"] = torch.version.cuda
out["hip_build"] = getattr(torch.version, "hip", None)
try:
    out["cuda_available"] = bool(torch.cuda.is_available())
    out["device_count"] = torch.cuda.device_count() if out["cuda_available"] else 0
    out["device_name"] = torch.cuda.get_device_name(0) if out["cuda_available"] else None
except Exception as e:
    out["cuda_available"], out["cuda_error"] = False, str(e)
try:
    import torch._inductor.config as cfg
    out["cxx"] = [c for c in cfg.cpp.cxx if c]
except Exception as e:
    out["cxx_error"] = str(e)
try:
    from torch._inductor.runtime import cache_dir_utils as cd
    # cache_dir() would create the directory: compute it without side effects.
    out["default_cache_dir"] = cd.default_cache_dir()
    out["cache_dir"] = os.path.abspath(
        os.environ.get("TORCHINDUCTOR_CACHE_DIR") or out["default_cache_dir"])
except Exception as e:
    out["cache_error"] = str(e)
spec = importlib.util.find_spec("triton")
if spec is not None:
    try:
        from importlib.metadata import version
        out["triton"] = version("triton")
    except Exception:
        out["triton"] = "unknown version"
print(json.dumps(out))
"""


def torch_info(python: str | None = None, timeout_s: float = 180.0) -> dict[str, Any]:
    """What the worker's torch offers, probed in a child interpreter (never here)."""
    try:
        out = subprocess.run(
            [python or sys.executable, "-c", _TORCH_PROBE],
            capture_output=True,
            text=True,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return {"error": f"importing torch took over {timeout_s:.0f} s"}
    except OSError as e:
        return {"error": str(e)}
    for line in reversed(out.stdout.splitlines()):
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    err = (out.stderr.strip().splitlines() or ["no output"])[-1]
    return {"error": f"python exited with {out.returncode}: {err}"}


def checks(python: str | None = None) -> list[Check]:
    """Every check, in display order (~5 s: the torch import dominates)."""
    with ThreadPoolExecutor(2) as pool:
        info_f = pool.submit(torch_info, python)
        spy_f = pool.submit(_pyspy_checks)
        info = info_f.result()
        spy = spy_f.result()
    return [
        _torch_check(info),
        _cuda_check(info),
        _cxx_check(info),
        _triton_check(info),
        _nvml_check(),
        allocator_check(),
        *spy,
        *_cache_checks(info),
    ]


def _torch_check(info: dict[str, Any]) -> Check:
    if "torch" not in info:
        return Check(
            "torch",
            "missing",
            info.get("error", "not importable"),
            "nothing can be compiled: install a CPU or CUDA build of torch",
        )
    if info.get("cuda_build"):
        build = f"CUDA {info['cuda_build']} build"
    elif info.get("hip_build"):
        build = f"ROCm {info['hip_build']} build"
    else:
        build = "CPU-only build"
    return Check("torch", "ok", f"{info['torch']} ({build}), Python {info.get('python', '?')}")


def _cuda_check(info: dict[str, Any]) -> Check:
    if "torch" not in info:
        return Check("CUDA", "missing", "unknown (torch missing)", "no GPU compiles")
    if info.get("cuda_available"):
        n = info.get("device_count", 1)
        return Check("CUDA", "ok", f"{info.get('device_name')} ({n} device{'s' * (n != 1)})")
    why = "CPU-only torch build" if not info.get("cuda_build") else "no GPU visible to torch"
    if info.get("cuda_error"):
        why += f" ({info['cuda_error']})"
    return Check(
        "CUDA",
        "missing",
        why,
        "compiles use Inductor's CPU backend (C++/OpenMP) only: no GPU kernels",
    )


def _cxx_check(info: dict[str, Any]) -> Check:
    candidates = list(info.get("cxx") or []) or [os.environ.get("CXX", "g++"), "c++"]
    for cxx in candidates:
        path = shutil.which(cxx)
        if path is None:
            continue
        try:
            out = subprocess.run(
                [path, "--version"], capture_output=True, text=True, timeout=20, check=False
            )
            version = (out.stdout.strip().splitlines() or ["unknown version"])[0]
        except (OSError, subprocess.SubprocessError):
            version = "version unknown"
        return Check("C++ compiler", "ok", f"{cxx}: {version}")
    return Check(
        "C++ compiler",
        "missing",
        f"none of {', '.join(candidates)} on PATH",
        "Inductor's CPU backend cannot build kernels: CPU compiles fail (apt install g++)",
    )


def _triton_check(info: dict[str, Any]) -> Check:
    if info.get("triton"):
        return Check("Triton", "ok", f"{info['triton']} (GPU backend)")
    if info.get("cuda_available"):
        return Check(
            "Triton",
            "missing",
            "not installed",
            "Inductor cannot generate GPU kernels: CUDA compiles fail (pip install triton)",
        )
    return Check("Triton", "warn", "not installed (only GPU compiles need it)", "none for CPU runs")


def _nvml_check() -> Check:
    reason = nvml.init()
    if reason is not None:
        return Check(
            "NVML",
            "missing",
            reason,
            "no GPU utilization/memory pane: dlcprof samples the worker's CPU instead",
        )
    try:
        driver = nvml.decode(nvml.query("nvmlSystemGetDriverVersion")) or "unknown"
        count = nvml.query("nvmlDeviceGetCount")
    finally:
        nvml.shutdown()
    return Check("NVML", "ok", f"driver {driver}, {count} GPU(s)")


# jemalloc's default decay hands freed pages back to the kernel: on pointwise-chain
# it refaulted ~10k pages per eager call (docs/torch-notes.md §7).
_JEMALLOC_STEADY = "MALLOC_CONF=dirty_decay_ms:-1,muzzy_decay_ms:-1"


def allocator_check(
    m: allocator.Malloc | None = None, found: dict[str, str] | None = None
) -> Check:
    """Which malloc the worker inherits, and what holds it steady."""
    m = m or allocator.current()
    found = allocator.installed() if found is None else found
    if m.steady:
        return Check("allocator", "ok", f"{m.label}: held steady")
    if m.name == "tcmalloc":
        return Check("allocator", "ok", f"{m.label}: keeps freed pages for reuse")
    pinned = " ".join(f"{k}={v}" for k, v in allocator.STEADY_ENV.items())
    if m.name == "glibc":
        ways = [pinned]
        if "tcmalloc" in found:
            ways.append(f"LD_PRELOAD={found['tcmalloc']}")
        if "jemalloc" in found:
            ways.append(f"LD_PRELOAD={found['jemalloc']} {_JEMALLOC_STEADY}")
        return Check(
            "allocator",
            "warn",
            f"{m.label}: eager CPU time depends on the process's history (each op's "
            "multi-MB output from the heap or from fresh pages)",
            "dlcprof measures the speedup both ways; to hold your own process steady, "
            "start it with " + ", or ".join(ways),
        )
    why = "dlcprof pins glibc's malloc only, so its steady-allocator figure is n/a"
    if m.name == "jemalloc":
        return Check(
            "allocator",
            "warn",
            f"{m.label}: {why}",
            f"jemalloc's default decay returns freed pages to the kernel: {_JEMALLOC_STEADY} "
            "holds it steady",
        )
    return Check("allocator", "warn", f"{m.label}: {why}", "the headline speedup is this malloc's")


def _pyspy_checks() -> list[Check]:
    ok, message = pyspy_status()
    lost = "no hot-frames pane (the compiler's own Python hotspots) and no speedscope profile"
    if not ok:
        return [
            Check("py-spy", "missing", message, lost),
            Check("ptrace", "missing", "needs py-spy", lost),
        ]
    attach_ok, attach_msg = ptrace_check(find_pyspy())
    return [
        Check("py-spy", "ok", message),
        Check("ptrace", "ok", attach_msg)
        if attach_ok
        else Check("ptrace", "missing", attach_msg, lost),
    ]


def _default_cache_dir() -> str:
    """torch's default, computed here when the torch probe could not say."""
    try:
        user = getpass.getuser()
    except (KeyError, OSError):
        user = f"uid_{os.getuid()}"
    return os.path.join(
        tempfile.gettempdir(), "torchinductor_" + re.sub(r'[\\/:*?"<>|]', "_", user)
    )


def _entries(path: Path) -> int:
    try:
        return sum(1 for _ in path.iterdir())
    except OSError:
        return 0


def _cache_checks(info: dict[str, Any]) -> list[Check]:
    default = info.get("default_cache_dir") or _default_cache_dir()
    cache = Path(
        info.get("cache_dir") or os.environ.get("TORCHINDUCTOR_CACHE_DIR") or default
    ).absolute()
    fx, aot = _entries(cache / "fxgraph"), _entries(cache / "aotautograd")
    if fx or aot:
        cache_check = Check(
            "Inductor cache", "ok", f"warm: {cache} ({fx} FX graph, {aot} AOT autograd entries)"
        )
    else:
        state = "empty" if cache.is_dir() else "absent"
        cache_check = Check(
            "Inductor cache",
            "warn",
            f"cold: {cache} is {state}",
            "the first compile of each graph pays the full compile (a profiler should say "
            "whether it measured a cold or a warm compile: dlcprof run --cache cold|warm)",
        )
    # The precompiled header lives under $TMPDIR, outside TORCHINDUCTOR_CACHE_DIR.
    headers = Path(default) / "precompiled_headers"
    gch = sorted(headers.glob("*.gch")) if headers.is_dir() else []
    if gch:
        pch = Check("precompiled header", "ok", f"{len(gch)} in {headers}")
    else:
        pch = Check(
            "precompiled header",
            "warn",
            f"none in {headers}",
            "the first CPU compile in this TMPDIR builds it once (~5 s)",
        )
    return [cache_check, pch]


_STYLE = {"ok": ("✓ ok", "green"), "missing": ("✗ missing", "red"), "warn": ("! warn", "yellow")}


def render(checks: list[Check]) -> Table:
    """The checks as a rich table: check, status, detail, what a missing piece costs."""
    table = Table(title="dlcprof doctor", show_lines=False, expand=False)
    table.add_column("check", style="bold", no_wrap=True)
    table.add_column("status", no_wrap=True)
    table.add_column("detail", overflow="fold")
    table.add_column("cost if missing", overflow="fold", style="dim")
    for c in checks:
        label, style = _STYLE.get(c.status, (c.status, ""))
        table.add_row(c.name, Text(label, style=style), c.detail, c.cost)
    return table
