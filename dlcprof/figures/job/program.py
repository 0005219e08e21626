"""Figures only a real program shows (dlcprof -- CMD): the job's timeline
(how much of its wall time went to compiling, how long its first compiled
call waited) and each compiled graph's life (calls so far, time per call
inside the compiled code, compile seconds amortized over the calls).

Wall time: the program's (ProgramStarted to ProgramExited, or to ``now``
while it runs); compile time: torch's own wall time of each compile of the
process (compilation_metrics, forward and backward).
"""

from __future__ import annotations

import os

from dlcprof import text
from dlcprof.attach_contract import SAMPLE_AFTER_CALLS, SAMPLED_CALLS, SAMPLED_WHICH
from dlcprof.data import data
from dlcprof.figures.benchmark import why_none
from dlcprof.figures.job import nodes as fnodes
from dlcprof.figures.job import steps as fsteps
from dlcprof.figures.runs import IMPORTED, NOT_IN_LOG, TEST_UNTIMED, WORKLOAD, is_test, kind
from dlcprof.session import Run, Session

NO_CALLS = "no compiled call timed (another backend than Inductor, or none ran yet)"
NOT_SAMPLED = (
    f"no graph has run {SAMPLE_AFTER_CALLS + SAMPLED_CALLS} calls yet: {SAMPLED_WHICH} are sampled"
)
NO_STEADY = "no unsampled call after the first to compare with"
# A graph called at most 1 + SAMPLED_CALLS times has only its first call unsampled.
ONLY_FIRST = "no later call timed"


def attached_runs(session: Session) -> list[Run]:
    return [r for r in session.runs.values() if r.process is not None]


def program_wall_s(session: Session, now: float | None = None) -> float | None:
    """The program's wall time so far (None: no program, or live without a clock)."""
    if session.program is None:
        return None
    if session.program_exit is not None:
        return session.program_exit.wall_s
    return None if now is None else max(0.0, now - session.program.t)


@data
class GraphLife:
    compile_id: str
    calls: int  # every call so far, sampled ones included
    inside_s: float  # summed time inside the compiled code, sampled calls left out
    first_t: float
    compile_s: float | None  # this graph's compile (torch's wall), when known
    first_s: float = 0.0  # the first call's own time
    sampled: int = 0  # calls whose kernels were timed (kernel_sample.py)
    sampled_s: float = 0.0  # ... their time, the sampling's own work included

    @property
    def per_call_s(self) -> float:
        """Time per call inside the compiled code, the sampled calls left out."""
        n = self.calls - self.sampled
        return self.inside_s / n if n > 0 else 0.0

    @property
    def steady_s(self) -> float | None:
        """Time per unsampled call after the first (which may autotune or page in)."""
        n = self.calls - self.sampled - 1
        return (self.inside_s - self.first_s) / n if n > 0 else None

    @property
    def sampling_extra_s(self) -> float | None:
        """What sampling added to the program: the sampled calls' time over
        what as many unsampled calls take."""
        if not self.sampled or self.steady_s is None:
            return None
        return self.sampled_s - self.sampled * self.steady_s

    @property
    def amortized_s(self) -> float | None:
        """Compile seconds spread over the calls so far."""
        return self.compile_s / self.calls if self.compile_s is not None and self.calls else None

    @property
    def per_call_words(self) -> str:
        """The time per call, or what the one timed call is: the first alone
        (every later call sampled) is no time per call."""
        if self.calls - self.sampled > 1:
            return f"{text.secs(self.per_call_s)} per call inside the compiled code"
        return (
            f"1 timed, the first: {text.secs(self.first_s)} inside the compiled code, with "
            "any one-time work (allocations, lazy initialization, run-time autotuning); "
            f"time per call {text.na(ONLY_FIRST)}"
        )

    @property
    def line(self) -> str:
        calls = f"{text.count(self.calls)} call{'' if self.calls == 1 else 's'}"
        spread = (
            f"; compile {text.secs(self.compile_s)} amortized over {calls}: "
            f"{text.secs(self.amortized_s)} each"
            if self.amortized_s is not None
            else ""
        )
        sampled = (
            f" ({self.sampled} sampled for kernel times left out: "
            f"{text.secs(self.sampled_s / self.sampled)} each)"
            if self.sampled
            else ""
        )
        return f"[{self.compile_id}] {calls}, {self.per_call_words}{sampled}{spread}"


