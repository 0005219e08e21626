"""Every NVML call goes through ``query``: a missing driver field is "n/a", never a crash.

Drivers differ in what they support (``NVMLError_NotSupported``), bindings
differ in which functions exist, and structs differ in their fields; nvitop
learned to funnel every call through one helper that answers N/A on failure.
We do the same: ``query`` returns ``None`` on an ``NVMLError`` or a missing
attribute, and the UI renders ``None`` as "n/a". Errors that mean the GPU or
its driver is gone (``LOST``) raise instead: the sampler then says NVML is
unavailable and goes on with the CPU view.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from types import ModuleType
from typing import Any

# The pynvml module once ``init()`` succeeded; None before (or when NVML is absent).
_lib: ModuleType | None = None
# init() calls not yet matched by shutdown(): two samplers may share NVML.
_refs = 0


def lib() -> ModuleType | None:
    """The initialized pynvml module, or None."""
    return _lib


def init() -> str | None:
    """Load and initialize NVML: None when it works, else one line saying why not."""
    global _lib, _refs
    try:
        # Looked up at call time (not imported at module import) so that tests
        # can put a stand-in module into sys.modules.
        pynvml = importlib.import_module("pynvml")
    except ImportError:
        return "no NVML Python bindings (pip install nvidia-ml-py)"
    try:
        pynvml.nvmlInit()
    except Exception as e:  # NVMLError subclasses, or OSError from ctypes
        return _init_reason(e)
    try:
        count = _call(pynvml, lambda: pynvml.nvmlDeviceGetCount())
    except Exception as e:  # a LOST error right after init
        return _init_reason(e)
    if not count:
        try:
            pynvml.nvmlShutdown()
        except Exception:
            pass
        return "no NVIDIA GPU (NVML found no device)"
    _lib = pynvml
    _refs += 1
    return None


def shutdown() -> None:
    """Undo one successful init(); NVML itself counts its inits the same way."""
    global _lib, _refs
    if _lib is None:
        return
    try:
        _lib.nvmlShutdown()
    except Exception:
        pass
    _refs -= 1
    if _refs <= 0:
        _lib, _refs = None, 0


def query(fn: str | Callable[..., Any], *args: Any) -> Any | None:
    """Call an NVML function (a pynvml attribute name or a callable): its value, or None.

    A callable may also read struct fields (``lambda: get(h).gpu``): a field the
    driver's struct lacks raises AttributeError, which also becomes None.
    """
    if _lib is None:
        return None
    if isinstance(fn, str):
        func = getattr(_lib, fn, None)
        if func is None:  # bindings too old for this function
            return None
        return _call(_lib, func, *args)
    return _call(_lib, fn, *args)


# NVMLErrors that mean the GPU or driver is gone, not that one field is unsupported:
# they propagate, and the sampler stops asking NVML (monitors/device.py). Any
# other (NVMLError_Unknown from an optional query too) is that one value's n/a.
LOST = ("GpuIsLost", "Uninitialized", "DriverNotLoaded", "LibraryNotFound")


def _call(mod: ModuleType, func: Callable[..., Any], *args: Any) -> Any | None:
    errors: tuple[type[BaseException], ...] = (AttributeError,)
    nvml_error = getattr(mod, "NVMLError", None)
    if isinstance(nvml_error, type) and issubclass(nvml_error, BaseException):
        errors = (nvml_error, AttributeError)
    try:
        return func(*args)
    except errors as e:
        if any(name in type(e).__name__ for name in LOST):
            raise
        return None


def _init_reason(e: BaseException) -> str:
    name = type(e).__name__
    if "LibraryNotFound" in name or isinstance(e, OSError):
        return "no NVIDIA GPU (NVML not found)"
    if "DriverNotLoaded" in name:
        return "no NVIDIA GPU (driver not loaded)"
    if "NoPermission" in name:
        return "NVML: insufficient permissions to query the GPU"
    if "LibRmVersionMismatch" in name:
        return "NVML: driver/library version mismatch (reboot or reload the driver)"
    return f"NVML unavailable: {str(e) or name}"


def decode(value: Any) -> str | None:
    """NVML strings are bytes in old bindings, str in new ones."""
    if value is None:
        return None
    if isinstance(value, bytes):
        return value.decode(errors="replace")
    return str(value)
