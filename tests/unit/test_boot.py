"""The boot of an attached program, split (figures/boot.py), over a recorded
real attached run (tests/fixtures/programs/attached_train.jsonl,
tests/programs/train.py under dlcprof: three graphs, forward and backward,
each compiled twice)."""

from __future__ import annotations

import dataclasses

import pytest

from dlcprof import events as ev
from dlcprof.figures import boot as fboot
from dlcprof.report import model as rm
from dlcprof.report.markdown import render_markdown
from dlcprof.report.schema import build_report
from dlcprof.session import Session

FIXTURE = "programs/attached_train"
COMPILE_PIECES = ("Dynamo", "AOTAutograd", "Inductor", "kernel builds and cache loads")


def _session(events: list[ev.Event]) -> Session:
    return Session.from_events(events)


def _boot(s: Session) -> fboot.Boot:
    (run,) = (r for r in s.runs.values() if r.process is not None)
    b = fboot.boot(s, run)
    assert b is not None
    return b


def _pieces(span: fboot.Span) -> dict[str, float | None]:
    return {p.label: p.seconds for p in span.pieces}


def test_the_split_adds_up_to_the_time_to_the_first_compiled_call(fixture_events) -> None:
    s = _session(fixture_events(FIXTURE))
    run = next(iter(s.runs.values()))
    g = run.graph_calls.graphs["0/0"]  # the first graph called
    measured = g["first_t"] + g["first_s"] - s.program.t
    b = _boot(s)
    assert b.start == "when the program started"
    assert b.first.seconds == pytest.approx(measured)
    known = [v for v in _pieces(b.first).values() if v is not None]
    assert sum(known) == pytest.approx(measured)
    # Before the first call ran, the one compile 0/0 (torch's wall, less the few
    # ms of the outer phase torch leaves out of it), its run, and the rest.
    compile_s = sum(_pieces(b.first)[k] or 0.0 for k in COMPILE_PIECES)
    assert compile_s == pytest.approx(run.compiles["0/0"].wall_s, abs=0.02)
    assert _pieces(b.first)["first runs"] == pytest.approx(g["first_s"], abs=1e-6)
    # Recorded before dlcprof timed the import: said, and its seconds in between.
    assert _pieces(b.first)["import torch"] is None
    assert _pieces(b.first)["between"] > 0


def test_steady_state_is_every_graph_compiled_and_run_once(fixture_events) -> None:
    s = _session(fixture_events(FIXTURE))
    run = next(iter(s.runs.values()))
    graphs = run.graph_calls.graphs.values()
    end = max(g["first_t"] + g["first_s"] for g in graphs)
    b = _boot(s)
    assert b.steady.seconds == pytest.approx(end - s.program.t)
    assert sum(v for v in _pieces(b.steady).values() if v is not None) == pytest.approx(
        b.steady.seconds
    )
    assert _pieces(b.steady)["first runs"] == pytest.approx(
        sum(g["first_s"] for g in graphs), abs=1e-6
    )
    # Every compile of the process lies inside: their compiling-thread phases,
    # counted once each instant, cover at least torch's wall of each.
    compile_s = sum(
        _pieces(b.steady)[k] or 0.0 for k in fboot.STAGE_WORDS.values() if k in _pieces(b.steady)
    )
    assert compile_s >= run.compile_wall_s - 0.05


def test_a_timed_import_is_its_own_piece(fixture_events) -> None:
    events = fixture_events(FIXTURE)
    program = next(e for e in events if isinstance(e, ev.ProgramStarted))
    loaded = program.t + 2.5
    events = [
        dataclasses.replace(e, torch_loaded_t=loaded) if isinstance(e, ev.ProcessAttached) else e
        for e in events
    ]
    b = _boot(_session(events))
    pieces = _pieces(b.first)
    assert pieces["import torch"] == pytest.approx(2.5)
    assert sum(pieces.values()) == pytest.approx(b.first.seconds)


