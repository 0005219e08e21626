"""The boot of an attached program's process, split: from its start to its
first compiled step and to steady state, each instant given to one piece, so
the pieces add up to the measured time. Inside a compile, an instant is the
innermost phase's of the compiling thread, by ``phases.stage_of`` (pool threads
run beside it and are left out); outside, importing torch (the process's start
to ``import torch`` returning, by the bootstrap), the first run of a compiled
graph (graph_calls.py's timing), or else the time between them: the program's
own code, eager work, data loading, Dynamo's import and dlcprof's probes'
install. What a warm cache saved is torch's own account of its hits
(``cache_misses.saved_s``).
"""

from __future__ import annotations

from collections import Counter

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import cache_misses as fcm
from dlcprof.figures import phases as fph
from dlcprof.figures.job import program as fprog
from dlcprof.figures.job import steps as fsteps
from dlcprof.session import Run, Session

IMPORT = "import torch"
UNPHASED = "compiling outside any phase"
FIRST_RUNS = "first runs"
BETWEEN = "between"
# The compile stages in pipeline order, as the boot names them.
STAGE_WORDS = {
    fph.DYNAMO.name: "Dynamo",
    fph.AOT.name: "AOTAutograd",
    fph.INDUCTOR.name: "Inductor",
    fph.BUILD.name: "kernel builds and cache loads",
    fph.AUTOTUNE.name: "autotune",
    fph.OTHER.name: "other compile phases",
}
# Always a row: what every compile goes through; the others only where they ran.
ALWAYS = (IMPORT, "Dynamo", "AOTAutograd", "Inductor", "kernel builds and cache loads")
ORDER = (IMPORT, *STAGE_WORDS.values(), UNPHASED, FIRST_RUNS, BETWEEN)

NO_IMPORT_TIME = (
    "not timed: a process forked from one that had torch, or recorded before dlcprof "
    "timed the import; in between"
)
# The kernel's boot time (whole seconds) plus the process's ticks: off by as
# much as the wall clock was set since boot (seconds, on a VM).
KERNEL_START = (
    "when the kernel says the process started (seconds off where the clock was set since boot)"
)
IMPORT_BEFORE = "torch loaded before the start the kernel gives: its clock was set since boot"
MARK_BEFORE = "it came before the start the kernel gives: its clock was set since boot"
NO_START = "when the process started is unknown (no /proc to read)"
NO_PHASES = "no compile phase recorded"
NO_LOOKUPS = (
    "no cache lookup seen (torch logged none, or the session was recorded before dlcprof read them)"
)
NO_SAVED = "torch logged no time saved with its hits"
SHARED = (
    "boot: n/a (one process ran several runs, each test of dlcprof's pytest plugin: "
    "no start of their own)"
)


@data
class Piece:
    label: str
    seconds: float | None  # None: not known (why says)
    why: str = ""

    @property
    def words(self) -> str:
        return f"{self.label} {text.secs(self.seconds, self.why)}"


@data
class Span:
    """The process's start to one mark, split into pieces."""

    mark: str  # "the first compiled call", ...
    seconds: float | None  # None: the mark is not reached (why says)
    pieces: list[Piece]
    why: str = ""

    @property
    def line(self) -> str:
        if self.seconds is None:
            return f"to {self.mark}: {text.na(self.why)}"
        parts = ", ".join(p.words for p in self.pieces)
        return f"to {self.mark} {text.secs(self.seconds)}: {parts}"


@data
class Boot:
    run: Run
    start: str  # what the start is
    first: Span
    steady: Span
    saved_s: float | None  # what the cache hits saved, by torch's account
    saved_why: str = ""

    @property
    def lines(self) -> list[str]:
        # No hit saved nothing: said so, not as "0 µs".
        saved = (
            "nothing (no lookup hit)"
            if self.saved_s == 0
            else text.secs(self.saved_s, self.saved_why)
        )
        return [
            f"boot, timed from {self.start}:",
            f"  {self.first.line}",
            f"  {self.steady.line}",
            f"  what a warm cache saved, as torch counts its hits: {saved}",
        ]


def _start(session: Session, run: Run) -> tuple[float | None, str]:
    """When the process started, and what that is: the program's own process
    by dlcprof's launch, another by the kernel."""
    p = run.process
    assert p is not None
    if session.program is not None and p.pid == session.program.pid and not session.nodes:
        return session.program.t, "when the program started"
    if p.started_t is not None:
        return p.started_t, KERNEL_START
    return None, NO_START


