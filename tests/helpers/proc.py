"""Real processes for the fault tests: dlcprof started as a user would, under a
pipe or a terminal, a workload that sits in a compile, and who is still alive."""

from __future__ import annotations

import fcntl
import os
import re
import select
import struct
import subprocess
import sys
import termios
import threading
import time
from pathlib import Path
from typing import Any

import psutil

# The terminal on stdin becomes the process's controlling terminal, then exec.
_ON_TERMINAL = (
    "import fcntl, os, sys, termios; fcntl.ioctl(0, termios.TIOCSCTTY, 0); "
    "os.execv(sys.argv[1], sys.argv[1:])"
)

# Sits in a compile: the fake kernel of a custom op, which Dynamo runs while it
# traces, starts a child (as Inductor starts g++), says so in MARK and sleeps.
SLOW_COMPILE = '''
"""Compiles for ever: a fake kernel that sleeps while Dynamo traces it."""
import os
import subprocess
import time

import torch


@torch.library.custom_op("dlcprof_test::slow", mutates_args=())
def slow(x: torch.Tensor) -> torch.Tensor:
    return x + 1


@slow.register_fake
def _(x):
    child = subprocess.Popen(["sleep", "600"])
    with open(os.environ["DLCPROF_TEST_MARK"], "w") as f:
        f.write(f"{os.getpid()} {child.pid}\\n")
    time.sleep(600)
    return torch.empty_like(x)


def f(x):
    return slow(x).sin()


def build(device, dtype):
    return f, (torch.randn(8, device=device, dtype=dtype),)
'''


def dlcprof_argv(*args: str) -> list[str]:
    return [sys.executable, "-m", "dlcprof.cli", *args]


def spawn(argv: list[str], **kw: Any) -> subprocess.Popen:
    """A process with stdout/stderr on pipes (text)."""
    return subprocess.Popen(
        argv,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        stdin=subprocess.DEVNULL,
        text=True,
        **kw,
    )


class Terminal:
    """A process in a pseudo-terminal of its own (its controlling terminal), as
    in an SSH session; closing the terminal sends it SIGHUP."""

    def __init__(
        self, argv: list[str], cwd: Path, env: dict[str, str], size: tuple[int, int] = (40, 140)
    ) -> None:
        self.master, slave = os.openpty()
        fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", size[0], size[1], 0, 0))
        self.proc = subprocess.Popen(
            [sys.executable, "-c", _ON_TERMINAL, *argv],
            stdin=slave,
            stdout=slave,
            stderr=slave,
            cwd=cwd,
            env=env,
            start_new_session=True,
        )
        os.close(slave)
        self.output = bytearray()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        # Drained all along: a full terminal buffer would block the app's writes.
        while True:
            try:
                ready, _, _ = select.select([self.master], [], [], 0.2)
                if ready:
                    data = os.read(self.master, 1 << 16)
                    if not data:
                        return
                    self.output.extend(data)
            except OSError:
                return

    def type(self, keys: bytes) -> None:
        os.write(self.master, keys)

    def close(self) -> None:
        """Hang up: what closing the terminal window or losing SSH does."""
        os.close(self.master)


def wait_for_file(path: Path, proc: subprocess.Popen, timeout_s: float = 120) -> str:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if path.exists() and path.read_text().strip():
            return path.read_text()
        assert proc.poll() is None, f"exited early with {proc.returncode}"
        time.sleep(0.1)
    raise AssertionError(f"{path} never appeared")


def alive(pids: list[int]) -> list[int]:
    out = []
    for pid in pids:
        try:
            if psutil.Process(pid).status() != psutil.STATUS_ZOMBIE:
                out.append(pid)
        except psutil.NoSuchProcess:
            pass
    return out


