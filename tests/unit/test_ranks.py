"""Many ranks (issue 22): the Ranks table and the divergence checks of
figures/job/ranks.py and figures/job/divergence.py on hand-built events (each
check's logic); the real jobs are in tests/e2e/test_torchrun.py."""

from __future__ import annotations

import json

import pytest
from helpers.program import (
    ddp_job,
    program_started,
    rank_compile,
    rank_finished,
    rank_kernel,
)
from rich.console import Console

from dlcprof import events as ev
from dlcprof.console import DivergenceWatch, program_summary
from dlcprof.figures import compare as fcmp
from dlcprof.figures import outcome as fout
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import ranks as fr
from dlcprof.figures.job.rank_runs import rank_runs
from dlcprof.report import model as rm
from dlcprof.report.html import render_compare_html, render_html
from dlcprof.report.load import load_session
from dlcprof.report.markdown import render_markdown
from dlcprof.report.schema import build_report, dumps_report
from dlcprof.session import Session
from dlcprof.tables import compare_table

RECOMPILE = "0/0: tensor 'x' size mismatch at index 0. expected 4, actual 6"


def session(*events: ev.Event) -> Session:
    return Session.from_events(list(events))


def diverged(finished: bool = True) -> Session:
    """Rank 1 alone recompiles 0/0 as 0/1 (its batch changed) at t=1015."""
    s = session(*ddp_job(finished=False))
    for e in [
        ev.RecompileTriggered(run_id="pid101", compile_id="0/1", reason=RECOMPILE, t=1015.0),
        rank_kernel(1, "0/1", "cpp_fused_gelu_0", 0),
        rank_compile(1, "0/1", 1015.0, 5.0, reason=RECOMPILE),
    ]:
        s.apply(e)
    if finished:
        for r in (0, 1):
            s.apply(rank_finished(r, 1030.0))
    return s


def test_a_clean_job_has_no_divergence_live_or_ended():
    live = session(*ddp_job(finished=False))
    assert fdiv.divergences(live, now=1100.0) == []
    ended = session(*ddp_job())
    assert fdiv.divergences(ended) == []
    assert fdiv.summary([], 2).startswith("divergence checks: the 2 ranks agree")


def test_no_ranks_or_one_rank_no_divergence():
    rankless = session(*program_started(), rank_compile(0, "0/0", 1002.0, 1.0))
    assert rank_runs(rankless) == [] and fdiv.divergences(rankless) == []
    one = session(*ddp_job(ranks=1))
    assert len(fr.rank_rows(one, [])) == 1 and fdiv.divergences(one) == []


def test_a_rank_that_sent_nothing_is_said_once_the_program_ended():
    s = session(*ddp_job(ranks=1))
    s.runs["pid100"].process.world_size = 3
    assert fr.silent_ranks(s) == []  # live: it may compile yet
    s.apply(ev.ProgramExited(returncode=0, signal=None, wall_s=30.0, message="exit 0"))
    assert fr.silent_ranks(s) == [1, 2]
    assert fr.silent_note(s) == (
        "ranks 1 and 2 of 3 sent nothing: they compiled nothing "
        "(or ran under another dlcprof, on another node)"
    )
    assert fr.silent_note(s) in fr.notes(s, fr.rank_rows(s, []))


def test_rank_rows():
    s = diverged()
    rows = fr.rank_rows(s, fdiv.divergences(s))
    assert [(r.rank, r.run_id, r.pid, r.status) for r in rows] == [
        (0, "pid100", 100, "ok"),
        (1, "pid101", 101, "ok"),
    ]
    r0, r1 = rows
    assert (r0.compiles, r0.recompiles, r0.graphs, r0.cache_misses) == (1, 0, 2, 1)
    assert (r1.compiles, r1.recompiles, r1.graphs, r1.cache_misses) == (2, 1, 3, 2)
    assert r1.compile_s == pytest.approx(11.0)
    # No graph calls timed: no estimate of rank 0's wait on rank 1, and the why
    # (tests/unit/test_blocked_estimate.py).
    assert r0.blocked_s is None and "its process sent none at its end" in (r0.blocked_why or "")
    assert fr.row_cells(r1)[fr.COLUMNS.index("blocked")] == "n/a"


def test_compile_ids_names_the_rank_the_frame_and_the_guard():
    found = [d for d in fdiv.divergences(diverged()) if d.check == "compile_ids"]
    assert len(found) == 1
    d = found[0]
    assert d.rank == 1 and d.alarm and d.subject == "0/1"
    assert d.headline == (
        "rank 1 recompiled 0/1, forward at /home/u/train.py:24 (the others did not): " + RECOMPILE
    )
    assert "rank 0: frame 0 compiled as 0/0" in d.evidence
    assert "rank 1: frame 0 compiled as 0/0, 0/1" in d.evidence