def test_what_the_hits_saved_is_torchs_account_or_why_not(fixture_events) -> None:
    events = fixture_events(FIXTURE)
    b = _boot(_session(events))
    assert b.saved_s is None and b.saved_why == fboot.NO_LOOKUPS
    hits = [
        ev.CacheLookedUp(run_id="pid25692", compile_id=cid, layer=layer, state="hit", saved_s=3.0)
        for cid in ("0/0", "1/0")
        for layer in ("aotautograd", "fx_graph")
    ]
    # The AOTAutograd entry holds its FX graphs: each compile's hit counts once.
    assert _boot(_session(events + hits)).saved_s == pytest.approx(6.0)
    miss = dataclasses.replace(hits[0], state="miss", saved_s=None)
    missed = _boot(_session(events + [miss]))
    assert missed.saved_s == 0.0
    assert (
        missed.lines[-1]
        == "  what a warm cache saved, as torch counts its hits: nothing (no lookup hit)"
    )


def test_the_boot_is_in_the_reports(fixture_events) -> None:
    model = rm.build(_session(fixture_events(FIXTURE)))
    (proc,) = build_report(model)["program"]["processes"]
    boot = proc["boot"]
    assert boot["first"]["seconds"] == pytest.approx(
        sum(p["seconds"] or 0.0 for p in boot["first"]["pieces"])
    )
    (imported,) = (p for p in boot["first"]["pieces"] if p["label"] == "import torch")
    assert imported["seconds"] is None and imported["why"] == fboot.NO_IMPORT_TIME
    assert boot["saved_why"] == fboot.NO_LOOKUPS
    md = render_markdown(model)
    assert "boot, timed from when the program started:" in md


def test_without_phases_the_compiles_are_one_piece_and_the_stages_say_why(fixture_events) -> None:
    events = [
        e for e in fixture_events(FIXTURE) if not isinstance(e, ev.PhaseStarted | ev.PhaseEnded)
    ]
    s = _session(events)
    b = _boot(s)
    pieces = _pieces(b.first)
    assert all(pieces[k] is None for k in COMPILE_PIECES)
    assert next(p.why for p in b.first.pieces if p.label == "Dynamo") == fboot.NO_PHASES
    run = next(iter(s.runs.values()))
    assert pieces[fboot.UNPHASED] == pytest.approx(run.compiles["0/0"].wall_s, abs=1e-6)
    assert sum(v for v in pieces.values() if v is not None) == pytest.approx(b.first.seconds)


def test_a_child_process_is_timed_from_the_kernels_start(fixture_events) -> None:
    events = [
        dataclasses.replace(e, pid=e.pid + 1) if isinstance(e, ev.ProcessAttached) else e
        for e in fixture_events(FIXTURE)
    ]
    s = _session(events)
    run = next(iter(s.runs.values()))
    g = run.graph_calls.graphs["0/0"]
    b = _boot(s)
    assert b.start == fboot.KERNEL_START
    assert b.first.seconds == pytest.approx(g["first_t"] + g["first_s"] - run.process.started_t)
    # A kernel clock set since boot can put the start after torch's import: said.
    early = run.process.started_t - 1.0
    events = [
        dataclasses.replace(e, torch_loaded_t=early) if isinstance(e, ev.ProcessAttached) else e
        for e in events
    ]
    (import_piece, *_) = _boot(_session(events)).first.pieces
    assert (import_piece.seconds, import_piece.why) == (None, fboot.IMPORT_BEFORE)


def test_runs_of_one_process_have_no_boot_of_their_own(fixture_events) -> None:
    """The pytest plugin: each test a run of the one pytest process."""
    events = fixture_events(FIXTURE)
    (hello,) = (e for e in events if isinstance(e, ev.ProcessAttached))
    s = _session([*events, dataclasses.replace(hello, run_id="test_b")])
    assert all(fboot.boot(s, r) is None for r in s.runs.values())
    assert fboot.boot_lines(s) == [fboot.SHARED]
