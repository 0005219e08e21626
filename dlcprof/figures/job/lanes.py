"""The Ranks view's geometry: one lane per rank on the program's time axis,
each compile a bar with its stages inside, so skew between ranks shows at a
glance. Computed here, placed by the TUI (which only maps cells to glyphs).

The axis runs from the program's start to its end, or to ``now`` while it
runs (to the newest event seen when no clock is given: replays, tests).
Positions are fractions of the axis; ``cells`` turns a lane into one entry
per terminal cell for a given width.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import field

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import phases as fp
from dlcprof.figures.job.groups import shown_runs
from dlcprof.figures.job.rank_runs import rank_runs
from dlcprof.session import Compile, Run, Session

# A bar narrower than this many cells is drawn whole: its stages would be noise.
MIN_PHASE_CELLS = 4
# What a cell holds besides a stage's name (fp.Stage.name).
ALIVE = "alive"  # the process runs, not compiling
WHOLE = "compile"  # a compile too narrow to show its stages
RUNNING = "running"  # a compile in progress


@data(frozen=True)
class Segment:
    stage: str  # fp.Stage.name: the innermost stage at that time
    start: float  # fractions of the axis
    end: float


@data
class Bar:
    compile_id: str
    start: float  # fractions of the axis
    end: float
    wall_s: float  # the compile's seconds (so far, while it runs)
    running: bool
    segments: list[Segment] = field(default_factory=list)


@data
class Lane:
    rank: int
    run_id: str
    label: str  # "rank 1"
    bars: list[Bar]
    life: tuple[float, float]  # the process on the axis: attached to its end (or the axis end)

    def cells(self, width: int) -> list[str | None]:
        """One entry per cell: a stage name, WHOLE, RUNNING, ALIVE or None (blank)."""
        out: list[str | None] = [None] * width
        a, b = _span(*self.life, width)
        out[a:b] = [ALIVE] * (b - a)
        for bar in self.bars:
            a, b = _span(bar.start, bar.end, width)
            wide = b - a >= MIN_PHASE_CELLS
            for i in range(a, b):
                at = _stage_at(bar.segments, (i + 0.5) / width) if wide else None
                out[i] = at or (RUNNING if bar.running else WHOLE)
            if bar.running:
                out[b - 1] = RUNNING  # its growing end
        return out

    def labels(self, width: int) -> str:
        """Each bar's compile id and seconds under its first cell ("0/1 2.41 s"),
        the id alone where that is all that fits before the next bar's label,
        nothing where not even the id does."""
        line = [" "] * width
        bars = sorted(self.bars, key=lambda b: b.start)
        starts = [_span(b.start, b.end, width)[0] for b in bars]
        free = 0  # the first cell a label may use
        for i, bar in enumerate(bars):
            a = starts[i]
            room = (starts[i + 1] if i + 1 < len(bars) else width + 1) - 1 - a
            long = f"{bar.compile_id} {text.secs(bar.wall_s)}"
            word = long if len(long) <= room else bar.compile_id
            if a < free or a + len(word) > width:
                continue
            line[a : a + len(word)] = word
            free = a + len(word) + 1
        return "".join(line).rstrip()


@data
class Lanes:
    start_t: float  # the axis, epoch seconds
    end_t: float
    live: bool  # the axis ends at now: the program runs
    lanes: list[Lane]

    @property
    def span_s(self) -> float:
        return self.end_t - self.start_t

    def axis(self, width: int) -> str:
        """Tick labels under the lanes: 0 at the left, the end at the right, a
        middle one where there is room."""
        if width <= 0:
            return ""
        line = [" "] * width
        right = text.secs(self.span_s) + (" (now)" if self.live else "")
        ticks = [(0, "0 s"), (width - len(right), right)]
        mid = text.secs(self.span_s / 2)
        if width >= 3 * (len(right) + len(mid)):
            ticks.insert(1, (width // 2 - len(mid) // 2, mid))
        free = 0
        for at, word in ticks:
            at = max(at, free)
            if at + len(word) > width:
                break
            line[at : at + len(word)] = word
            free = at + len(word) + 1
        return "".join(line).rstrip()


def rank_lanes(session: Session, now: float | None = None) -> Lanes | None:
    """The ranks' lanes, None when no process of the session carries a rank."""
    runs = rank_runs(session)
    if not runs:
        return None
    start, end, live = _axis(session, runs, now)
    span = max(end - start, 1e-9)

    def frac(t: float) -> float:
        return min(max((t - start) / span, 0.0), 1.0)

    lanes = []
    for run in shown_runs(session):
        assert run.process is not None and run.process.rank is not None
        born = run.process.started_t if run.process.started_t is not None else run.process.t
        died = run.finished_t if run.finished_t is not None else end
        lanes.append(
            Lane(
                run.process.rank,
                run.run_id,
                f"rank {run.process.rank}",
                _bars(run, end, frac),
                (frac(born), frac(died)),
            )
        )
    return Lanes(start, end, live, lanes)


NO_RANKS = (
    "no ranks: no process of this program carries a rank (torchrun sets RANK; "
    "run the job under torchrun, or init the process group before the first compile)"
)


