"""A live session's events on disk as each one is folded, so that a dlcprof
killed where none of its code runs (SIGKILL, the kernel's OOM killer) does not
lose the session: the next dlcprof that records one finds the journal of a
process that is gone, moves it to ``recovered/`` and names it in one line
(``dlcprof replay PATH`` opens it, as a saved session). A session that ends as
dlcprof means it to (saved, or not asked to be) removes its journal; one cut
by an error is recovered at once.

One JSON line per event, the worker's own wire format (``events.encode``),
each written unbuffered: what the kernel holds outlives the process. Where:
``$XDG_STATE_HOME/dlcprof`` (``~/.local/state/dlcprof``), as the XDG spec
places what a program keeps between its runs but is no user's document. A
journal's dlcprof holds a lock on it, which the kernel lets go with the
process: a journal no one holds is a killed one's, whatever its pid means here
(a home shared by the nodes of a cluster, or by containers, each with pids of
its own).
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO

from dlcprof import events as ev
from dlcprof.session import Session

LIVE, RECOVERED = "journals", "recovered"


def state_folder() -> Path:
    home = os.environ.get("XDG_STATE_HOME") or os.path.join(
        os.path.expanduser("~"), ".local", "state"
    )
    return Path(home) / "dlcprof"


class Journal:
    """Where a session's events go as it folds them (``Session.journal``)."""

    def __init__(self, path: Path, file: BinaryIO) -> None:
        self.path, self._file = path, file
        self.lost = ""  # why writing stopped (a full disk): the journal ends there

    @classmethod
    def open(cls) -> Journal:
        """A new journal of this process (OSError when its folder cannot be written)."""
        folder = state_folder() / LIVE
        folder.mkdir(parents=True, exist_ok=True)
        # Unique: a trial's session journals inside the session that tries it.
        fd, path = tempfile.mkstemp(
            ".jsonl", f"{os.getpid()}-{time.strftime('%Y%m%dT%H%M%S')}-", folder
        )
        file = os.fdopen(fd, "ab", buffering=0)
        fcntl.flock(file, fcntl.LOCK_EX | fcntl.LOCK_NB)  # held until closed, or the process dies
        return cls(Path(path), file)

    def emit(self, event: ev.Event) -> None:
        if self.lost:
            return
        try:
            self._file.write(ev.encode(event))
        except OSError as e:  # the session goes on: only its copy on disk stops
            self.lost = f"the journal stopped at {time.strftime('%H:%M:%S')}: {e.strerror or e}"

    def close(self) -> None:
        self._file.close()


@contextlib.contextmanager
def journaled(session: Session, say: Callable[[str], None]) -> Iterator[None]:
    """Within: ``session``'s events (those it holds already, then each one it
    folds) in a journal, removed when the block ends; kept and named (``say``)
    when it ends by an exception. Journals that killed processes left are
    recovered first, each named. No journal where none can be written: one line
    says why, and the session goes on."""
    for line in recover():
        say(line)
    try:
        journal = Journal.open()
        for e in session.events:
            journal.emit(e)
    except OSError as e:
        say(f"dlcprof: no journal of this session ({e.strerror or e}): killed, it would be lost")
        yield
        return
    session.journal = journal
    try:
        yield
    except BaseException:
        session.journal = None
        journal.close()
        kept = _recovered(journal.path, "dlcprof stopped on an error")
        if kept is not None:
            say(f"dlcprof: this session's events are kept in {kept} (dlcprof replay {kept})")
        raise
    session.journal = None
    journal.close()
    journal.path.unlink(missing_ok=True)
    if journal.lost:
        say(f"dlcprof: {journal.lost} (killed after it, this session would have lost the rest)")


def recover() -> list[str]:
    """Move the journals of processes that are gone to ``recovered/``; a line
    for each, naming it (an empty one, of a process killed before any event,
    is removed)."""
    lines = []
    for path in sorted((state_folder() / LIVE).glob("*.jsonl")):
        pid = path.name.split("-", 1)[0]
        with contextlib.suppress(OSError), open(path, "rb") as held:
            fcntl.flock(held, fcntl.LOCK_EX | fcntl.LOCK_NB)  # OSError: its dlcprof runs
            last = time.strftime("%Y-%m-%d %H:%M:%S", time.localtime(path.stat().st_mtime))
            kept = _recovered(path)
            if kept is not None:
                lines.append(
                    f"dlcprof: the session of dlcprof {pid}, which ended without saving (its "
                    f"last event at {last}), is recovered: dlcprof replay {kept}"
                )
    return lines


def _recovered(path: Path, why: str = "") -> Path | None:
    """``path`` moved to ``recovered/`` (None: it held no event, removed), its
    live runs ended as its session could not end them; ``why``: how dlcprof
    ended (by default, at the journal's last write, without saving)."""
    t = path.stat().st_mtime  # the last event's write: read before the ends are added
    data = path.read_bytes()
    # A last line cut mid-write (a short write on a full disk, the machine going
    # down) holds no event: the journal ends at the line before it.
    whole = data[: data.rfind(b"\n") + 1]
    if not whole:
        path.unlink()
        return None
    with open(path, "r+b") as f:
        f.truncate(len(whole))
        f.seek(len(whole))
        f.writelines(ev.encode(e) for e in _ends(whole, t, why))
    folder = state_folder() / RECOVERED
    folder.mkdir(parents=True, exist_ok=True)
    return path.replace(folder / path.name)


def _ends(journal: bytes, t: float, why: str) -> list[ev.Event]:
    """How the runs still live in ``journal`` ended: with dlcprof (a run's worker
    stops with it), at its last event (``t``), not as "running"."""
    session = Session()
    for line in journal.splitlines():
        with contextlib.suppress(ev.ProtocolError):  # a line no write of ours made
            session.apply(ev.decode(line))
    when = time.strftime("%H:%M:%S", time.localtime(t))
    why = why or (
        f"dlcprof ended at {when} without saving (SIGKILL, the out-of-memory killer, or the "
        "machine went down)"
    )
    ends: list[ev.Event] = []
    if any(r.live and r.process is None for r in session.runs.values()):
        ends.append(
            ev.WorkerExited(
                returncode=None,
                signal=None,
                message=f"{why}: the run stopped with it",
                cancelled=True,
                t=t,
            )
        )
    if session.program is not None and session.program_exit is None:
        ends.append(
            ev.ProgramExited(
                returncode=None,
                signal=None,
                wall_s=t - session.program.t,
                detached=True,
                message=f"{why}: the program went on without it; how it ended is not known",
                t=t,
            )
        )
    if ends:  # said where the report lists what went wrong, not only in a run's status
        ends.insert(0, ev.ErrorRaised(run_id=None, stage="worker", message=why, t=t))
    return ends
