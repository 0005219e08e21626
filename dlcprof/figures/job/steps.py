"""--eager-baseline's steady per-step comparison: each call of what the
program's torch.compile returned, timed around the whole call in both runs
(worker/attached/steps.py), compared past the compiles.

Warm-up: in the compiled run, the calls that started before its process's
last compile ended (they compiled, or waited on a compile), and at least the
calls whose kernels dlcprof samples (attach_contract: calls 2-4 of each graph
run with their launches timed); the same number of first calls is left out of
the eager run, so both compare the same steps of
the same program. Each side is a median with its spread (the interquartile
range over its steps); medians closer than the larger spread are "no
measurable difference"."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.attach_contract import SAMPLE_AFTER_CALLS, SAMPLED_CALLS
from dlcprof.data import data
from dlcprof.figures.benchmark import within_spread
from dlcprof.session import Run, Session
from dlcprof.stats import median_iqr

HEAD = "per step past the compiles"


@data
class StepComparison:
    caller: str  # the torch.compile call whose callable the steps are
    warmup: int  # first calls left out of both
    compiled: list[float]  # steady calls' walls, seconds
    eager: list[float]

    @property
    def line(self) -> str:
        c_ms, c_spread = median_iqr([s * 1000 for s in self.compiled])
        e_ms, e_spread = median_iqr([s * 1000 for s in self.eager])
        each = (
            f"{text.ms_spread(c_ms, c_spread)} compiled vs {text.ms_spread(e_ms, e_spread)} "
            f"eager (medians of {len(self.compiled)} and {len(self.eager)} calls of "
            f"{text.short_path(self.caller)}'s compiled callable, after {self.warmup} "
            "warm-up calls: compiles, kernel sampling)"
        )
        if within_spread(c_ms, e_ms, c_spread, e_spread):
            return f"{HEAD}: {each}: {text.NO_DIFFERENCE}"
        faster = "compiled" if c_ms < e_ms else "eager"
        times = max(c_ms, e_ms) / min(c_ms, e_ms) if min(c_ms, e_ms) > 0 else float("inf")
        return f"{HEAD}: {each}: {faster} {times:.2f}x faster per step"


def last_compile_end(run: Run) -> float | None:
    ends = [
        c.record.start_t + c.wall_s
        for c in run.compiles.values()
        if c.record is not None and c.record.start_t is not None and c.wall_s is not None
    ]
    return max(ends) if ends else None


def most_called(steps: list[ev.StepsTimed]) -> ev.StepsTimed | None:
    return max(steps, key=lambda s: len(s.wall_s), default=None)


def step_comparison(session: Session) -> StepComparison | str | None:
    """The comparison, or why there is none (None: no eager baseline ran)."""
    if session.eager_exit is None:
        return None
    runs = [r for r in session.runs.values() if r.process is not None and r.steps]
    if not runs:
        return "no call of a torch.compile'd callable was timed in the compiled run"
    run = max(runs, key=lambda r: r.compile_wall_s)
    compiled = most_called(run.steps)
    assert compiled is not None
    eager = most_called([s for s in session.eager_steps if s.caller == compiled.caller])
    if eager is None:
        return f"the eager run timed no call of {text.short_path(compiled.caller)}'s callable"
    end = last_compile_end(run)
    compiling = sum(1 for t in compiled.start_t if end is not None and t < end)
    warmup = max(compiling, SAMPLE_AFTER_CALLS + SAMPLED_CALLS)
    steady = compiled.wall_s[warmup:]
    if len(steady) < 2 or len(eager.wall_s) - warmup < 2:
        return (
            f"fewer than 2 calls past the compiles ({len(compiled.wall_s)} timed, "
            f"{warmup} of them warm-up: compiles and kernel-sampled calls)"
        )
    n = min(len(steady), len(eager.wall_s) - warmup)
    return StepComparison(compiled.caller, warmup, steady[:n], eager.wall_s[warmup : warmup + n])
