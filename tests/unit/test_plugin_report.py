"""The report of a pytest plugin session (``--dlcprof-report``): its tests
are runs of one process, each from its setup to its end, so the report says
"the test's" where an attached program's says "this run", names the suite
once in its title, and gives the plugin's own reasons for what it does not
measure (an eager run, calls, compile cost by line)."""

from __future__ import annotations

from helpers.program import compile_finished, process_attached

from dlcprof import events as ev
from dlcprof.figures.job.program import program_lines
from dlcprof.figures.kernels import why_no_profile
from dlcprof.figures.runs import TEST_UNTIMED
from dlcprof.report import model as rm
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.session import Session

TESTS = [f"tests/test_model.py::test_layers[{n}]" for n in range(1, 5)] + [
    "tests/test_other.py::test_one",
]


def _suite() -> Session:
    s = Session()
    s.apply(ev.ProgramStarted(argv=["python", "-m", "pytest", "tests"], cwd="/", pid=7, t=100.0))
    for n, test in enumerate(TESTS):
        start = 101.0 + 2 * n
        s.apply(process_attached(7, run_id=test, argv=[test], started_t=start, test=True))
        s.apply(compile_finished("0/0", start + 0.1, 0.5, run_id=test))
        s.apply(ev.RunFinished(run_id=test, status="ok", wall_s=1.0, t=start + 1.0))
    s.apply(ev.ProgramExited(returncode=0, signal=None, wall_s=12.0, message="pytest exited"))
    return s


def test_a_plugin_report_names_the_suite_once_and_says_the_tests_own_figures():
    session = _suite()
    md = render_markdown(rm.build(session))
    assert md.splitlines()[0] == (
        "# dlcprof report: pytest, 5 tests of tests/test_model.py, tests/test_other.py"
    )
    assert md.splitlines()[2].endswith(" · 5 tests")
    assert "(pid 7)" not in md  # a test is its node id, not one of the process's
    assert "wall 1.00 s (the test, from its setup to its end)" in md
    assert "torch's import" not in md and "--eager-baseline" not in md
    advice = md.split("## Advice")[1].split("## Run 1")[0]
    assert "not checked: a test of the pytest plugin has no benchmark" in advice
    assert "\nMode \n" not in md
    html = render_html(rm.build(session))
    assert "(the test, from its setup to its end)" in html and "· target <code></code>" not in html
    lines = program_lines(session)
    assert f"{TESTS[0]}: compiles took 500 ms of the test's 1.00 s, 50%" in lines
    assert not any("of this" in line or "first compiled call" in line for line in lines)
    assert (
        "compiled calls and kernel times: n/a (the pytest plugin watches each test's "
        "compiles, not its calls)"
    ) in lines
    assert "speedup: n/a (a test of the pytest plugin, which times no eager run)" in lines
    assert why_no_profile(session.runs[TESTS[0]]) == TEST_UNTIMED  # the Kernels pane's n/a


def test_an_attached_program_keeps_its_own_words():
    """The same runs as processes of a program (not tests): the program's wall
    and the eager-baseline hint, as before."""
    session = _suite()
    for run in session.runs.values():
        assert run.process is not None
        run.process.test = False
    lines = program_lines(session)
    assert any("of this 12.00 s run" in line for line in lines)
    assert any("--eager-baseline" in line for line in lines)
