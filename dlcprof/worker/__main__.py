"""``python -m dlcprof.worker --events-fd N [--control-fd M]``: see dlcprof/worker/__init__.py."""

from __future__ import annotations

import argparse
import io
import os
import sys

from dlcprof.worker.emit import Emitter


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m dlcprof.worker")
    parser.add_argument(
        "--events-fd", type=int, required=True, help="write events (JSON lines) to this fd"
    )
    parser.add_argument(
        "--control-fd",
        type=int,
        default=None,
        help="read the parent's answers (a quiet window for timing) from this fd",
    )
    args = parser.parse_args(argv)
    buffered_stdio()
    emitter = Emitter(args.events_fd)
    control = None
    if args.control_fd is not None:
        os.set_inheritable(args.control_fd, False)  # compiler children never hold it
        control = open(args.control_fd, encoding="utf-8")  # noqa: SIM115
    try:
        from dlcprof.worker.run import serve

        return serve(emitter, control=control)
    finally:
        emitter.close()


def buffered_stdio() -> None:
    """stdout and stderr line-buffered over a BufferedWriter. Unbuffered
    (PYTHONUNBUFFERED, common in containers) Python writes straight to the
    pipe, and a big write that py-spy's sampling interrupts returns early and
    loses its remainder silently; a BufferedWriter writes the rest."""
    for fd, name in ((1, "stdout"), (2, "stderr")):
        old = getattr(sys, name)
        raw = io.FileIO(fd, "w", closefd=False)
        setattr(
            sys,
            name,
            io.TextIOWrapper(
                io.BufferedWriter(raw),
                encoding=getattr(old, "encoding", None),
                errors=getattr(old, "errors", None),
                line_buffering=True,
            ),
        )


def exit_now(code: int) -> None:
    """Exit without waiting: Python's shutdown would join any non-daemon thread the
    workload started (a worker that never exits). The runner ends any child it left."""
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code)


if __name__ == "__main__":
    exit_now(main())
