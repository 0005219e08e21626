"""A live session's journal (dlcprof/journal.py) on recorded real runs: written
as events fold, gone when the session ends as dlcprof means it to, kept when
it does not, and recovered, its live runs ended, once its dlcprof is gone.
The killed dlcprof itself: tests/e2e/test_signals.py."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from dlcprof import events as ev
from dlcprof import journal
from dlcprof.report import load_session
from dlcprof.session import Session


def _left(folder: Path, events: list[ev.Event], pid: int) -> Path:
    """A journal as a dlcprof ``pid`` killed mid-run leaves it."""
    (folder / journal.LIVE).mkdir(parents=True, exist_ok=True)
    path = folder / journal.LIVE / f"{pid}-20261205T101010.jsonl"
    path.write_bytes(b"".join(ev.encode(e) for e in events))
    return path


def _path(session: Session) -> Path:
    assert isinstance(session.journal, journal.Journal)
    return session.journal.path


def test_each_event_is_on_disk_as_it_folds_and_gone_when_the_session_ends(
    fixture_events, state_folder: Path
) -> None:
    events = fixture_events("pointwise_chain")
    session = Session.from_events(events[:3])  # what a loaded session holds already
    said: list[str] = []
    with journal.journaled(session, said.append):
        path = _path(session)
        for e in events[3:50]:
            session.apply(e)
        assert load_session(path).events == events[:50]
    assert not path.exists() and session.journal is None
    assert said == []


def test_a_trials_session_journals_inside_the_session_that_tries_it(
    fixture_events, state_folder: Path
) -> None:
    events = fixture_events("pointwise_chain")
    tried, trial = Session(), Session()
    with journal.journaled(tried, print), journal.journaled(trial, print):
        tried.apply(events[0])
        trial.apply(events[1])
        assert load_session(_path(tried)).events == events[:1]
        assert load_session(_path(trial)).events == events[1:2]
    assert list((state_folder / journal.LIVE).iterdir()) == []


def test_an_error_keeps_it_and_names_it(fixture_events, state_folder: Path) -> None:
    events = fixture_events("pointwise_chain")
    session = Session()
    said: list[str] = []
    with pytest.raises(RuntimeError), journal.journaled(session, said.append):
        path = _path(session)
        for e in events[:40]:  # mid-run: no WorkerExited
            session.apply(e)
        raise RuntimeError("a bug")
    kept = state_folder / journal.RECOVERED / path.name
    assert said == [f"dlcprof: this session's events are kept in {kept} (dlcprof replay {kept})"]
    replayed = load_session(kept)
    assert replayed.events[:40] == events[:40]
    (run,) = replayed.runs.values()
    assert run.status == "cancelled"
    assert (
        replayed.worker_exits[0].message == "dlcprof stopped on an error: the run stopped with it"
    )


def test_a_killed_programs_session_is_recovered_by_the_next_dlcprof(
    fixture_events, state_folder: Path
) -> None:
    events = fixture_events("programs/attached_train")
    cut = next(i for i, e in enumerate(events) if isinstance(e, ev.CompileFinished)) + 1
    # Its pid is this process's: what tells a killed dlcprof is the lock no one
    # holds, not a pid (another node's or container's, sharing this home).
    pid = os.getpid()
    left = _left(state_folder, events[:cut], pid)
    empty = _left(state_folder, [], 12345)
    running = journal.Journal.open()  # a dlcprof that records now: its lock held
    running.emit(events[0])
    try:
        (line,) = journal.recover()
        assert running.path.exists()
    finally:
        running.close()
    kept = state_folder / journal.RECOVERED / left.name
    assert line.startswith(f"dlcprof: the session of dlcprof {pid}, which ended without saving")
    assert line.endswith(f"is recovered: dlcprof replay {kept}")
    assert not left.exists() and not empty.exists()
    session = load_session(kept)
    assert session.events[:cut] == events[:cut]
    assert session.program_exit is not None and session.program_exit.detached
    assert "the program went on without it" in session.program_exit.message
    assert all(r.status == "cancelled" for r in session.runs.values())
    assert [p.name for p in (state_folder / journal.LIVE).iterdir()] == [running.path.name]
    (again,) = journal.recover()  # closed without its block's end: as a killed one's
    assert again.endswith(f"dlcprof replay {state_folder / journal.RECOVERED / running.path.name}")
    assert journal.recover() == []  # once


def test_a_last_line_cut_mid_write_is_left_out_of_the_recovered_journal(
    fixture_events, state_folder: Path
) -> None:
    """The machine went down mid-write: the events before the cut replay, the
    runs ended after them; a journal of a cut line alone held no event."""
    events = fixture_events("pointwise_chain")[:40]
    left = _left(state_folder, events, 4242)
    with open(left, "ab") as f:
        f.write(ev.encode(events[-1])[:25])
    cut_alone = _left(state_folder, [], 4343)
    cut_alone.write_bytes(ev.encode(events[0])[:25])
    (line,) = journal.recover()
    kept = state_folder / journal.RECOVERED / left.name
    assert line.endswith(f"dlcprof replay {kept}") and not cut_alone.exists()
    session = load_session(kept)
    assert session.events[:40] == events
    (run,) = session.runs.values()
    assert run.status == "cancelled"


def test_no_journal_where_none_can_be_written_and_the_session_goes_on(
    fixture_events, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "a file").write_text("")
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "a file"))
    session = Session()
    said: list[str] = []
    with journal.journaled(session, said.append):
        assert session.journal is None
        session.apply(fixture_events("pointwise_chain")[0])
    (line,) = said
    assert line.startswith("dlcprof: no journal of this session (")
    assert len(session.events) == 1


def test_a_full_disk_stops_the_journal_not_the_session(fixture_events, state_folder) -> None:
    events = fixture_events("pointwise_chain")
    session = Session()
    full = journal.Journal(Path("/dev/full"), open("/dev/full", "ab", buffering=0))
    session.journal = full
    for e in events[:5]:
        session.apply(e)
    assert len(session.events) == 5
    assert full.lost.startswith("the journal stopped at ")
    assert full.lost.endswith("No space left on device")
