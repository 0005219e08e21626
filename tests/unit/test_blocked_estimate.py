"""The Ranks table's blocked column for a rank that waited on a peer's solo
recompile (issue 29 item 12): an estimate from the peer's compile spans and the
step the waiting rank then made, worded once (figures/job/ranks.py) for the
table, its notes, the report and the job advice; n/a with the exact missing
event otherwise. It used to read n/a ("not measured") on every rank.

Real data: tests/fixtures/programs/ddp_odd_batch.jsonl, a 2-rank gloo job whose
rank 1 recompiled alone on a partial last batch while rank 0 waited."""

from __future__ import annotations

import dataclasses

import pytest
from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof import events as ev
from dlcprof.figures.advice import job_rules
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import ranks as fr
from dlcprof.figures.job.blocked import BLOCKED_WHY
from dlcprof.report.ranks import ranks_section
from dlcprof.session import Session
from dlcprof.tables import rank_table

FIXTURE = "programs/ddp_odd_batch"
WAITER, PEER = "pid28902", "pid28903"  # rank 0, rank 1


def _events() -> list[ev.Event]:
    return load_fixture(FIXTURE)


def _rows(session: Session) -> dict[int, fr.RankRow]:
    return {r.rank: r for r in fr.rank_rows(session, fdiv.divergences(session))}


def _solo_s(session: Session) -> float:
    """torch's wall time of rank 1's compiles rank 0 never made (0/1, 4/1 and
    4/1's backward): rank 0 compiled nothing meanwhile, so all of it was wait."""
    peer, waiter = session.runs[PEER], session.runs[WAITER]
    return sum(peer.compiles[c].wall_s or 0.0 for c in set(peer.compiles) - set(waiter.compiles))


def test_the_waiting_rank_gets_an_estimate_with_how_it_was_made():
    session = Session.from_events(_events())
    rows = _rows(session)
    solo = _solo_s(session)
    assert solo == pytest.approx(0.104064 + 2.324366 + 3.404843)
    assert rows[0].blocked_s == pytest.approx(solo, abs=1e-3)
    assert fr.row_cells(rows[0])[fr.COLUMNS.index("blocked")] == "≈5.83 s"
    assert rows[0].blocked_why == (
        "rank 1's solo recompiles 4/1 + its backward and 0/1, while rank 0 compiled "
        "nothing and its call 2 of frame 4 waited at that step's collective"
    )
    # The rank that recompiled is not the one that waited.
    assert rows[1].blocked_s is None
    assert rows[1].blocked_why == "rank 1 recompiled alone: the others waited on it"
    notes = fr.notes(session, list(rows.values()))
    said = f"blocked, rank 0: ≈5.83 s, estimated: {rows[0].blocked_why}"
    assert said in notes
    assert "blocked, rank 1: n/a (rank 1 recompiled alone: the others waited on it)" in notes


def test_table_report_and_advice_say_the_same_estimate():
    session = Session.from_events(_events())
    said = fr.blocked_words(_rows(session)[0].blocked_s, _rows(session)[0].blocked_why)
    console = Console(width=400, record=True)
    console.print(rank_table(session))
    shown = console.export_text()
    assert "≈5.83 s" in shown and " ".join(said.split()) in " ".join(shown.split())
    section = ranks_section(session)
    assert section is not None and f"blocked, rank 0: {said}" in section.notes
    advice = job_rules.solo_recompiles(session, session.runs[PEER], 0)
    assert advice is not None
    waited = [e for e in advice.evidence if e.startswith("rank 0 waited for it")]
    # Recorded before the wrappers were read: no wrapper's collective is named.
    assert waited == [f"rank 0 waited for it at the next collective: {said}"]
    # Issue 41, 6: the collective as the waiting rank's wrapper makes it.
    for wrapper, named in (
        ("DDP", "DDP's gradient all-reduce"),
        ("FSDP2", "FSDP2's gradient reduce-scatter"),
    ):
        session.apply(
            ev.CompileSettingsRead(
                run_id=WAITER,
                optimize_ddp="ddp_optimizer",
                compiled_autograd=False,
                wrappers=[wrapper],
            )
        )
        advice = job_rules.solo_recompiles(session, session.runs[PEER], 0)
        assert f"rank 0 waited for it at the next collective ({named}): {said}" in advice.evidence
    # The divergence the banner heads (the user's 4/1, listed first) says it once.
    found = fdiv.divergences(session)
    assert found[0].subject == "4/1" and found[0].evidence[-1] == f"rank 0 blocked: {said}"
    assert sum(f"rank 0 blocked: {said}" in d.evidence for d in found) == 1


def _without(drop) -> Session:
    return Session.from_events([e for e in _events() if not drop(e)])


def test_no_estimate_without_the_peers_backward_record():
    s = _without(
        lambda e: (
            isinstance(e, ev.CompileFinished)
            and e.run_id == PEER
            and e.compile_id == ev.backward_id("4/1")
        )
    )
    row = _rows(s)[0]
    assert row.blocked_s is None
    assert row.blocked_why == (
        "rank 1's backward of its solo recompile 4/1 has no compile record (its process or log "
        "ended during it): its span is not known"
    )
    # The advice falls back to the bound, with the same why.
    advice = job_rules.solo_recompiles(s, s.runs[PEER], 0)
    assert advice is not None
    assert any("up to" in e and "no compile record" in e for e in advice.evidence)


def test_no_estimate_without_the_waiting_ranks_graph_calls():
    s = _without(lambda e: isinstance(e, ev.GraphCallsTimed) and e.run_id == WAITER)
    row = _rows(s)[0]
    assert row.blocked_s is None
    assert row.blocked_why == (
        "rank 0's graph calls were not timed (its process sent none at its end): not known "
        "that rank 0 reached the step rank 1's recompile 4/1 served"
    )


def test_no_estimate_when_the_waiting_rank_never_made_that_step():
    """Hand-built: rank 0's last graph-call count edited to one call of frame 4
    (it stopped before the step rank 1's 4/1 served)."""

    def one_call(e: ev.Event) -> ev.Event:
        if isinstance(e, ev.GraphCallsTimed) and e.run_id == WAITER:
            graphs = {k: dict(v, calls=1) for k, v in e.graphs.items()}
            return dataclasses.replace(e, graphs=graphs)
        return e

    s = Session.from_events([one_call(e) for e in _events()])
    row = _rows(s)[0]
    assert row.blocked_s is None
    assert row.blocked_why == (
        "rank 0 made 1 calls of frame 4, rank 1 1 before its recompile 4/1: no step of rank "
        "0's matched it, so no collective of its is seen waiting on it"
    )


def test_a_job_without_a_solo_recompile_keeps_the_one_reason():
    """Rank 1's recompiles dropped: no peer recompiled alone, no wait to
    estimate; the table says why once."""
    s = _without(
        lambda e: (
            getattr(e, "run_id", None) == PEER
            and getattr(e, "compile_id", "").split(" ")[0] in ("0/1", "4/1")
        )
    )
    rows = list(_rows(s).values())
    assert all(r.blocked_s is None and r.blocked_why == BLOCKED_WHY for r in rows)
    assert fr.blocked_notes(rows) == [f"blocked: n/a ({BLOCKED_WHY})"]
