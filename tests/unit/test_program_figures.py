"""figures/job/program.py on a session folded from events (our own logic: the
events are made here, as the attached probe and dlcprof's side send them)."""

from __future__ import annotations

import io

from helpers.program import program_session, program_started

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures.job import program as fprog
from dlcprof.session import Session


def test_timeline_share_and_first_wait():
    s = program_session()
    t = fprog.main_timeline(s)
    assert t is not None
    assert t.compile_s == 40.0 and t.wall_s == 200.0 and t.share == 0.2
    assert t.first_wait_s == 30.0  # 0/1 began after the first compiled call
    assert t.line == "compiles took 40.00 s of this 3 min 20 s run, 20%"
    assert t.first_wait_line == "the first compiled call waited 30.00 s for compiles"
    assert s.runs["pid7"].name == "train.py (pid 7, rank 1)"


def test_graph_life_amortizes_the_compile_over_calls():
    (life,) = fprog.graph_lives(program_session().runs["pid7"])
    assert life.per_call_s == 0.002 and life.amortized_s == 0.025
    assert life.line == (
        "[0/0] 1,200 calls, 2 ms per call inside the compiled code; compile "
        "30.00 s amortized over 1,200 calls: 25 ms each"
    )


def test_live_program_without_a_clock_says_so():
    s = program_session(exit_code=None)
    assert fprog.program_wall_s(s) is None
    assert fprog.main_timeline(s).line.endswith("n/a (still running) run, n/a (no wall time yet)")
    assert fprog.program_wall_s(s, now=1050.0) == 50.0


def test_speedup_is_na_until_an_eager_baseline_ran():
    assert fprog.speedup_line(program_session()) == (
        "speedup: n/a (attached to a program: run with --eager-baseline to time eager)"
    )
    base = fprog.eager_baseline(program_session(eager_wall=300.0))
    assert base is not None and base.ratio == 1.5
    assert "compiled finished 1.50x sooner (one run each" in base.line


def test_a_process_that_never_said_it_finished_ended_with_the_program():
    s = program_session()
    assert s.runs["pid7"].status == "ended"


def test_the_views_state_the_eager_baseline_where_the_speedup_goes():
    from rich.console import Console

    from dlcprof.console import benchmark_table
    from dlcprof.tui.widgets.benchmark import selected_table

    def shown(s: Session) -> tuple[str, str]:
        run = s.runs["pid7"]
        out = []
        for view in (benchmark_table(run, s), selected_table(run, s)):
            c = Console(width=400, record=True, file=io.StringIO())
            c.print(view)
            out.append(c.export_text())
        return out[0], out[1]

    for view in shown(program_session(eager_wall=300.0)):
        assert "compiled finished 1.50x sooner" in view and "no noise verdict" in view
        assert "--eager-baseline" not in view
    for view in shown(program_session()):
        assert "run with --eager-baseline to time eager" in view


def test_speedup_while_the_eager_baseline_runs():
    s = program_session()
    s.apply(ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=8, eager=True, t=1300.0))
    assert fprog.speedup_text(s) == "n/a (the eager baseline is running)"


def test_an_empty_pane_says_what_it_waits_for():
    hint = "no run yet: press r to compile"
    assert fprog.no_run_yet(Session(), hint) == hint  # a workload: the key that starts a run
    waiting = Session.from_events(
        [ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=7, t=1000.0)]
    )
    assert fprog.no_run_yet(waiting, hint).startswith("waiting for the program to compile")
    ended = ev.ProgramExited(returncode=0, signal=None, wall_s=1.0, message="exited")
    waiting.apply(ended)
    assert fprog.no_run_yet(waiting, hint) == "nothing here: no process of the program compiled"


def sampled_run(graphs: dict[str, dict[str, float]]):
    s = Session.from_events([*program_started(), ev.GraphCallsTimed(run_id="pid7", graphs=graphs)])
    return s.runs["pid7"]


def test_sampled_calls_are_left_out_of_the_time_per_call_and_their_cost_stated():
    # 10 calls: the first (10 ms), 6 more unsampled (1 ms each), 3 sampled (5 ms each).
    run = sampled_run(
        {
            "0/0": {
                "calls": 10,
                "inside_s": 0.016,
                "first_t": 1.0,
                "first_s": 0.010,
                "sampled": 3,
                "sampled_s": 0.015,
            }
        }
    )
    (life,) = fprog.graph_lives(run)
    assert life.per_call_s == 0.016 / 7 and life.steady_s == 0.001
    assert life.sampling_extra_s == 0.015 - 3 * 0.001
    assert "(3 sampled for kernel times left out: 5 ms each)" in life.line
    cost = fprog.sampling(run)
    assert (cost.calls, cost.graphs, cost.seconds) == (3, 1, 0.015)
    assert cost.line == (
        "kernel times: sampled on calls 2-4 of each graph (3 calls of 1 graph); those calls "
        "took 15 ms, 12 ms more than as many unsampled calls: the observer's cost, left out "
        "of the time per call"
    )


def test_sampling_cost_without_a_steady_call_or_any_sampled_call():
    few = {"calls": 4, "inside_s": 0.01, "first_t": 1.0, "first_s": 0.01, "sampled": 3}
    cost = fprog.sampling(sampled_run({"0/0": {**few, "sampled_s": 0.02}}))
    assert cost.extra_s is None
    assert "n/a (no unsampled call after the first to compare with) more than" in cost.line
    # An older probe's totals (no sampling fields): nothing sampled, and why.
    none = fprog.sampling(program_session().runs["pid7"])
    assert none.line == (
        "kernel times: n/a (no graph has run 4 calls yet: calls 2-4 of each graph are sampled)"
    )


def test_the_command_reads_as_typed():
    argv = ["/venv/bin/python", "/home/u/run/train.py", "--out", "/data/x", "--lr", "3"]
    assert text.command_words(argv, "/home/u/run") == "python train.py --out /data/x --lr 3"
    assert text.command_words(["torchrun", "train.py"], "") == "torchrun train.py"
