"""The findings of arXiv 2611.04273 (TorchInductor on an RTX A6000), measured
from the runs ``dlcprof paper`` made (``Session.paper`` names them).

1. Graph optimization: the speedup of each workload (both allocator figures,
   with the noise verdict), the best, and which gained little and why, judged
   from the kernels each compiled: library GEMMs/convolutions holding the time
   (GEMM-bound), many ops of microseconds each (overhead-bound), else
   fusion-friendly.
2. Compilation overhead: compile seconds on the warm cache and on a fresh one,
   and the runs each takes to pay for itself (break-even).
3. Dynamic shapes: the cumulative cost of shape transitions, static vs dynamic
   (``figures.recompiles.SweepPair``), and dynamic's steady-state cost.

Per-kernel times (a profiling stage's ``KernelsProfiled``) sharpen finding 1
where a run has them: the library kernels' share of the time instead of their
count, and the fusion gain; without them those read n/a with the reason.

Here: the runs of a paper session, what each does and found (its progress
lines) and each workload's figures; what kind of graph a workload is comes
from ``figures.graph_kind``, the rows every view places from
``figures.paper_tables``.
"""

from __future__ import annotations

from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import allocator as fa
from dlcprof.figures import benchmark as fb
from dlcprof.figures import recompiles as fr
from dlcprof.figures.graph_kind import Character, KernelTimes, character, kernel_times
from dlcprof.session import Run, Session

# The paper, and what it measured on.
PAPER = "arXiv 2611.04273"
PAPER_MACHINE = "TorchInductor on an RTX A6000"
# A speedup under this "gained little".
LITTLE = 1.5


# --- the runs of a paper session ---------------------------------------------------


def _after(plan: ev.PaperPlanned, runs: list[Run]) -> list[Run]:
    return [r for r in runs if r.started_t is not None and r.started_t >= plan.t]


def paper_runs(session: Session) -> list[Run]:
    """The runs made for the session's latest paper plan, in order."""
    plan = session.paper
    return _after(plan, list(session.runs.values())) if plan is not None else []


BENCHMARK, FRESH, SWEEP = "benchmark", "fresh", "sweep"


def role(run: Run) -> str | None:
    """What a paper run is for: the warm benchmark (findings 1 and 2), the
    compile on a fresh cache (finding 2), or a shape sweep (finding 3)."""
    s = run.settings
    if s is None:
        return None
    if s.sweep:
        return SWEEP
    return FRESH if s.cache == "fresh" else BENCHMARK


def _benchmarked(run: Run) -> bool:
    return role(run) == BENCHMARK


def _fresh(run: Run) -> bool:
    return role(run) == FRESH


def planned_runs(plan: ev.PaperPlanned) -> int:
    return len(plan.workloads) + len(plan.fresh) + 2


def step(run: Run) -> str:
    """What a paper run does, as its progress line says when it starts."""
    s = run.settings
    assert s is not None
    return paper_step(role(run) or "", run.name, s.dynamic, len(s.shapes) or None)


def outcome(run: Run) -> str:
    """What a paper run found, in its progress line when it finishes."""
    r = role(run)
    if r == SWEEP:
        done = run.sweep_done
        compiles = done.compiles if done else sum(st.recompiled for st in run.sweep)
        dynamic = run.settings.dynamic if run.settings else ""
        return sweep_outcome(run.name, dynamic, compiles, fr.sweep_total(run))
    a = fa.contrast(run)
    if a is None:
        return f"{run.name}: {text.na(fb.why_none(run))}"
    if r == FRESH:
        return fresh_outcome(run.name, a.default.compile_text)
    steady = speedup_or_why(a.steady, a.steady_why)
    return benchmark_outcome(run.name, fb.speedup_text(a.default), steady, a.default.compile_text)


def _latest(runs: list[Run], target: str, role: Any) -> Run | None:
    return next((r for r in reversed(runs) if r.target == target and role(r)), None)


def _not_run(runs: list[Run]) -> str:
    """Why a planned run has no run in the session."""
    if any(r.live for r in runs):
        return "waiting its turn"
    ended = [r for r in runs if r.status in ("cancelled", "crashed")]
    return f"not run: the paper run {ended[-1].status}" if ended else "not run"


@data(frozen=True)
class WorkloadFigures:
    """One workload's row: its warm benchmark and its compile on a fresh cache."""

    target: str
    run: Run | None  # benchmarked on the warm cache
    fresh_run: Run | None  # compiled on a fresh Inductor cache
    planned_fresh: bool
    why: str  # why the warm figures are n/a ("" when there are some)
    fresh_why: str
    contrast: fa.AllocatorContrast | None
    fresh: fb.Speed | None  # the warm benchmark, with the fresh compile's seconds
    character: Character | None
    times: KernelTimes | None

    @property
    def name(self) -> str:
        return self.run.name if self.run is not None else self.target

    @property
    def speed(self) -> fb.Speed | None:
        return self.contrast.default if self.contrast is not None else None