def split(run: Run, start: float, end: float) -> dict[str, float]:
    """Seconds of [start, end] per piece, each instant in one piece: the import,
    else the innermost compile phase's stage, else a compile's wall outside its
    phases (torch's compile record), else a first run, else between."""
    spans: list[tuple[float, float, int, str]] = []  # (from, to, priority, label)
    loaded = run.process.torch_loaded_t if run.process is not None else None
    if loaded is not None:
        spans.append((start, loaded, 1 << 20, IMPORT))
    for c in run.compiles.values():
        main = fph.main_thread(c.phases)
        for p, depth in fph.nest_phases(c.phases):
            if p.thread == main:
                spans.append(
                    (p.start_t, p.end_t, 3 + depth, STAGE_WORDS[fph.stage_of(p.name).name])
                )
        r = c.record
        if r is not None and r.start_t is not None and r.wall_s is not None:
            spans.append((r.start_t, r.start_t + r.wall_s, 2, UNPHASED))
    for g in fprog.graph_lives(run):
        spans.append((g.first_t, g.first_t + g.first_s, 1, FIRST_RUNS))
    marks: list[tuple[float, int, tuple[int, str]]] = []  # (t, +1 opens / -1 closes, key)
    for a, b, prio, label in spans:
        a, b = max(a, start), min(b, end)
        if a < b:
            marks += [(a, 1, (prio, label)), (b, -1, (prio, label))]
    marks.sort(key=lambda m: (m[0], -m[1]))
    out: dict[str, float] = dict.fromkeys(ORDER, 0.0)
    active: Counter[tuple[int, str]] = Counter()
    t = start
    for at, step, key in marks:
        live = [k for k, n in active.items() if n > 0]
        out[max(live)[1] if live else BETWEEN] += at - t
        active[key] += step
        t = at
    out[BETWEEN] += end - t
    return out


def _span(run: Run, start: float, mark: str, end: float | None, why: str) -> Span:
    if end is None:
        return Span(mark, None, [], why)
    if end < start:
        return Span(mark, None, [], MARK_BEFORE)
    seconds = split(run, start, end)
    loaded = run.process.torch_loaded_t if run.process is not None else None
    pieces = [
        Piece(label, s)
        for label, s in seconds.items()
        if label in ALWAYS or label in (FIRST_RUNS, BETWEEN) or s > 0
    ]
    if loaded is None:
        pieces[0] = Piece(IMPORT, None, NO_IMPORT_TIME)
    elif loaded < start:
        pieces[0] = Piece(IMPORT, None, IMPORT_BEFORE)
    if not any(c.phases for c in run.compiles.values()):
        stages = STAGE_WORDS.values()
        pieces = [Piece(p.label, None, NO_PHASES) if p.label in stages else p for p in pieces]
    return Span(mark, end - start, pieces)


def first_step(run: Run) -> tuple[str, float | None, str]:
    """(the mark, when it ended, why None): the first call of the compiled
    callable called most, where steps were timed, else the first compiled call."""
    step = fsteps.most_called(run.steps)
    if step is not None and step.start_t:
        where = text.short_path(step.caller)
        return f"the first compiled step ({where})", step.start_t[0] + step.wall_s[0], ""
    lives = fprog.graph_lives(run)
    mark = "the first compiled call (steps are timed only with --eager-baseline)"
    if not lives:
        return mark, None, fprog.NO_CALLS
    return mark, lives[0].first_t + lives[0].first_s, ""


def steady_end(run: Run) -> float | None:
    """When every graph had compiled and run once: the last compile's end or
    the last first run's, whichever came later (None: no graph ran)."""
    lives = fprog.graph_lives(run)
    if not lives:
        return None
    runs = max(g.first_t + g.first_s for g in lives)
    return max(runs, fsteps.last_compile_end(run) or runs)


def saved(run: Run) -> tuple[float | None, str]:
    s = fcm.saved_s(run)
    if s is not None:
        return s, ""
    if not run.cache_lookups:
        return None, NO_LOOKUPS
    if not any(e.state == "hit" for e in run.cache_lookups):
        return 0.0, ""
    return None, NO_SAVED


def shares_process(session: Session, run: Run) -> bool:
    """Another run came from the same process (the pytest plugin's tests)."""
    pid = run.process.pid if run.process is not None else None
    return any(
        r is not run and r.process is not None and r.process.pid == pid
        for r in session.runs.values()
    )


def boot(session: Session, run: Run) -> Boot | None:
    """The boot of one attached process (None: not an attached process, or
    one of several runs of one process: SHARED)."""
    if run.process is None or shares_process(session, run):
        return None
    start, start_words = _start(session, run)
    mark, first_end, why = first_step(run)
    steady_mark = "steady state (every graph compiled and run once)"
    saved_s, saved_why = saved(run)
    if start is None:
        return Boot(
            run,
            "an unknown start",
            Span(mark, None, [], start_words),
            Span(steady_mark, None, [], start_words),
            saved_s,
            saved_why,
        )
    return Boot(
        run,
        start_words,
        _span(run, start, mark, first_end, why),
        _span(run, start, steady_mark, steady_end(run), fprog.NO_CALLS),
        saved_s,
        saved_why,
    )


def boot_lines(session: Session) -> list[str]:
    """Each attached process's boot, in sentences (a process named where several)."""
    runs = fprog.attached_runs(session)
    if any(shares_process(session, r) for r in runs):
        return [SHARED]
    out = []
    for run in runs:
        b = boot(session, run)
        if b is not None:
            lines = b.lines
            if len(runs) > 1:
                lines[0] = f"{run.name}: {lines[0]}"
            out += lines
    return out