def test_compile_ids_live_waits_until_the_others_are_past_it():
    s = diverged(finished=False)  # rank 1's 0/1 ended at 1020
    assert not [d for d in fdiv.divergences(s, now=1021.0) if d.check == "compile_ids"]
    assert not [d for d in fdiv.divergences(s) if d.check == "compile_ids"]  # no clock
    # Rank 0 compiling the same frame now: late, not divergent (the skew check's).
    s.apply(ev.PhaseStarted(run_id="pid100", compile_id="0/1", name="dynamo", thread=1, t=1030))
    assert not [d for d in fdiv.divergences(s, now=1040.0) if d.check == "compile_ids"]
    s.apply(
        ev.PhaseEnded(
            run_id="pid100",
            compile_id="0/1",
            name="dynamo",
            thread=1,
            start_t=1030,
            duration_s=0.1,
            t=1030.1,
        )
    )
    assert [d.rank for d in fdiv.divergences(s, now=1040.0) if d.check == "compile_ids"] == [1]


def test_compile_ids_a_rank_that_did_not_compile_a_frame_the_others_did():
    s = session(*ddp_job(ranks=3, finished=False))
    for r in (0, 2):
        s.apply(rank_compile(r, "1/0", 1010.0, 1.0, frame=("step", "/home/u/train.py", 40)))
    for r in range(3):
        s.apply(rank_finished(r, 1030.0))
    (d,) = [d for d in fdiv.divergences(s) if d.check == "compile_ids"]
    assert d.rank == 1
    assert d.headline == (
        "rank 1 did not compile 1/0, step at /home/u/train.py:40 (the others did)"
    )


def test_graph_counts_per_compile_and_in_total():
    split = session(
        *ddp_job(finished=False),
        rank_kernel(1, "0/0", "cpp_fused_piece_1", 0),  # a third graph: another DDP piece
        rank_finished(0, 1030.0),
        rank_finished(1, 1030.0),
    )
    (d,) = fdiv.divergences(split)
    assert (d.check, d.rank, d.subject) == ("graph_counts", 1, "0/0")
    assert d.headline == "rank 1 made 3 Inductor graphs of 0/0, the others 2"
    # Judged once the ranks ended: a backward comes later than its forward.
    live = session(*ddp_job(finished=False), rank_kernel(1, "0/0", "cpp_fused_piece_1", 0))
    assert fdiv.divergences(live, now=2000.0) == []
    total = [d for d in fdiv.divergences(diverged()) if d.check == "graph_counts"]
    assert [d.headline for d in total] == ["rank 1 ends with 3 Inductor graphs, the others with 2"]


def _cache_job(**attached) -> Session:
    s = session(*ddp_job(finished=False, **attached))
    s.apply(rank_compile(0, "1/0", 1010.0, 1.0, cache="miss"))
    s.apply(rank_compile(1, "1/0", 1010.0, 0.2, cache="hit"))
    return s


def test_cache_differs_on_a_shared_folder_is_a_note():
    (d,) = fdiv.divergences(_cache_job())
    assert (d.check, d.rank, d.alarm) == ("cache", 1, False)
    assert fdiv.SHARED_CACHE in d.headline and "/tmp/cache" in d.headline
    assert d.headline.startswith("rank 1 had a cache hit on 1/0 where rank 0 had a miss")
    assert d.evidence == ["rank 0: 0/0 miss, 1/0 miss", "rank 1: 0/0 miss, 1/0 hit"]


def test_cache_differs_on_separate_folders_or_hosts_is_an_alarm():
    s = _cache_job()
    assert s.runs["pid101"].process is not None
    s.runs["pid101"].process.cache_dir = "/scratch/rank1"
    (d,) = fdiv.divergences(s)
    assert d.alarm and "separate caches" in d.headline
    s.runs["pid101"].process.host = "node2"
    s.runs["pid101"].process.cache_dir = "/tmp/cache"
    assert fdiv.divergences(s)[0].alarm
    unknown = _cache_job(cache_dir=None)  # a session recorded before the folder was sent
    assert not fdiv.divergences(unknown)[0].alarm


def _collectives(ops: dict[int, list[str]]) -> Session:
    s = session(*ddp_job(finished=False))
    for rank, names in ops.items():
        for i, op in enumerate(names, 1):
            s.apply(rank_kernel(rank, "0/0", f"torch.ops._c10d_functional.{op}.default", i))
    return s