def shown_words(session: Session, run: Run | None) -> str | None:
    """Which rank the panes show ("rank 1 of 2"), None when it has no rank."""
    p = run.process if run is not None else None
    if p is None or p.rank is None:
        return None
    world = p.world_size or len(session.rank_summaries) or len(rank_runs(session))
    return f"rank {p.rank} of {text.count(world)}"


# --- internals -----------------------------------------------------------------------


def _axis(session: Session, runs: list[Run], now: float | None) -> tuple[float, float, bool]:
    """(start, end, live): the program's life, or the ranks' when no program was seen."""
    seen = [t for r in runs for t in _times(r)]
    starts = [r.process.t for r in runs if r.process is not None] + seen
    if session.program is not None:
        starts.append(session.program.t)
    start = min(starts)
    if session.program_exit is not None:
        return start, session.program_exit.t, False
    if now is not None:
        return start, max(now, *seen, start), True
    return start, max(seen + [start]), False


def _times(run: Run) -> list[float]:
    """Every time the run's compiles and phases mark."""
    out = [p.t for p in run.open_phases.values()]
    for c in run.compiles.values():
        out += [t for p in c.phases for t in (p.start_t, p.end_t)]
        if c.record is not None:
            out += [c.record.start_t, c.record.start_t + c.record.wall_s]
    if run.finished_t is not None:
        out.append(run.finished_t)
    return out


def _bars(run: Run, end: float, frac: Callable[[float], float]) -> list[Bar]:
    opened = _opened(run)
    bars = [_bar(run, cid, c, opened.pop(cid, []), end, frac) for cid, c in run.compiles.items()]
    bars += [_bar(run, cid, None, ps, end, frac) for cid, ps in opened.items()]
    return sorted((b for b in bars if b is not None), key=lambda b: b.start)


def _opened(run: Run) -> dict[str, list[ev.PhaseStarted]]:
    """Open phases by compile id; one without an id belongs to the compile in
    progress, else to a compile not named yet ("?")."""
    current = run.last_compile_id
    if current is not None and current in run.compiles and run.compiles[current].finished:
        current = None
    out: dict[str, list[ev.PhaseStarted]] = {}
    for p in run.open_phases.values():
        out.setdefault(p.compile_id or current or "?", []).append(p)
    return out


def _bar(
    run: Run,
    cid: str,
    c: Compile | None,
    opened: list[ev.PhaseStarted],
    end: float,
    frac: Callable[[float], float],
) -> Bar | None:
    record = c.record if c is not None else None
    phases = fp.kept_phases(c) if c is not None else []
    opened = opened if record is None and run.live else []
    if record is not None:
        t0, t1 = record.start_t, record.start_t + record.wall_s
    elif phases or opened:
        t0 = min([p.start_t for p in phases] + [p.t for p in opened])
        t1 = end if opened else max([p.end_t for p in phases] + [t0])
    else:
        return None  # kernels or a cost, with no time of their own
    spans = [(p.name, p.start_t, p.end_t, p.thread) for p in phases]
    spans += [(p.name, p.t, t1, p.thread) for p in opened]
    segments = [Segment(s, frac(max(a, t0)), frac(min(b, t1))) for s, a, b in _stages(spans)]
    return Bar(
        cid,
        frac(t0),
        frac(t1),
        max(t1 - t0, 0.0),
        bool(opened),
        [s for s in segments if s.end > s.start],
    )


def _stages(spans: list[tuple[str, float, float, int]]) -> list[tuple[str, float, float]]:
    """The innermost stage at each instant of the compiling thread's phases,
    as (stage, start, end) runs; a phase of stage "other" leaves its
    enclosing stage showing. One sweep over the phases' edges."""
    if not spans:
        return []
    busy: dict[int, float] = {}
    for _, a, b, th in spans:
        busy[th] = busy.get(th, 0.0) + (b - a)
    main = max(busy, key=lambda th: busy[th])
    mine = [(fp.stage_of(n), a, b) for n, a, b, th in spans if th == main and b > a]
    edges = sorted(
        [(a, 1, i) for i, (_, a, _) in enumerate(mine)]
        + [(b, 0, i) for i, (_, _, b) in enumerate(mine)]
    )
    active: set[int] = set()
    out: list[tuple[str, float, float]] = []
    prev = edges[0][0] if edges else 0.0
    for t, opens, i in edges:
        inner = [j for j in active if mine[j][0] is not fp.OTHER]
        if t > prev and inner:
            # The innermost: the latest to start, the shortest on a tie.
            j = max(inner, key=lambda j: (mine[j][1], mine[j][1] - mine[j][2]))
            stage = mine[j][0].name
            if out and out[-1][0] == stage and out[-1][2] == prev:
                out[-1] = (stage, out[-1][1], t)
            else:
                out.append((stage, prev, t))
        (active.add if opens else active.discard)(i)
        prev = t
    return out


def _stage_at(segments: list[Segment], x: float) -> str | None:
    """The stage at ``x``; in a gap or past the ends (a cell only partly
    inside the bar), the nearest one."""
    if not segments:
        return None
    return min(segments, key=lambda s: max(s.start - x, x - s.end, 0.0)).stage


def _span(start: float, end: float, width: int) -> tuple[int, int]:
    """The cells [a, b) a span of the axis covers: at least one."""
    if width <= 0:
        return 0, 0
    a = min(int(start * width), width - 1)
    b = max(a + 1, min(math.ceil(end * width - 1e-9), width))
    return a, b
