"""The probes' work is kept out of the program's garbage-collector schedule
(dlcprof/worker/paused_gc.py): no collection starts inside it, and the
program's own setting is what it finds afterwards."""

from __future__ import annotations

import gc

import pytest

from dlcprof.worker.paused_gc import paused_gc


@pytest.fixture
def collections():
    started: list[int] = []

    def note(phase, info):
        if phase == "start":
            started.append(info["generation"])

    gc.callbacks.append(note)
    yield started
    gc.callbacks.remove(note)


def _allocate() -> None:
    """Far more container objects than the youngest generation's threshold,
    kept alive together for a moment, as an AST of a graph's wrapper is."""
    nodes = [[i] for i in range(50 * gc.get_threshold()[0])]
    del nodes


def test_allocations_inside_start_no_collection(collections):
    assert gc.isenabled()
    _allocate()
    assert collections, "the allocation pattern does not trigger the collector here"
    collections.clear()
    with paused_gc():
        _allocate()
    assert collections == []
    assert gc.isenabled()


def test_a_program_that_switched_the_collector_off_keeps_it_off():
    gc.disable()
    try:
        with paused_gc():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_an_exception_inside_still_switches_it_back_on():
    with pytest.raises(ValueError), paused_gc():
        raise ValueError
    assert gc.isenabled()
