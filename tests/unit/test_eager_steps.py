"""--eager-baseline's steady per-step comparison (issue 29 item 12): each call
of the program's compiled callable, timed in the compiled run and in the
forced-eager run (worker/attached/steps.py), compared past the warm-up with
the spread (figures/job/steps.py). Our own logic, on events made here as the
probe sends them; the real runs: tests/e2e/test_attach.py's eager baseline."""

from __future__ import annotations

from typing import Any

from helpers.program import compile_finished, process_attached, program_started

from dlcprof import events as ev
from dlcprof.figures.job import program as fprog
from dlcprof.figures.job import steps as fsteps
from dlcprof.session import Session

CALLER = "/home/u/train.py:12"


def _steps(run_id: str, walls: list[float], start: float, eager: bool) -> ev.StepsTimed:
    starts = [start + i * 0.1 for i in range(len(walls))]
    return ev.StepsTimed(
        run_id=run_id, caller=CALLER, start_t=starts, wall_s=walls, calls=len(walls), eager=eager
    )


def _session(compiled: list[float], eager: list[float], compile_s: float = 0.25) -> Session:
    exited: dict[str, Any] = {"signal": None, "message": "the program exited"}
    return Session.from_events(
        [
            *program_started(),
            compile_finished("0/0", 1002.0, compile_s),
            _steps("pid7", compiled, 1002.0, eager=False),
            ev.ProgramExited(returncode=0, wall_s=10.0, t=1010.0, **exited),
            ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=8, eager=True, t=1011.0),
            process_attached(9),  # the eager run's process: no run of the program
            _steps("pid9", eager, 1012.0, eager=True),
            ev.RunFinished(run_id="pid9", status="ok", wall_s=5.0),
            ev.ProgramExited(returncode=0, wall_s=6.0, t=1017.0, eager=True, **exited),
        ]
    )


def test_the_eager_runs_process_is_no_run_and_its_steps_are_kept():
    s = _session([0.01] * 10, [0.02] * 10)
    assert list(s.runs) == ["pid7"] and s.eager_run_ids == {"pid9"}
    assert [e.run_id for e in s.eager_steps] == ["pid9"]


def test_compiled_faster_per_step_past_the_warmup():
    # Calls 1-3 compile (the compile ends 0.25 s in: calls at +0, +0.1, +0.2).
    s = _session([0.5, 0.4, 0.3, 0.2, *([0.010, 0.011, 0.009] * 4)], [0.020, 0.021, 0.019] * 6)
    found = fsteps.step_comparison(s)
    assert isinstance(found, fsteps.StepComparison)
    assert found.warmup == 4  # 3 compiling, at least the 4 calls of kernel sampling
    assert len(found.compiled) == len(found.eager) == 12
    assert found.line.endswith(": compiled 2.00x faster per step")
    assert "10.0 ms" in found.line and "20.0 ms" in found.line
    base = fprog.eager_baseline(s)
    assert base is not None and base.line.endswith(found.line)


def test_a_difference_inside_the_spread_is_no_measurable_difference():
    noisy = [0.010, 0.030, 0.012, 0.028] * 4
    found = fsteps.step_comparison(_session(noisy, [0.019, 0.021] * 8))
    assert isinstance(found, fsteps.StepComparison)
    assert found.line.endswith(": no measurable difference")


def test_too_few_steps_read_na_with_why():
    found = fsteps.step_comparison(_session([0.5, 0.01, 0.01], [0.02] * 3))
    assert isinstance(found, str) and found.startswith("fewer than 2 calls past the compiles")
    base = fprog.eager_baseline(_session([0.5, 0.01, 0.01], [0.02] * 3))
    assert base is not None and "per step past the compiles: n/a (fewer than 2" in base.line