def test_collectives_differ():
    s = _collectives(
        {0: ["all_reduce_", "wait_tensor"], 1: ["all_gather_into_tensor", "wait_tensor"]}
    )
    (d,) = fdiv.divergences(s, now=1030.0)
    assert (d.check, d.rank, d.subject) == ("collectives", 1, "0/0 forward")
    assert "call 1: _c10d_functional.all_gather_into_tensor vs _c10d_functional.all_reduce_" in (
        d.headline
    )
    assert d.evidence[0] == "rank 0: _c10d_functional.all_reduce_, _c10d_functional.wait_tensor"


def test_collectives_alike_or_none_are_said():
    same = _collectives({r: ["all_reduce_", "wait_tensor"] for r in (0, 1)})
    assert fdiv.divergences(same, now=1030.0) == []
    assert fr.collectives_line(same) == (
        "collectives in the compiled graphs: _c10d_functional.all_reduce_ ×2, "
        "_c10d_functional.wait_tensor ×2"
    )
    none = session(*ddp_job())
    assert fr.collectives_line(none).startswith(
        "collectives: no collectives in the compiled graphs"
    )


def test_without_the_kernels_probe_graphs_and_collectives_are_not_judged():
    s = _collectives({0: ["all_reduce_"], 1: []})
    s.apply(ev.ProbeUnavailable(run_id="pid101", probe="kernels", reason="no aten ops"))
    for r in (0, 1):
        s.apply(rank_finished(r, 1030.0))
    assert fdiv.divergences(s) == []
    assert fr.collectives_line(s) == "collectives: n/a (no aten ops)"


def test_compile_skew_finished_and_still_compiling():
    s = session(*ddp_job(finished=False))
    s.apply(rank_compile(0, "1/0", 1010.0, 2.0))
    s.apply(ev.PhaseStarted(run_id="pid101", compile_id="1/0", name="dynamo", thread=1, t=1010))
    # Still compiling, within the threshold: nothing yet.
    assert fdiv.divergences(s, now=1012.0 + fdiv.SKEW_S - 1) == []
    (late,) = fdiv.divergences(s, now=1040.0)
    assert (late.check, late.rank, late.subject) == ("compile_skew", 1, "1/0")
    assert late.headline.startswith("rank 1 is still compiling 1/0, 28.00 s after rank 0")
    s.apply(rank_compile(1, "1/0", 1010.0, 29.0))
    (done,) = [d for d in fdiv.divergences(s, now=1041.0) if d.check == "compile_skew"]
    assert done.key == late.key  # the same finding, said once live
    assert done.headline == (
        "rank 1 finished compiling 1/0 27.00 s after rank 0 (more than 10.00 s): the others "
        "wait in the next collective; NCCL's default timeout is 10 min"
    )


def test_the_users_frame_comes_before_torchs_wrapper_around_it():
    """A DDP rank that changed its batch recompiles torch's wrapper frame first
    and the user's forward inside it: the banner names the user's frame."""
    s = session(*ddp_job(finished=False))
    wrapper = ("inner", "/venv/lib/python3.11/site-packages/torch/_dynamo/external_utils.py", 67)
    s.apply(rank_compile(1, "1/1", 1010.0, 2.0, reason="1/0: args[0] size", frame=wrapper))
    s.apply(rank_compile(1, "0/1", 1011.0, 2.0, reason=RECOMPILE))
    first, second = fdiv.alarms(fdiv.divergences(s, now=1030.0))
    assert first.subject == "0/1" and "forward at /home/u/train.py:24" in first.headline
    assert second.subject == "1/1" and second.in_torch and "torch/_dynamo" in second.headline


def test_crash_names_the_first_failure_and_the_others_fate():
    s = session(
        *ddp_job(finished=False),
        ev.ErrorRaised(
            run_id="pid101", stage="program", message="RuntimeError: rank 1 crashed", t=1020.0
        ),
        rank_finished(1, 1020.0, status="error"),
    )
    (d,) = fdiv.divergences(s, now=1021.0)
    assert d.headline == "rank 1 failed (RuntimeError: rank 1 crashed); rank 0: runs on"
    s.apply(ev.ProgramExited(returncode=1, signal=None, wall_s=25.0, message="exit 1", t=1025.0))
    (d,) = fdiv.divergences(s)
    assert d.headline == (
        "rank 1 failed (RuntimeError: rank 1 crashed); "
        "rank 0: killed 5.00 s later (ended without its exit hook)"
    )
    # Every rank failing alike (the same bug on each) is no divergence.
    same = session(*ddp_job(finished=False))
    for r in (0, 1):
        same.apply(ev.ErrorRaised(run_id=f"pid{100 + r}", stage="program", message="E: bug"))
        same.apply(rank_finished(r, 1020.0, status="error"))
    assert fdiv.divergences(same) == []


