"""dlcprof's pytest plugin on the sample project's tests
(tests/programs/budget_project/check_model.py), run by pytester in a pytest
of their own: a budget exceeded fails its test naming file:line, one within
passes, ``compile_watch`` sees the test's recompile; the session saved by
``--dlcprof-report`` is then the baseline of a run whose test recompiles anew."""

from __future__ import annotations

import shutil

import pytest
from helpers.paths import PROGRAMS

from dlcprof.report.load import load_session

pytest_plugins = ["pytester"]

PROJECT = PROGRAMS / "budget_project"
BREAK_LINE = 21  # model.py's data-dependent `if`


@pytest.fixture
def project(pytester: pytest.Pytester) -> pytest.Pytester:
    for name in ("model.py", "check_model.py"):
        shutil.copy(PROJECT / name, pytester.path / name)
    return pytester


def run(p: pytest.Pytester, *args: str) -> pytest.RunResult:
    # In a process of its own: a test process compiles, and Dynamo's state is per process.
    return p.runpytest_subprocess("-p", "no:cacheprovider", *args, "check_model.py", timeout=600)


def test_budgets_report_and_baseline(project):
    result = run(project, "--dlcprof-report", "report")
    result.assert_outcomes(failed=1, passed=2)
    out = result.stdout.str()
    assert "FAILED check_model.py::test_no_break_budget" in out
    assert "dlcprof compile budget: FAILED, 1 violation (graph breaks: 1; 1 test judged)" in out
    assert "  model.py:21: graph break: Data-dependent branching" in out  # relative to the cwd
    session = load_session(project.path / "report")
    assert list(session.runs) == [
        "check_model.py::test_no_break_budget",
        "check_model.py::test_within_budget",
        "check_model.py::test_watch",
    ]
    assert session.program_exit is not None and session.program_exit.returncode == 1
    # The plugin resets Dynamo before each test: every compile of every test
    # still has its CPU seconds, the measure a budget judges compile time in.
    cpu = {
        r: [c.cpu_s is not None for c in run.compiles.values()] for r, run in session.runs.items()
    }
    assert all(cpu.values()) and all(all(has) for has in cpu.values()), cpu

    # The same tests, test_within_budget now on a second batch size: a recompile
    # its baseline run had not.
    source = project.path / "check_model.py"
    source.write_text(
        source.read_text().replace(
            "    model(torch.randn(4, 8))\n\n\ndef test_watch",
            "    model(torch.randn(4, 8))\n    model(torch.randn(6, 8))\n\n\ndef test_watch",
        )
    )
    result = run(project, "--dlcprof-baseline", "report", "-k", "within or watch")
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "FAILED check_model.py::test_within_budget" in out
    assert (
        "new recompile: forward: tensor 'x' size mismatch at index 0. expected 4, actual 6" in out
    )


def test_a_budget_the_plugin_could_not_judge_fails_the_test(pytester):
    """A budgeted test that compiled nothing fails with why (one that budgets
    ``compiles=0`` asks for that nothing); one whose compile raised under
    ``fullgraph=True`` fails of its error, the break at its line beside it."""
    for name in ("model.py", "check_unjudged.py"):
        shutil.copy(PROJECT / name, pytester.path / name)
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "check_unjudged.py", timeout=600
    )
    result.assert_outcomes(failed=2, passed=1)
    out = result.stdout.str()
    assert "FAILED check_unjudged.py::test_compiles_nothing" in out
    assert "dlcprof compile budget: FAILED, 1 violation (no compile seen: 1; 1 test judged)" in out
    assert "  dlcprof saw no compile: the test compiled nothing it could see" in out
    assert "FAILED check_unjudged.py::test_fullgraph_break" in out
    section = out[out.index("Captured dlcprof call") :]
    assert "dlcprof compile budget: FAILED" in section
    assert f"  model.py:{BREAK_LINE}: graph break: Data-dependent branching" in section
