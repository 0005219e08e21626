"""Where py-spy is and whether it may attach: the binary (the venv's first, then
PATH), its version, and a trial attach to a child Python (``dlcprof doctor``);
the words for each way it cannot sample."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

NOT_FOUND_MESSAGE = "py-spy not found: pip install py-spy (no hot-frames pane without it)"
DENIED_MESSAGE = (
    "py-spy may not attach to the compiling process (ptrace denied): run as root, or "
    "`sysctl kernel.yama.ptrace_scope=0`, or in a container `--cap-add SYS_PTRACE`"
)
_DENIED_RE = re.compile(r"permission denied|operation not permitted|ptrace", re.IGNORECASE)


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
                    capture_output=True,
                    text=True,
                    timeout=10,
                    check=False,
                )
            except (OSError, subprocess.SubprocessError) as e:
                return False, f"py-spy dump failed: {e}"
            if out.returncode == 0:
                return True, "py-spy can attach to child processes"
            last = error_line(out.stderr + out.stdout)
            if denied(last):
                return False, DENIED_MESSAGE
            time.sleep(0.2)  # the child's interpreter may not be initialized yet
        return False, f"py-spy could not attach: {last}"
    finally:
        child.kill()
        child.wait()


def error_line(text: str) -> str:
    """The one line of py-spy's output that says what went wrong."""
    lines = [ln.strip() for ln in text.splitlines() if ln.strip()]
    for ln in lines:
        if ln.startswith("Error:") or denied(ln):
            return ln.removeprefix("Error:").strip()
    return lines[0] if lines else "unknown error"


def denied(line: str) -> bool:
    """Does py-spy's error line say the kernel refused the attach (ptrace)?"""
    return _DENIED_RE.search(line) is not None