def _workload(target: str, runs: list[Run], planned_fresh: bool) -> WorkloadFigures:
    run = _latest(runs, target, _benchmarked)
    fresh_run = _latest(runs, target, _fresh)
    contrast = fa.contrast(run) if run is not None else None
    why = (
        ""
        if contrast is not None
        else (fb.why_none(run, short=True) if run is not None else _not_run(runs))
    )
    fresh, fresh_why = None, ""
    fresh_b = fresh_run.benchmark if fresh_run is not None else None
    if not planned_fresh:
        fresh_why = "--quick"
    elif fresh_b is None or fresh_run is None:
        fresh_why = fb.why_none(fresh_run, short=True) if fresh_run else _not_run(runs)
    elif run is None or run.benchmark is None:
        fresh_why = why
    else:
        fresh = fb.speed(run.benchmark, fresh_b.compile_s, fb.compile_cache(fresh_run))
    return WorkloadFigures(
        target,
        run,
        fresh_run,
        planned_fresh,
        why,
        fresh_why,
        contrast,
        fresh,
        character(run) if run is not None else None,
        kernel_times(run) if run is not None else None,
    )


@data(frozen=True)
class Findings:
    plan: ev.PaperPlanned
    workloads: list[WorkloadFigures]
    sweep: fr.SweepPair
    sweep_why: str  # why finding 3 is n/a ("" once both sweeps finished)

    @property
    def measured(self) -> list[WorkloadFigures]:
        return [w for w in self.workloads if w.speed is not None]

    @property
    def best(self) -> WorkloadFigures | None:
        """The largest speedup that is measurably one."""
        faster = [w for w in self.measured if w.speed and w.speed.verdict == fb.FASTER]
        return max(faster, key=lambda w: (w.speed.speedup or 0.0) if w.speed else 0.0, default=None)

    @property
    def little(self) -> list[WorkloadFigures]:
        """Those that gained little: under LITTLE, or no measurable gain at all."""
        out = []
        for w in self.measured:
            s = w.speed
            assert s is not None
            if s.verdict != fb.FASTER or (s.speedup or 0.0) < LITTLE:
                out.append(w)
        return out


def findings(session: Session) -> Findings | None:
    """The paper's findings as the session measured them; None without a paper plan."""
    plan = session.paper
    if plan is None:
        return None
    runs = paper_runs(session)
    rows = [_workload(t, runs, t in plan.fresh) for t in plan.workloads]
    swept = [r for r in runs if r.target == plan.sweep and r.settings and r.settings.sweep]
    pair = fr.SweepPair(
        plan.sweep,
        next((r for r in reversed(swept) if fr.is_static(r)), None),
        next((r for r in reversed(swept) if fr.is_dynamic(r)), None),
    )
    return Findings(plan, rows, pair, _sweep_why(pair, runs))


def _sweep_why(pair: fr.SweepPair, runs: list[Run]) -> str:
    """Why finding 3 has no figure yet ("" once both sweeps finished)."""
    if pair.complete:
        return ""
    swept = [r for r in (pair.static, pair.dynamic) if r is not None]
    ended = [r for r in swept if not r.live and r.sweep_done is None]
    if ended:
        return sweep_ended(ended[0].settings.dynamic if ended[0].settings else "", ended[0].status)
    return "sweeping" if any(r.live for r in swept) else _not_run(runs)


def speedup_or_why(s: fb.Speed | None, why: str) -> str:
    """A speedup in words, else why there is none."""
    return fb.speedup_text(s) if s is not None else text.na(why)


# --- their words ------------------------------------------------------------------


def paper_plan(
    runs: int, workloads: list[str], fresh: list[str], sweep: str, sizes: list[int]
) -> str:
    """What ``dlcprof paper`` is about to do, in one line."""
    swept = f"over {', '.join(map(str, sizes))}" if sizes else "over its SIZES"
    return (
        f"Reproducing {PAPER} ({PAPER_MACHINE}) here: {text.plural(runs, 'run')}: "
        f"{', '.join(workloads)} benchmarked on the warm cache; {', '.join(fresh)} compiled "
        f"again on a fresh cache; {sweep} swept {swept}, static then dynamic"
    )


def paper_step(role: str, name: str, dynamic: str, sizes: int | None) -> str:
    """What one paper run does."""
    if role == "sweep":
        what = text.plural(sizes, "size") if sizes else "its sizes"
        return f"{name}: shape sweep over {what}, dynamic={dynamic}, fresh cache"
    if role == "fresh":
        return f"{name}: compile on a fresh cache"
    return f"{name}: compile on the warm cache, then eager vs compiled"


def benchmark_outcome(name: str, default: str, steady: str, compile_words: str) -> str:
    return f"{name}: {default}; {steady} with the {text.STEADY_ALLOC}; compile {compile_words}"


def fresh_outcome(name: str, compile_words: str) -> str:
    return f"{name}: compiled in {compile_words} on a fresh cache"


def sweep_outcome(name: str, dynamic: str, compiles: int, total_s: float | None) -> str:
    return (
        f"{name}, dynamic={dynamic}: {text.plural(compiles, 'compile')}, {text.secs(total_s)} of "
        "shape transitions"
    )


_AGAIN = " · r runs the quick set again"


def paper_none(replay: bool) -> str:
    if replay:
        return f"no paper run in this recording (dlcprof paper reproduces {PAPER})"
    return f"no paper run in this session: r runs the quick set of {PAPER}"


def paper_done(done: int, planned: int, replay: bool = False) -> str:
    return f"done: {done} of {text.plural(planned, 'run')}" + ("" if replay else _AGAIN)


def paper_stopped(done: int, planned: int, name: str, status: str, replay: bool = False) -> str:
    return (
        f"{done} of {text.plural(planned, 'run')} ran; {name} ended ({status}): the rows it "
        "leaves read n/a" + ("" if replay else _AGAIN)
    )


def sweep_ended(dynamic: str, status: str) -> str:
    return f"the dynamic={dynamic} sweep ended ({status}) before it finished"
