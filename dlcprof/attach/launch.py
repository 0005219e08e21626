"""The user's command started, before anything else of dlcprof is imported:
checked as a shell checks it, spawned in a process group of its own with the
bootstrap and the event socket in its environment, given the terminal, and
sent the stop signals that reach dlcprof.

Every millisecond before the spawn is added to the program's wall time, so
this module imports only the standard library and what the two sides of the
process boundary agree on (``attach_contract.py``); ``program.py`` follows
the started program's events.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import shutil
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import BinaryIO

from dlcprof import scratch
from dlcprof.attach_contract import (
    BOOTSTRAP_DIR,
    EAGER_ENV,
    HATCH_ENV,
    PACKAGE_ROOT,
    RAW_TRACE_DIR_ENV,
    ROOT_ENV,
    SOCKET_ENV,
    STEPS_ENV,
)
from dlcprof.signals import SIGNALS


class CommandError(Exception):
    """The command cannot be started: one line and a shell's exit status."""

    def __init__(self, message: str, exit_code: int) -> None:
        super().__init__(message)
        self.exit_code = exit_code


def check_command(
    argv: Sequence[str], env: dict[str, str] | None = None, cwd: str | None = None
) -> str:
    """The executable ``argv[0]`` names (a relative path from ``cwd``), or
    CommandError as a shell words it (127: not found, 126: found but cannot be
    executed)."""
    if not argv:
        raise CommandError("no command after '--' (dlcprof run -- python train.py)", 2)
    name = argv[0]
    path = (
        os.path.join(cwd or os.curdir, name)
        if os.sep in name
        else shutil.which(name, path=(env or os.environ).get("PATH"))
    )
    if path is None or not os.path.exists(path):
        what = "command not found" if os.sep not in name else "No such file or directory"
        raise CommandError(f"{name}: {what}", 127)
    if os.path.isdir(path):
        raise CommandError(f"{name}: Is a directory", 126)
    if not os.access(path, os.X_OK):
        raise CommandError(f"{name}: Permission denied", 126)
    return path


# sockaddr_un's sun_path on Linux: 108 bytes, its closing NUL included.
SOCKET_PATH_MAX = 107


def _socket_path() -> str:
    """Where the event socket is bound, in a folder only we can enter (mkdtemp:
    0700): the scratch folder, or /tmp where TMPDIR is too deep for a socket's
    path (a cluster job's scratch folder often is)."""
    path = str(scratch.new_folder("attach") / "events.sock")
    if len(os.fsencode(path)) <= SOCKET_PATH_MAX:
        return path
    try:
        folder = tempfile.mkdtemp(prefix="dlcprof-attach-", dir="/tmp")
    except OSError as e:
        raise CommandError(
            f"TMPDIR is too deep for the program's event socket ({len(path)} characters, "
            f"at most {SOCKET_PATH_MAX}) and /tmp cannot be used ({e.strerror or e}): "
            "set TMPDIR to a shorter folder",
            2,
        ) from None
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    return os.path.join(folder, "events.sock")