def test_a_rank_that_fails_after_a_stop_was_passed_on_is_no_divergence():
    """Ctrl-C reaches the ranks one by one: the one still in an allreduce fails
    on its peer's closed connection. The stop caused it, so it raises no alarm,
    and its end line says so; a failure before the stop still does."""
    s = session(*ddp_job(finished=False))
    s.apply(rank_finished(0, 1021.0, status="cancelled"))
    s.apply(ev.ErrorRaised(run_id="pid101", stage="program", message="RuntimeError: peer gone"))
    s.apply(rank_finished(1, 1021.5, status="crashed"))
    stop = ev.ProgramExited(
        returncode=1, signal=None, wall_s=25.0, message="exit 1", stopped_by="Ctrl-C", t=1025.0
    )
    (d,) = fdiv.divergences(session(*s.events, stop))  # no stop time: a crash like any other
    assert d.check == "crash" and d.rank == 1
    stop.stopped_t = 1020.0
    stopped = session(*s.events, stop)
    assert fdiv.divergences(stopped) == []
    crashed = stopped.runs["pid101"]
    assert (
        fout.end_line(crashed, stopped)
        == "crashed after dlcprof passed on Ctrl-C: RuntimeError: peer gone"
    )
    stop.stopped_t = 1021.8  # rank 1 had failed before the stop
    assert [d.rank for d in fdiv.divergences(session(*s.events, stop))] == [1]


def test_reports_and_the_load_path(tmp_path):
    s = diverged()
    model = rm.build(s)
    report = build_report(model)
    ranks = report["ranks"]
    assert [row["rank"] for row in ranks["rows"]] == [0, 1]
    assert ranks["rows"][1]["recompiles"] == 1 and ranks["rows"][1]["cache_dir"] == "/tmp/cache"
    checks = [(d["check"], d["rank"], d["alarm"]) for d in ranks["divergences"]]
    assert checks == [("compile_ids", 1, True), ("graph_counts", 1, True)]
    assert "divergences" not in json.dumps({k: v for k, v in report.items() if k != "ranks"})
    path = tmp_path / "session.json"
    path.write_text(dumps_report(report))
    replayed = load_session(path)
    assert [d.headline for d in fdiv.divergences(replayed)] == [
        d.headline for d in fdiv.divergences(s)
    ]
    md = render_markdown(model)
    assert "## Ranks" in md and "**rank 1 recompiled 0/1" in md
    html = render_html(model)
    assert 'id="ranks"' in html and "the others did not" in html
    # A session without ranks has no ranks key (its reports stay as they were).
    assert "ranks" not in build_report(rm.build(session(*program_started())))


def test_console_says_each_divergence_once_then_the_table():
    s = diverged(finished=False)
    watch = DivergenceWatch(every_s=0.0)
    first = [str(t) for t in watch.lines(s, 1100.0)]
    assert len(first) == 1 and first[0].startswith("⚠ rank 1 recompiled 0/1")
    assert watch.lines(s, 1101.0) == []
    # Throttled between checks, but never past an event that can settle one.
    slow = DivergenceWatch(every_s=60.0)
    assert slow.lines(session(*ddp_job(finished=False)), 1100.0) == []
    ended = rank_finished(0, 1101.0)
    s.apply(ended)
    assert slow.lines(s, 1101.0) == [] and slow.lines(s, 1101.0, ended) != []
    console = Console(record=True, width=200)
    console.print(program_summary(diverged()))
    out = console.export_text()
    assert "Ranks" in out and "divergence checks: 2 divergences among 2 ranks" in out


def test_compare_lists_each_sides_divergences():
    cmp = fcmp.compare(diverged(), session(*ddp_job()))
    assert [(r.side, len(r.divergences)) for r in cmp.ranks] == [("A", 2), ("B", 0)]
    console = Console(record=True, width=200)
    console.print(compare_table(cmp))
    assert "⚠ rank 1 recompiled 0/1" in console.export_text()
    assert "rank 1 recompiled 0/1" in render_compare_html(cmp)


def test_every_ranks_breaks_group_by_torchs_id():
    """A recorded 2-rank DDP job: each rank hit the same two kinds of break,
    grouped across the ranks in the report's Ranks section."""
    from helpers.recorded import load_fixture

    from dlcprof.report.markdown import render_markdown
    from dlcprof.report.model import build
    from dlcprof.report.ranks import ranks_section
    from dlcprof.session import Session

    s = Session.from_events(load_fixture("programs/ddp_odd_batch"))
    section = ranks_section(s)
    assert section is not None
    kinds = [(k.gb_id, k.frames, len(k.lines)) for k in section.break_kinds]
    assert kinds == [("GB0007", 4, 1), ("GB0156", 3, 1)]
    assert "Graph breaks by kind, all ranks: GB0007 × 4 at 1 line" in render_markdown(build(s))
