"""dlcprof's pytest plugin on the sample project's tests
(tests/programs/budget_project/check_*.py), run by pytester in a pytest of
their own: a budget exceeded fails its test naming file:line, one within
passes, ``compile_watch`` sees the test's recompile, budgets it could not
judge fail with why; (``slow``) the session saved by ``--dlcprof-report`` is
then the baseline of a run whose test recompiles anew."""

from __future__ import annotations

import json
import os
import shutil

import pytest
from helpers.paths import PROGRAMS

from dlcprof import events as ev
from dlcprof.report.load import load_session

pytest_plugins = ["pytester"]

PROJECT = PROGRAMS / "budget_project"
BREAK_LINE = 21  # model.py's data-dependent `if`


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    for name in ("model.py", "check_model.py", "check_unjudged.py"):
        shutil.copy(PROJECT / name, pytester.path / name)
    return pytester


def run(p: pytest.Pytester, *args: str) -> pytest.RunResult:
    # In a process of its own: a test process compiles, and Dynamo's state is per process.
    return p.runpytest_subprocess("-p", "no:cacheprovider", *args, timeout=600)


MODEL_TESTS = [
    "check_model.py::test_no_break_budget",
    "check_model.py::test_within_budget",
    "check_model.py::test_watch",
]


def test_budgets_judged_and_unjudged_and_the_report(project):
    """check_model.py: a budget exceeded, one within, ``compile_watch``;
    check_unjudged.py in the same run: a budgeted test that compiled nothing
    fails with why (one that budgets ``compiles=0`` asks for that nothing); one
    whose compile raised under ``fullgraph=True`` fails of its error, the break
    at its line beside it."""
    result = run(project, "--dlcprof-report", "report", "check_model.py", "check_unjudged.py")
    result.assert_outcomes(failed=3, passed=3)
    out = result.stdout.str()
    assert "FAILED check_model.py::test_no_break_budget" in out
    assert "dlcprof compile budget: FAILED, 1 violation (graph breaks: 1; 1 test judged)" in out
    assert "  model.py:21: graph break: Data-dependent branching" in out  # relative to the cwd
    session = load_session(project.path / "report")
    assert list(session.runs)[:3] == MODEL_TESTS
    assert session.program_exit is not None and session.program_exit.returncode == 1
    # Each test a run of its own, with the settings its torch.compile call passed.
    test = session.runs[MODEL_TESTS[0]]
    assert test.process is not None and test.process.test
    assert test.process.cpu_count == len(os.sched_getaffinity(0))  # the report's Environment
    assert [(c.mode, c.dynamic, c.backend) for c in test.compile_calls] == [
        ("default", "auto", "inductor")
    ]
    title = (project.path / "report" / "report.md").read_text().splitlines()[0]
    assert title == "# dlcprof report: pytest, 6 tests of check_model.py, check_unjudged.py"
    # The plugin resets Dynamo before each test: every compile of every test
    # still has its CPU seconds, the measure a budget judges compile time in.
    cpu = {r: [c.cpu_s is not None for c in session.runs[r].compiles.values()] for r in MODEL_TESTS}
    assert all(cpu.values()) and all(all(has) for has in cpu.values()), cpu
    # Each FX-graph lookup's key is written against the one before it (the
    # same Inductor settings in every one) and read back whole.
    written = json.loads((project.path / "report" / "session.json").read_text())["events"]
    assert sum("parts_from" in e for e in written) >= 2
    lookups = [e for e in session.events if isinstance(e, ev.CacheLookedUp)]
    keys = [e.parts for e in lookups if e.layer == "fx_graph"]
    assert len(keys) >= 3 and all(len(k) > 100 and "gm" in k for k in keys)

    assert "FAILED check_unjudged.py::test_compiles_nothing" in out
    assert "dlcprof compile budget: FAILED, 1 violation (no compile seen: 1; 1 test judged)" in out
    assert "  dlcprof saw no compile: the test compiled nothing it could see" in out
    assert "FAILED check_unjudged.py::test_fullgraph_break" in out
    # The last failure's sections: its own.
    fullgraph = out[out.index("_ test_fullgraph_break _") : out.index("short test summary")]
    section = fullgraph[fullgraph.index("Captured dlcprof call") :]
    assert "dlcprof compile budget: FAILED" in section
    assert f"  model.py:{BREAK_LINE}: graph break: Data-dependent branching" in section


# The plugin's pairing of tests and its new-recompile verdict, in the default run:
# tests/unit/test_check_judge.py's test_tests_pair_by_id_and_a_new_test_has_no_baseline_run
# and test_a_recompile_the_baseline_had_not_is_named_by_its_guard (a recorded real run).
@pytest.mark.slow
def test_the_saved_report_is_the_baseline_of_a_run_that_recompiles_anew(project):
    result = run(project, "--dlcprof-report", "report", "check_model.py")
    result.assert_outcomes(failed=1, passed=2)
    assert list(load_session(project.path / "report").runs) == MODEL_TESTS
    # The same tests, test_within_budget now on a second batch size: a recompile
    # its baseline run had not.
    source = project.path / "check_model.py"
    source.write_text(
        source.read_text().replace(
            "    model(torch.randn(4, 8))\n\n\ndef test_watch",
            "    model(torch.randn(4, 8))\n    model(torch.randn(6, 8))\n\n\ndef test_watch",
        )
    )
    result = run(project, "--dlcprof-baseline", "report", "-k", "within or watch", "check_model.py")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "FAILED check_model.py::test_within_budget" in out
    assert (
        "new recompile: forward: tensor 'x' size mismatch at index 0. expected 4, actual 6" in out
    )
