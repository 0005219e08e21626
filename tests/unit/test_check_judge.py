"""The CI gate's judging (dlcprof/figures/check/) and its CI formats, on a
recorded real attached run (tests/fixtures/programs/attached_train.jsonl:
tests/programs/train.py, one graph break hit by two frames, three recompiles)."""

from __future__ import annotations

import argparse
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.program import compile_finished, process_attached, program_started
from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.cli.check import configured
from dlcprof.cli.parser import UsageError, check_parser
from dlcprof.figures.check import verdict as fv
from dlcprof.figures.check.baseline import FLOOR_S, pairs, regressed
from dlcprof.figures.check.budgets import Budgets
from dlcprof.figures.check.findings import CompileTime
from dlcprof.figures.check.places import relative_where, repository_root
from dlcprof.figures.job.program import skips_site
from dlcprof.report import github
from dlcprof.report.github import step_summary
from dlcprof.report.junit import junit_xml
from dlcprof.session import Session

TRAIN = "/home/user/dlcprof/tests/programs/train.py"


def session(drop: str | None = None) -> Session:
    """The recording; ``drop``: without the events of that compile id."""
    events = load_fixture("programs/attached_train")
    return Session.from_events([e for e in events if getattr(e, "compile_id", None) != drop])


def test_within_budget_passes():
    v = fv.judge_session(session(), Budgets(graph_breaks=1, recompiles=3, compiles=6))
    assert v.passed and v.violations == []
    assert fv.run_lines(v) == [
        "graph breaks 1 ≤ 1 · recompiles 3 ≤ 3 · compiles 6 ≤ 6 · compile time 71.54 s wall"
    ]
    assert fv.summary(v) == (
        "dlcprof check: passed (1 process judged on graph breaks, recompiles, compiles)"
    )


def test_over_budget_names_each_finding_at_the_users_line():
    v = fv.judge_session(session(), Budgets(graph_breaks=0, recompiles=2))
    lines = [x.line() for x in v.violations]
    assert lines[0].startswith(f"{TRAIN}:23: graph break: Data-dependent branching (hint: For ")
    assert lines[0].endswith("(graph breaks 1 > 0)")
    assert lines[1:] == [
        f"{TRAIN}:16: recompile: forward: tensor 'x' size mismatch at index 0. expected 4, "
        "actual 6 (recompiles 3 > 2)",
        f"{TRAIN}:20: recompile: shift: tensor 'x' size mismatch at index 0. expected 4, "
        "actual 6 (recompiles 3 > 2)",
        f"{TRAIN}:23: recompile: shift (resumed at line 23): tensor 'y' size mismatch "
        "at index 0. expected 4, actual 6 (recompiles 3 > 2)",
    ]
    assert fv.summary(v) == (
        "dlcprof check: FAILED, 4 violations (graph breaks: 1; recompiles: 3; 1 process judged)"
    )
    # A recording without CPU seconds is judged on wall time, and says so.
    assert v.measure == "wall" and "wall seconds" in fv.measure_line(v)


def test_unchanged_against_its_baseline_passes():
    v = fv.judge_session(session(), Budgets(), session())
    assert v.passed
    assert (
        "compile time 71.54 s wall vs 71.54 s wall in the baseline (+0%, within"
        in (fv.run_lines(v)[0])
    )


def with_cpu(s: Session, cpu_s: float) -> Session:
    """``s`` as if the compile-CPU probe had measured each of its compiles."""
    for run in s.runs.values():
        for cid in list(run.compiles):
            s.apply(ev.CompileCpuMeasured(run_id=run.run_id, compile_id=cid, cpu_s=cpu_s))
    return s


def test_each_compile_time_figure_names_the_measure_it_is_in():
    """A run with CPU seconds against a baseline without: the comparison is in
    wall seconds on both sides, the budget's figure in CPU, and the note says
    each figure's measure is its own (not "CPU seconds" above a wall figure)."""
    v = fv.judge_session(with_cpu(session(), 0.5), Budgets(compile_s=100), session())
    (line,) = fv.run_lines(v)
    assert "compile time 71.54 s wall vs 71.54 s wall in the baseline" in line
    assert "compile time 4.50 s CPU ≤ " in line
    assert v.measure == "both" and fv.measure_line(v).startswith(
        "compile time = CPU seconds where a figure says CPU, wall seconds where it says wall"
    )
    both = fv.judge_session(with_cpu(session(), 0.5), Budgets(), with_cpu(session(), 0.5))
    assert "s CPU vs " in fv.run_lines(both)[0] and both.measure == "cpu"
    assert "CPU seconds of each compile" in fv.measure_line(both)