def wait_gone(pids: list[int], timeout_s: float) -> list[int]:
    """The pids still alive after up to ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while alive(pids) and time.monotonic() < deadline:
        time.sleep(0.05)
    return alive(pids)


def tree(pid: int) -> list[int]:
    """``pid`` and every descendant now (the worker, py-spy, the workload's children)."""
    try:
        return [pid, *(p.pid for p in psutil.Process(pid).children(recursive=True))]
    except psutil.NoSuchProcess:
        return []


_PYSPY = Path(sys.executable).parent / "py-spy"
_SIGNALS = ("SigPnd", "ShdPnd", "SigBlk", "SigIgn", "SigCgt")


def _threads(pid: int) -> list[str]:
    """Where each thread of a hung process waits and which signals it holds
    pending or blocked (a stop signal taken by a thread that is not the main
    one never wakes a main thread asleep in a system call), and, for Python,
    py-spy's stacks."""
    out: list[str] = []
    try:
        tids = sorted(os.listdir(f"/proc/{pid}/task"), key=int)
    except OSError:  # gone since
        return out
    for tid in tids:
        try:
            task = Path(f"/proc/{pid}/task/{tid}")
            status = dict(
                line.split(":\t", 1) for line in (task / "status").read_text().splitlines()
            )
            masks = " ".join(f"{k}={status[k].strip()}" for k in _SIGNALS if k in status)
            out.append(f"  thread {tid} {(task / 'wchan').read_text()} {masks}")
        except (OSError, ValueError):
            pass
    if _PYSPY.exists():
        try:
            dump = subprocess.run(
                [str(_PYSPY), "dump", "--pid", str(pid)], capture_output=True, text=True, timeout=30
            )
        except subprocess.TimeoutExpired:
            return [*out, "  py-spy dump: no answer in 30 s"]
        out += ["  " + line for line in (dump.stdout or dump.stderr).splitlines()[:60]]
    return out


def communicate(proc: subprocess.Popen, timeout_s: float) -> tuple[str, str]:
    """``proc.communicate``; past ``timeout_s``, a failure that says which of
    its processes were still there and in what state (then the tree killed)
    and the ends of its output: what a hang on a loaded machine leaves to read."""
    try:
        return proc.communicate(timeout=timeout_s)
    except subprocess.TimeoutExpired:
        left = []
        pids = tree(proc.pid)
        for pid in pids:
            try:
                p = psutil.Process(pid)
                left.append(f"{pid} {p.status()} {' '.join(p.cmdline())[:160]}")
                left += _threads(pid)
            except psutil.NoSuchProcess:
                pass
        for pid in pids:
            try:
                psutil.Process(pid).kill()
            except psutil.NoSuchProcess:
                pass
        out, err = proc.communicate()
        raise AssertionError(
            f"still running after {timeout_s:.0f} s:\n"
            + "\n".join(left)
            + f"\nstdout: ...{out[-1500:]}\nstderr: ...{err[-3000:]}"
        ) from None


def dlcprof_run(
    json_path: Path, *command: str, options: tuple[str, ...] = (), **kwargs
) -> subprocess.Popen:
    """``dlcprof run --json JSON_PATH OPTIONS -- python COMMAND``, its output on pipes
    (text) unless ``kwargs`` say otherwise."""
    argv = [
        sys.executable,
        "-m",
        "dlcprof.cli",
        "run",
        "--json",
        str(json_path),
        *options,
        "--",
        sys.executable,
        *command,
    ]
    kwargs.setdefault("stdout", subprocess.PIPE)
    kwargs.setdefault("stderr", subprocess.PIPE)
    return subprocess.Popen(argv, text=True, **kwargs)


def gone(pid: int, within_s: float = 10.0) -> bool:
    """Whether process ``pid`` is gone within ``within_s``."""
    deadline = time.monotonic() + within_s
    while time.monotonic() < deadline:
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            return True
        time.sleep(0.05)
    return False


def pyspy_on(pid: int, within_s: float = 10.0) -> list[int]:
    """The py-spy processes still sampling ``pid`` after ``within_s`` (py-spy
    ends on its own a moment after its target)."""
    deadline = time.monotonic() + within_s
    while True:
        left = [
            p.pid
            for p in psutil.process_iter(["cmdline"])
            if (argv := p.info["cmdline"] or [])
            and os.path.basename(argv[0]) == "py-spy"
            and str(pid) in argv
        ]
        if not left or time.monotonic() > deadline:
            return left
        time.sleep(0.1)


# A line of a job's stderr that says why a process of it failed.
_FAILED_RE = re.compile(r"Traceback|Error\b|exitcode|terminate called|Signal \d+")


def failure(stderr: str, tail: int = 2000) -> str:
    """A job's stderr for a failed assert: the lines that say why a rank or
    torchrun failed (amid the tables dlcprof prints), then its last ``tail``
    characters."""
    said = [ln for ln in stderr.splitlines() if _FAILED_RE.search(ln)]
    return "\n".join(said[:40]) + "\n[...]\n" + stderr[-tail:]