def graph_lives(run: Run) -> list[GraphLife]:
    if run.graph_calls is None:
        return []
    out = []
    for cid, g in run.graph_calls.graphs.items():
        c = run.compiles.get(cid)
        out.append(
            GraphLife(
                cid,
                int(g.get("calls", 0)),
                float(g.get("inside_s", 0.0)),
                float(g.get("first_t", 0.0)),
                c.wall_s if c else None,
                float(g.get("first_s", 0.0)),
                int(g.get("sampled", 0)),
                float(g.get("sampled_s", 0.0)),
            )
        )
    return sorted(out, key=lambda g: g.first_t)


@data
class Timeline:
    """One process's compiling against its program's wall time."""

    run: Run
    compile_s: float  # the finished compiles, and the one running up to now
    wall_s: float | None
    first_wait_s: float | None  # compiles before the first compiled call ran
    running_s: float | None = None  # the compile still running, so far (None: none)
    running: bool = False  # a compile is running (its time unknown without a clock)

    @property
    def share(self) -> float | None:
        return self.compile_s / self.wall_s if self.wall_s else None

    @property
    def line(self) -> str:
        wall = text.secs(self.wall_s, "still running")
        share = text.pct(self.share, "no wall time yet")
        if self.running_s is not None:
            return (
                f"compiles took {text.secs(self.compile_s)} of this {wall} run so far, {share}, "
                f"compiling now ({text.secs(self.running_s)} into this compile)"
            )
        if self.running:
            return (
                f"compiles took {text.secs(self.compile_s)} of this {wall} run, not counting "
                f"the one compiling now (its time so far: {text.na('no clock')})"
            )
        return f"compiles took {text.secs(self.compile_s)} of this {wall} run, {share}"

    @property
    def first_wait_line(self) -> str:
        if self.first_wait_s is None:
            return f"the first compiled call: {text.na(NO_CALLS)}"
        return f"the first compiled call waited {text.secs(self.first_wait_s)} for compiles"


def timeline(session: Session, run: Run, now: float | None = None) -> Timeline:
    lives = graph_lives(run)
    first = min((g.first_t for g in lives), default=None)
    waited = None
    if first is not None:
        waited = sum(
            c.wall_s or 0.0
            for c in run.compiles.values()
            if c.start_t is not None and c.start_t <= first
        )
    wall = fnodes.node_wall_s(session, run) if session.nodes else program_wall_s(session, now)
    running = compiling_since(run)
    running_s = max(0.0, now - running) if running is not None and now is not None else None
    return Timeline(
        run, run.compile_wall_s + (running_s or 0.0), wall, waited, running_s, running is not None
    )


def compiling_since(run: Run) -> float | None:
    """When the compile still running began: its first phase still open, of
    those opened after the last finished compile ended (None: none running)."""
    done = max(
        (r.start_t + r.wall_s for c in run.compiles.values() for r in c.records), default=0.0
    )
    starts = [p.t for p in run.open_phases.values() if p.t >= done]
    return min(starts) if starts else None


def main_timeline(session: Session, now: float | None = None) -> Timeline | None:
    """The process that compiled the most: the program's headline."""
    runs = attached_runs(session)
    if not runs:
        return None
    return timeline(session, max(runs, key=lambda r: r.compile_wall_s), now)


# Python's flags that skip sitecustomize, the bootstrap's way in (docs/attach.md).
_SKIPS_SITE = {"I": "-I", "E": "-E", "S": "-S"}


def skips_site(argv: list[str]) -> list[str]:
    """The flags of a ``python`` command that keep the bootstrap out."""
    if not argv or not os.path.basename(argv[0]).startswith("python"):
        return []
    found: list[str] = []
    args = iter(argv[1:])
    for arg in args:
        if arg in ("-c", "-m") or len(arg) < 2 or arg[0] != "-" or arg.startswith("--"):
            break
        if arg in ("-W", "-X"):
            next(args, None)  # their value
        elif arg[1] not in "WX":
            found += [_SKIPS_SITE[f] for f in arg[1:] if f in _SKIPS_SITE]
    return found


def no_compile_seen(session: Session) -> str:
    """No process of the program sent a compile: why, as far as dlcprof can tell."""
    flags = skips_site(session.program.argv if session.program is not None else [])
    if flags:
        return (
            f"no process of the program compiled anything dlcprof could see: python "
            f"{' '.join(flags)} skips dlcprof's bootstrap (docs/attach.md: the line to add)"
        )
    return (
        "no process of the program compiled anything (it never called torch.compile, or "
        "ran where dlcprof's bootstrap cannot go: python -I, -E or -S, or a PYTHONPATH of "
        "its own; docs/attach.md)"
    )


