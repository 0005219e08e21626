"""The mark_dynamic prediction of an attached training program counts the
backward (issue 29 item 5): a training step compiles each graph's backward too,
and a recompile on a size brings its own backward compile, which also goes when
the dim is marked dynamic. It was left out of the base: predicted -18% where the
change measured -35%.

Real data: tests/fixtures/programs/ddp_odd_batch.jsonl, a real 2-rank training
job compiled cold (scripts/record_program_fixture.py): rank 1 recompiled its
forward (4/1) on x's dim 0, and compiled 4/1's backward after it."""

from __future__ import annotations

import pytest
from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures.advice import compile_rules as cr
from dlcprof.session import Session


def test_the_prediction_counts_the_recompiled_frames_backward_compiles():
    session = Session.from_events(load_fixture("programs/ddp_odd_batch"))
    (run,) = [r for r in session.runs.values() if r.process and r.process.rank == 1]
    walls = {cid: c.wall_s or 0.0 for cid, c in run.compiles.items()}
    first = walls["4/0"] + walls[ev.backward_id("4/0")]
    paid = walls["4/1"] + walls[ev.backward_id("4/1")]
    assert walls[ev.backward_id("4/1")] > 0.0
    item = cr.mark_dynamic_recompiles(session, run, 1000)
    assert item is not None and item.predicted is not None
    p = item.predicted
    assert p.before_s == pytest.approx(first + paid)
    # The dynamic compile adds its graph's work (the recompile's, fwd and bwd), not
    # the cold first compile's, which also did the process's one-time work.
    assert paid < first and p.after_s == pytest.approx(first + paid * (cr.DYNAMIC_PREMIUM - 1))
    assert f"{text.secs(walls[ev.backward_id('4/1')])} of it their backward" in p.how
    assert f"({text.secs(paid)}, torch's wall time of each" in p.how
