"""What dlcprof exits with: 0 ok, 1 a failed run (or a CI gate over its
budget), 2 bad usage, 128 + N after stop signal N (``signals.Stopped``); after
the user's program, the program's own status. One decision for every command
and the TUI."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from dlcprof.session import Session

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2


def exit_status(returncode: int) -> int:
    """The status a shell reports: 128 + N for a process ended by signal N."""
    return 128 - returncode if returncode < 0 else returncode


def exit_code(session: Session, run_id: str | None = None) -> int:
    """After a workload's run ``run_id``: 0 once it finished ok and its worker
    exited 0, else 1. After an attached program (no ``run_id``): its own
    status as a shell reports it, 1 when its end never came in (nor did a run's
    that never started)."""
    if run_id is None:
        end = session.program_exit
        return exit_status(end.returncode or 0) if end is not None else EXIT_FAILED
    run = session.runs.get(run_id)
    exited = session.worker_exits[-1] if session.worker_exits else None
    if run is None or run.status != "ok" or (exited is not None and exited.returncode != 0):
        return EXIT_FAILED
    return EXIT_OK