def program_lines(session: Session, now: float | None = None) -> list[str]:
    """The program in sentences: its timeline, each compiled graph's life."""
    p = session.program
    if p is None:
        return []
    if session.nodes:  # a merged session: each node's program and clock
        out = fnodes.node_lines(session)
    else:
        out = [f"program: {text.command_words(p.argv, p.cwd)}"]
        if session.program_exit is not None:
            out.append(session.program_exit.message)
    runs = attached_runs(session)
    if not runs:
        out.append(no_compile_seen(session))
    for run in runs:
        if is_test(run):
            out.append(test_line(run))
            continue
        t = timeline(session, run, now)
        who = f"{run.name}: " if len(runs) > 1 else ""
        out.append(f"{who}{t.line}; {t.first_wait_line}")
        out += [f"  {g.line}" for g in graph_lives(run)]
        out.append(f"  {sampling(run).line}")
    if any(is_test(r) for r in runs):
        out.append(f"compiled calls and kernel times: {text.na(TEST_UNTIMED)}")
    out.append(speedup_line(session))
    return out


def test_line(run: Run) -> str:
    """A pytest plugin's test: its compiles against the test's own wall (its
    process's is every test's)."""
    share = run.compile_wall_s / run.wall_s if run.wall_s else None
    return (
        f"{run.name}: compiles took {text.secs(run.compile_wall_s)} of the test's "
        f"{text.secs(run.wall_s, 'still running')}, {text.pct(share, 'no wall time yet')}"
    )


@data
class Sampling:
    """The kernel sampler's cost to one process: its sampled calls against as
    many unsampled ones (the observer's cost; docs/attach.md)."""

    calls: int
    graphs: int
    seconds: float  # the sampled calls, sampling included
    extra_s: float | None  # over unsampled calls; None where no graph has a steady time
    called: int = 0  # graphs with timed calls, sampled or not

    @property
    def line(self) -> str:
        if not self.calls:
            return f"kernel times: {text.na(NOT_SAMPLED if self.called else NO_CALLS)}"
        if self.extra_s is None or self.extra_s > 0:
            extra = f"{text.secs(self.extra_s, NO_STEADY)} more than as many unsampled calls"
        else:
            extra = "no more than as many unsampled calls"
        return (
            f"kernel times: sampled on {SAMPLED_WHICH} ({self.calls} calls of "
            f"{text.count(self.graphs)} graph{'' if self.graphs == 1 else 's'}); those calls "
            f"took {text.secs(self.seconds)}, {extra}: the observer's cost, left out of "
            "the time per call"
        )


def sampling(run: Run) -> Sampling:
    called = graph_lives(run)
    lives = [g for g in called if g.sampled]
    extras = [g.sampling_extra_s for g in lives]
    known = [x for x in extras if x is not None]
    return Sampling(
        sum(g.sampled for g in lives),
        len(lives),
        sum(g.sampled_s for g in lives),
        sum(known) if known else None,
        len(called),
    )


@data
class EagerBaseline:
    """The whole job's wall time, compiled (compiles included) against the same
    command with torch.compile forced eager: one run each; and the steady
    per-step comparison past the compiles (figures/job/steps.py)."""

    compiled_s: float
    compile_s: float
    eager_s: float
    steps: fsteps.StepComparison | str | None = None  # str: why there is none

    @property
    def ratio(self) -> float:
        """Eager wall ÷ compiled wall: above 1, the compiled job finished sooner."""
        return self.eager_s / self.compiled_s if self.compiled_s else float("nan")

    @property
    def line(self) -> str:
        faster = "compiled" if self.ratio > 1 else "eager"
        times = self.ratio if self.ratio > 1 else 1 / self.ratio
        return (
            f"the whole job: {text.secs(self.compiled_s)} compiled ({text.secs(self.compile_s)} "
            f"of it compiling) vs {text.secs(self.eager_s)} with torch.compile forced eager: "
            f"{faster} finished {times:.2f}x sooner (one run each: no spread measured, "
            f"so no noise verdict); {self.step_line}"
        )

    @property
    def step_line(self) -> str:
        if isinstance(self.steps, fsteps.StepComparison):
            return self.steps.line
        return f"{fsteps.HEAD}: {text.na(self.steps or 'not timed')}"