def test_a_recompile_the_baseline_had_not_is_named_by_its_guard():
    v = fv.judge_session(session(), Budgets(), session(drop="2/1"))
    assert [(x.check, x.line()) for x in v.violations] == [
        (
            "new_recompiles",
            f"{TRAIN}:23: new recompile: shift (resumed at line 23): tensor 'y' size "
            "mismatch at index 0. expected 4, actual 6",
        )
    ]


def test_compile_time_regression_beyond_the_tolerance_and_the_floor():
    base = CompileTime(10.0, "cpu")
    assert not regressed(CompileTime(11.9, "cpu"), base, 0.2)
    assert regressed(CompileTime(13.0, "cpu"), base, 0.2)  # +30%
    assert not regressed(CompileTime(0.1 + FLOOR_S / 2, "cpu"), CompileTime(0.1, "cpu"), 0.2)


def test_github_annotations_in_githubs_syntax(tmp_path):
    v = fv.judge_session(session(), Budgets(graph_breaks=0))
    (line,) = github.annotations(v, Path("/home/user/dlcprof"))
    head = (
        "::error file=tests/programs/train.py,line=23,title=dlcprof check%3A graph breaks::"
        "graph break: Data-dependent branching (hint: For the common pattern "
    )
    assert line.startswith(head) and line.endswith(" (graph breaks 1 > 0)")
    assert "\n" not in line
    md = step_summary(v, Path("/home/user/dlcprof"))
    assert md.startswith("### dlcprof check: FAILED, 1 violation")
    assert "| `tests/programs/train.py:23` | graph breaks | graph break: Data-dependent" in md


def test_junit_one_case_per_budget_one_failure_per_violation():
    v = fv.judge_session(session(), Budgets(graph_breaks=0, recompiles=1, compiles=10))
    suite = ET.fromstring(junit_xml(v)).find("testsuite")
    cases = {c.get("name"): c.findall("failure") for c in suite.findall("testcase")}
    assert {k: len(f) for k, f in cases.items()} == {
        "graph breaks": 1,
        "recompiles": 3,
        "compiles": 0,
    }
    assert suite.get("failures") == "4" and suite.get("tests") == "3"


def test_budgets_file_fills_what_the_flags_leave(tmp_path):
    (tmp_path / "pyproject.toml").write_text(
        "[tool.dlcprof.check]\nmax-graph-breaks = 0\nmax-recompiles = 2\nbaseline = 'b.json'\n"
    )
    args = configured(
        check_parser().parse_args(["--max-graph-breaks", "3"]), tmp_path / "pyproject.toml"
    )
    assert (args.max_graph_breaks, args.max_recompiles) == (3, 2)
    assert args.baseline == tmp_path / "b.json"
    (tmp_path / "pyproject.toml").write_text("[tool.dlcprof.check]\nmax-breaks = 0\n")
    with pytest.raises(UsageError, match=r"has no 'max-breaks' \(one of max-graph-breaks"):
        configured(check_parser().parse_args([]), tmp_path / "pyproject.toml")
    assert configured(argparse.Namespace(), None) == argparse.Namespace()


