"""The stop signals' handlers, sent for real to this process: the UI's
(dlcprof/signals.py: each noted, the first decides the exit code, SIGHUP taken
by the TUI even under nohup) and an attached program's (each passed on to the
program, every time). The real runs they stop: tests/e2e/test_signals.py (the
TUI's SIGHUP under nohup) and tests/e2e/test_attach.py (SIGINT and SIGTERM
passed on); SIGHUP's are the same handlers, run end to end under ``-m slow``."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from typing import Any

import pytest

from dlcprof import signals
from dlcprof.attach.launch import Launch, forwarding_signals
from dlcprof.signals import HANGUP, Stopped, stop_on_signals

ALL = (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)


@pytest.fixture
def dispositions() -> Iterator[dict[signal.Signals, Any]]:
    """Each test starts from Python's own handlers and leaves them so."""
    before = {s: signal.getsignal(s) for s in ALL}
    yield before
    for s, handler in before.items():
        signal.signal(s, handler)


def test_each_stop_is_noted_and_the_first_decides(dispositions, monkeypatch):
    hung_up: list[bool] = []
    monkeypatch.setattr(signals, "silence_terminal", lambda: hung_up.append(True))
    first: list[Stopped] = []
    with stop_on_signals(first.append) as stops:
        for s in (signal.SIGHUP, signal.SIGTERM, signal.SIGINT):
            signal.raise_signal(s)
    assert [s.signum for s in stops] == [signal.SIGHUP, signal.SIGTERM, signal.SIGINT]
    assert [s.signum for s in first] == [signal.SIGHUP]  # on_stop once, for the first
    assert hung_up == [True]  # the terminal is gone: nothing more is written to it
    assert [s.said for s in stops] == ["SIGHUP (terminal closed)", "SIGTERM", "Ctrl-C"]
    assert stops[0].exit_code == 128 + signal.SIGHUP
    assert {s: signal.getsignal(s) for s in ALL} == dispositions


def test_an_ignored_signal_stays_ignored_unless_the_caller_takes_it(dispositions, monkeypatch):
    monkeypatch.setattr(signals, "silence_terminal", lambda: None)
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    with stop_on_signals(even_if_ignored=(HANGUP,)) as stops:
        assert signal.getsignal(signal.SIGTERM) is signal.SIG_IGN
        signal.raise_signal(signal.SIGTERM)  # ignored, as without dlcprof
        signal.raise_signal(signal.SIGHUP)  # the TUI's terminal closed: taken anyway
    assert [s.signum for s in stops] == [signal.SIGHUP]
    assert signal.getsignal(signal.SIGHUP) is signal.SIG_IGN  # nohup's, given back


class Program(Launch):
    """Stands in for an attached program's Launch (no process): what it was passed."""

    def __init__(self) -> None:  # no process: only forward is called
        self.got: list[tuple[int, str | None]] = []

    def forward(self, signum: int, said: str | None = None) -> None:
        self.got.append((signum, said))


def test_every_stop_goes_to_the_latest_program_every_time(dispositions):
    first, latest = Program(), Program()
    launched: list[Launch] = [first, latest]  # the eager baseline's runs after the compiled one
    with forwarding_signals(launched, lambda s: Stopped(s).said) as stops:
        for s in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGTERM):
            signal.raise_signal(s)
    sent = [signal.SIGTERM, signal.SIGHUP, signal.SIGINT, signal.SIGTERM]
    assert stops == sent and not first.got
    assert latest.got == [(s, Stopped(s).said) for s in sent]
    assert {s: signal.getsignal(s) for s in ALL} == dispositions


def test_a_signal_ignored_at_start_is_not_passed_on(dispositions):
    program = Program()
    signal.signal(signal.SIGHUP, signal.SIG_IGN)  # nohup: the program inherits it
    with forwarding_signals([program], lambda s: Stopped(s).said) as stops:
        signal.raise_signal(signal.SIGHUP)
        signal.raise_signal(signal.SIGTERM)
    assert stops == [signal.SIGTERM] and program.got == [(signal.SIGTERM, "SIGTERM")]