def eager_baseline(session: Session) -> EagerBaseline | None:
    done, eager = session.program_exit, session.eager_exit
    if done is None or eager is None or done.detached or eager.returncode != 0:
        return None
    compile_s = sum(r.compile_wall_s for r in attached_runs(session))
    return EagerBaseline(done.wall_s, compile_s, eager.wall_s, fsteps.step_comparison(session))


def speedup_text(session: Session, run: Run | None = None) -> str:
    """The program's speedup: the eager baseline's, else why there is none. A
    run that was not attached has its own benchmark's why instead."""
    if run is not None and run.process is None:
        return text.na(why_none(run))
    base = eager_baseline(session)
    if base is not None:
        return base.line
    if session.eager_exit is not None:
        return text.na(f"the eager baseline run {session.eager_exit.message}")
    if session.eager_program is not None:
        return text.na("the eager baseline is running")
    runs = attached_runs(session)
    return text.na(why_none(runs[0]) if runs else "nothing compiled")


def compile_setting(run: Run, name: str) -> str | None:
    """A run's ``mode``, ``dynamic`` or ``backend``: its own, or those an attached
    process's torch.compile calls passed ("default, max-autotune" where calls
    differ); None where neither says."""
    if run.settings is not None:
        return str(getattr(run.settings, name))
    values = dict.fromkeys(v for c in run.compile_calls if (v := getattr(c, name)) is not None)
    return ", ".join(values) or None


def no_setting(run: Run) -> str:
    """A mode, dynamic or backend ``compile_setting`` cannot say: an attached
    process whose torch.compile calls were not seen (an older report, or Dynamo
    entered another way) has nobody to say it; a TORCH_TRACE log holds none."""
    whose = kind(run)
    if whose == WORKLOAD:
        return text.NA
    return text.na(NOT_IN_LOG if whose == IMPORTED else "no torch.compile call seen")


def compiled_with(run: Run) -> list[str]:
    """Each place that called torch.compile in an attached process, once, with what
    it passed: "accelerate compiled with mode=default, dynamic=false, backend=inductor"
    (a package by its name, the program's own line by file:line; a package's
    call made from another's line by that line: "litgpt/pretrain.py:213 through
    lightning"); a call of which no frame compiled says so: a function's by its
    file, a module's by whether what it returned ever ran (a wrapper that compiles
    the module again drops the first, as Lightning's Fabric does)."""
    lines = []
    compiled = {
        str(c.record.metrics.get("co_filename") or "")
        for c in run.compiles.values()
        if c.record is not None
    }
    for c in run.compile_calls:
        who = c.package or c.caller.rsplit("/", 1)[-1] or "the program"
        if c.made_at:
            who = f"{text.in_package(c.made_at) or c.made_at} through {c.package}"
        mode = f"mode={c.mode}, " if c.mode is not None else ""
        full = ", fullgraph=True" if c.fullgraph else ""
        options = f", options={{{c.options}}}" if c.options else ""
        # In the words of every other view (auto | true | false), not torch's argument.
        line = f"{who} compiled with {mode}dynamic={c.dynamic}, backend={c.backend}{full}{options}"
        idle = c.target not in compiled if c.target else c.module_call not in run.modules_ran
        if idle and (c.target or c.module_call):
            line += ": nothing compiled from it" + (" yet" if run.status == "pending" else "")
        lines.append(line)
    return list(dict.fromkeys(lines))


def speedup_line(session: Session) -> str:
    return f"speedup: {speedup_text(session)}"


def no_run_yet(session: Session, hint: str) -> str:
    """A pane's line before its first run: a workload's ``hint`` (which key to
    press), or, on an attached program, what the pane waits for."""
    if session.program is None:
        return hint
    if session.program_exit is not None:
        return "nothing here: no process of the program compiled"
    return "waiting for the program to compile: each compile appears here as it happens"


def program_state(session: Session, now: float | None = None) -> tuple[str, str]:
    """(state, detail) of an attached program, for a status line."""
    p, end = session.program, session.program_exit
    if p is None:
        return "idle", ""
    command = text.command_words(p.argv, p.cwd)
    if end is None:
        compiling = any(r.open_phases for r in attached_runs(session))
        wall = program_wall_s(session, now)
        elapsed = f" · {text.secs(wall)}" if wall is not None else ""
        return ("compiling" if compiling else "running"), f"{command} · pid {p.pid}{elapsed}"
    failed = end.returncode not in (0, None)
    return ("failed" if failed else "program exited"), f"{command} · {end.message}"