def test_importing_the_pytest_plugin_imports_neither_torch_nor_textual():
    code = (
        "import sys, dlcprof.worker.pytest_plugin; "
        "assert not {'torch', 'textual', 'rich'} & set(sys.modules), 'imported'"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_tests_pair_by_id_and_a_new_test_has_no_baseline_run():
    base, now = Session(), Session()
    base.run("t.py::a")
    now.run("t.py::new")
    now.run("t.py::a")
    got = [(r.run_id, b.run_id if b else None) for r, b in pairs(now, base)]
    assert got == [("t.py::new", None), ("t.py::a", "t.py::a")]
    v = fv.judge_session(now, Budgets(), base)
    assert [r.unmatched for r in v.runs] == [True, False] and v.passed


@pytest.mark.parametrize(
    ("argv", "needle"),
    [
        (["check", "--max-graph-breaks", "0"], "dlcprof check runs your command: dlcprof check"),
        (["check", "--", "true"], "nothing to check: give a budget"),
        (["check", "--baseline", "/nonexistent/s.json", "--", "true"], "/nonexistent/s.json"),
        (["check", "--max-compiles", "x", "--", "true"], "invalid --max-compiles 'x'"),
        (["check", "--max-recompiles", "-1", "--", "true"], "invalid --max-recompiles '-1'"),
    ],
)
def test_bad_usage_is_one_line_exit_2_before_anything_runs(
    argv, needle, capsys, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # no pyproject.toml above: the flags alone
    assert main(argv) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.strip().splitlines()
    assert line.startswith("dlcprof: error: ") and needle in line


def test_the_measure_says_when_it_is_the_least_of_several_runs():
    v = fv.judge_session(session(), Budgets(compiles=6), repeats=3)
    assert fv.measure_line(v).endswith("; the least of 3 runs of the command")


def test_a_kind_of_break_allowed_by_its_id_is_not_counted():
    v = fv.judge_session(session(), Budgets(graph_breaks=0, allowed_breaks=("GB0170",)))
    assert v.passed and v.violations == []
    assert fv.run_lines(v)[0].startswith("graph breaks 0 ≤ 0 (1 of an allowed kind not counted)")
    # Another id allowed: the break counts, and says its id.
    v = fv.judge_session(session(), Budgets(graph_breaks=0, allowed_breaks=("GB0124",)))
    (line,) = [x.line() for x in v.violations]
    assert "Data-dependent branching" in line and "[GB0170]" in line


def test_the_markers_allow_takes_ids():
    from dlcprof.worker.pytest_plugin import _budgets

    mark = pytest.mark.compile_budget(graph_breaks=0, allow="GB0170").mark
    assert _budgets(mark) == {"graph_breaks": 0, "allowed_breaks": ("GB0170",)}
    v = fv.judge_session(session(), Budgets(**_budgets(mark)))
    assert v.passed
    with pytest.raises(pytest.UsageError, match="'print' is not a graph-break id"):
        _budgets(pytest.mark.compile_budget(allow=["GB0059", "print"]).mark)


def test_a_program_of_which_no_process_was_seen_fails_with_why():
    s = Session.from_events(
        [ev.ProgramStarted(argv=["python", "-u", "-X", "dev", "-IB", "train.py"], cwd="/", pid=7)]
    )
    v = fv.judge_session(s, Budgets(graph_breaks=0), attached=True)
    (x,) = v.violations
    assert (x.check, x.where) == ("unseen", "")
    assert x.message.startswith("dlcprof saw no compile: ") and "python -I skips" in x.message
    assert (
        fv.summary(v)
        == "dlcprof check: FAILED, 1 violation (no compile seen: 1; 0 processes judged)"
    )
    (case,) = ET.fromstring(junit_xml(v)).find("testsuite").findall("testcase")
    assert case.get("name") == "no compile seen" and case.find("failure") is not None
    # The pytest plugin judges its tests: none, nothing to say.
    assert fv.judge_session(s, Budgets(graph_breaks=0)).passed


def test_a_budgeted_test_that_compiled_nothing_fails_with_why():
    """The pytest plugin's run of a test (not attached: seen from its start)."""
    s = Session.from_events([process_attached(7)])
    (x,) = fv.judge_session(s, Budgets(graph_breaks=0, compiles=2)).violations
    assert (x.check, x.where) == ("unseen", "")
    assert x.message.startswith("dlcprof saw no compile: the test compiled nothing it could see")
    # compiles=0 asks for that very nothing; no budget, nothing to judge.
    assert fv.judge_session(s, Budgets(graph_breaks=0, compiles=0)).passed
    assert fv.judge_session(s, Budgets()).passed


def test_a_process_that_sent_no_compile_record_is_not_judged():
    s = Session.from_events(
        [
            process_attached(7),
            ev.PhaseStarted(run_id="pid7", compile_id="0/0", name="dynamo", thread=1),
        ]
    )
    (x,) = fv.judge_session(s, Budgets(compiles=3), attached=True).violations
    assert x.check == "unseen" and "no compile record arrived" in x.message
    # A rank that never compiled (its end said so) is judged on its nothing.
    rank = Session.from_events(
        [process_attached(8, rank=1), ev.RunFinished(run_id="pid8", status="ok", wall_s=1.0)]
    )
    assert fv.judge_session(rank, Budgets(compiles=3), attached=True).passed


def test_a_probe_that_could_not_read_a_budgets_figure_fails_it():
    s = session()
    run = next(iter(s.runs.values()))
    s.apply(ev.ProbeUnavailable(run_id=run.run_id, probe="trace", reason="trace_log not found"))
    v = fv.judge_session(s, Budgets(recompiles=10), attached=True)
    (x,) = v.violations
    assert x.check == "recompiles"
    assert (
        x.message
        == "recompiles not judged: dlcprof could not read them (trace: trace_log not found)"
    )


def test_a_compile_that_raised_fails_the_budgets_it_left_unjudged():
    s = session()
    run = next(iter(s.runs.values()))
    raised = ev.CompileRaised(
        run_id=run.run_id,
        error="Unsupported: Failed to trace builtin operator",
        location=f"{TRAIN}:30",
    )
    s.apply(raised)
    v = fv.judge_session(s, Budgets(graph_breaks=1, recompiles=10))
    got = [(x.check, x.where, x.message.split(" (")[0]) for x in v.violations]
    # The break it raised counts (2 > 1); the recompiles after it never ran.
    assert got[:2] == [
        ("graph_breaks", f"{TRAIN}:23", "graph break: Data-dependent branching"),
        ("graph_breaks", f"{TRAIN}:30", "graph break: Failed to trace builtin operator"),
    ]
    assert got[2] == (
        "recompiles",
        f"{TRAIN}:30",
        "recompiles not judged past the compile that raised",
    )


@pytest.mark.parametrize(
    ("argv", "flags"),
    [
        (["python3", "-S", "t.py"], ["-S"]),
        (["/usr/bin/python3.11", "-W", "-I", "-E", "t.py"], ["-E"]),  # -I is -W's value
        (["python", "-Wignore", "-Xfrozen", "-"], []),
        (["python", "t.py", "-I"], []),  # the program's own argument
        (["torchrun", "-S", "t.py"], []),
    ],
)
def test_the_python_flags_that_keep_the_bootstrap_out(argv, flags):
    assert skips_site(argv) == flags


def test_the_repository_root_github_then_git_then_the_cwd(tmp_path, monkeypatch):
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    (repo / "src").mkdir()
    monkeypatch.setenv("GITHUB_WORKSPACE", "/w")
    assert repository_root(repo / "src") == Path("/w")
    monkeypatch.setenv("GITHUB_WORKSPACE", "")
    assert repository_root(repo / "src") == repo.resolve()
    assert repository_root(tmp_path) == tmp_path.resolve()
    assert relative_where(f"{repo}/src/a.py:3", repo) == "src/a.py:3"
    assert relative_where("/elsewhere/a.py:3", repo) == "/elsewhere/a.py:3"


def test_a_frame_the_baseline_never_compiled_is_named_newly_compiled():
    """Issue 41, 8: it read "newly compile: shift compiled"."""
    events = load_fixture("programs/attached_train")
    base = Session.from_events([e for e in events if getattr(e, "compile_id", "")[:2] != "1/"])
    v = fv.judge_session(session(), Budgets(), base)
    assert [x.line() for x in v.violations if x.check == "new_frames"] == [
        f"{TRAIN}:20: newly compiled frame: shift"
    ]


def test_a_decrease_in_compile_time_is_said_to_be_no_regression():
    """Issue 41, 8: "-50%, within the 25% allowed" read as a near-regression."""
    v = fv.judge_session(with_cpu(session(), 0.5), Budgets(), with_cpu(session(), 1.0))
    assert v.passed
    assert "(-50%, a decrease, no regression)" in fv.run_lines(v)[0]


def test_a_recompile_every_entry_failed_alike_names_its_guard_once():
    """Issue 41, 8: "GLOBAL_STATE changed: grad_mode; GLOBAL_STATE changed: grad_mode"."""
    s = session()
    (run_id,) = s.runs
    reason = "0/1: GLOBAL_STATE changed: grad_mode; 0/0: GLOBAL_STATE changed: grad_mode"
    s.apply(ev.RecompileTriggered(run_id=run_id, compile_id="0/1", reason=reason))
    v = fv.judge_session(s, Budgets(recompiles=2))
    (line,) = [x.line() for x in v.violations if "GLOBAL_STATE" in x.line()]
    assert line.startswith(f"{TRAIN}:16: recompile: forward: GLOBAL_STATE changed: grad_mode (")


def test_a_recompile_inside_a_trainer_is_placed_at_the_programs_call():
    """TRL's SFTTrainer (issue 41): the recompiled frame is accelerate's, reached
    from the program's ``trainer.train()``: the violation is at that line, the
    library's place beside it, as a break's is."""
    ops = "/v/lib/python3.11/site-packages/accelerate/utils/operations.py"
    reason = "0/0: tensor 'x' size mismatch at index 1. expected 11, actual 7"
    s = Session.from_events(
        [
            *program_started(),
            compile_finished("0/0", 1001.0, 3.0, frame=("forward", ops, 925)),
            ev.RecompileTriggered(
                run_id="pid7", compile_id="0/1", reason=reason, t=1010.0,
                called_at="/home/u/train_sft.py:63", through=f"{ops}:913",
            ),
            compile_finished("0/1", 1010.0, 4.0, reason=reason, frame=("forward", ops, 925)),
        ]
    )  # fmt: skip
    v = fv.judge_session(s, Budgets(recompiles=0), attached=True, root=Path("/home/u"))
    (x,) = v.violations
    assert x.where == "train_sft.py:63", x
    assert x.message.startswith("recompile: forward: tensor 'x' size mismatch at index 1")
    assert "(recompiled inside accelerate/utils/operations.py:925)" in x.message