class Launch:
    """The command, running. ``output``: "inherit" (headless: the terminal's
    stdin, stdout and stderr) or "capture" (the TUI: stdin from /dev/null;
    stdout and stderr go to files in ``output_dir``, read back as ``captured``).
    ``raw_trace``: its processes write torch's raw trace (for --report, a save).
    ``cwd``: where it runs (dlcprof's own by default); ``hatch``: a graph break's
    setting its probes make before it compiles (``dlcprof try``); ``env``: more
    of its environment (``dlcprof try``'s cache folder and artifacts file)."""

    def __init__(
        self,
        argv: Sequence[str],
        output: str = "inherit",
        eager: bool = False,
        raw_trace: bool = True,
        steps: bool = False,
        cwd: str | None = None,
        hatch: str | None = None,
        env: Mapping[str, str] | None = None,
    ) -> None:
        self.argv = list(argv)
        self.eager = eager
        self.cwd = os.path.abspath(cwd or os.curdir)
        self.hatch = hatch
        env = {**os.environ, **(env or {})}
        executable = check_command(self.argv, env, self.cwd)
        self.socket_path = _socket_path()
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(self.socket_path)
        self.listener.listen(64)
        self.listener.setblocking(False)
        env[SOCKET_ENV] = self.socket_path
        env[ROOT_ENV] = str(PACKAGE_ROOT)
        if raw_trace:  # torch's raw trace, for a report folder (tlparse): costs CPU
            env[RAW_TRACE_DIR_ENV] = str(scratch.new_folder("traces"))
        else:
            env.pop(RAW_TRACE_DIR_ENV, None)
        env["PYTHONPATH"] = os.pathsep.join(
            p for p in (str(BOOTSTRAP_DIR), env.get("PYTHONPATH", "")) if p
        )
        for name, value in (
            (EAGER_ENV, eager and "1"),
            (STEPS_ENV, steps and "1"),
            (HATCH_ENV, hatch),
        ):
            if value:
                env[name] = value
            else:
                env.pop(name, None)
        self.started = time.monotonic()
        self.started_t = time.time()  # ProgramStarted's: dlcprof's imports come after
        self.stopped_by: str | None = None
        self.stopped_t: float | None = None
        self._foreground = False
        capture = output == "capture"
        # Captured output goes to files, not pipes: a detached program writes on
        # after dlcprof exits (a pipe would break under it), and the folder stays.
        self.output_dir: Path | None = None
        self.captured: list[tuple[str, BinaryIO]] = []  # (stream name, its file read back)
        files: dict[str, BinaryIO] = {}
        if capture:
            self.output_dir = Path(tempfile.mkdtemp(prefix="dlcprof-program-"))
            for name in ("stdout", "stderr"):
                path = self.output_dir / f"{name}.log"
                files[name] = path.open("wb")
                self.captured.append((name, path.open("rb")))
        try:
            self.proc = subprocess.Popen(
                self.argv,
                executable=executable,
                env=env,
                cwd=self.cwd,
                process_group=0,
                stdin=subprocess.DEVNULL if capture else None,
                stdout=files.get("stdout"),
                stderr=files.get("stderr"),
            )
        except OSError as e:
            self.listener.close()
            code = 127 if isinstance(e, FileNotFoundError) else 126
            raise CommandError(f"{self.argv[0]}: {e.strerror or e}", code) from None
        finally:
            for f in files.values():
                f.close()
        if not capture:
            self._take_terminal()

    @property
    def pid(self) -> int:
        return self.proc.pid

    def _take_terminal(self) -> None:
        """On a terminal, make the program's group the foreground one (as a
        shell does), so Ctrl-C and stdin are the program's."""
        try:
            if not os.isatty(0) or os.tcgetpgrp(0) != os.getpgrp():
                return
            with _no_sigttou():
                os.tcsetpgrp(0, self.proc.pid)
            self._foreground = True
            os.killpg(self.proc.pid, signal.SIGCONT)  # had it read stdin before: it stopped
        except OSError:
            pass

    def give_back_terminal(self) -> None:
        if self._foreground:
            self._foreground = False
            with contextlib.suppress(OSError), _no_sigttou():
                os.tcsetpgrp(0, os.getpgrp())

    def forward(self, signum: int, said: str | None = None) -> None:
        """Pass a stop signal on to the program's group, as a terminal would."""
        self.stopped_by = self.stopped_by or said or signal.Signals(signum).name
        self.stopped_t = self.stopped_t or time.time()
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(self.proc.pid, signum)


@contextlib.contextmanager
def _no_sigttou() -> Iterator[None]:
    """tcsetpgrp from a background group raises SIGTTOU unless it is blocked
    (blocked in this thread only: the pump thread gives the terminal back)."""
    old = signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTTOU})
    try:
        yield
    finally:
        signal.pthread_sigmask(signal.SIG_SETMASK, old)


@contextlib.contextmanager
def forwarding_signals(launched: list[Launch], said: Callable[[int], str]) -> Iterator[list[int]]:
    """Within: SIGINT, SIGTERM and SIGHUP sent to dlcprof go to the program's
    group (each one, every time); the yielded list notes them."""
    arrived: list[int] = []

    def handler(signum: int, frame: object) -> None:
        arrived.append(signum)
        if launched:
            launched[-1].forward(signum, said(signum))

    previous = {}
    for sig in SIGNALS:
        with contextlib.suppress(ValueError, OSError):
            # An ignored signal (nohup, a background job's SIGINT) stays ignored:
            # the program inherits that, as it would without dlcprof.
            if signal.getsignal(sig) is not signal.SIG_IGN:
                previous[sig] = signal.signal(sig, handler)
    try:
        yield arrived
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)
