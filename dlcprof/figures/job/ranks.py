"""Many ranks of one job (``dlcprof run -- torchrun …``, issue 22): each rank's
compiles side by side in the Ranks table, and what its columns cannot say, in
notes under it. The checks that find ranks disagreeing are
``figures/job/divergence.py``.

A rank is an attached process (a run with ``process``) that carries a rank.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass
from typing import TYPE_CHECKING

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures.job import hosts as fhosts
from dlcprof.session import Compile, Run, Session

if TYPE_CHECKING:
    from dlcprof.figures.job.divergence import Divergence

BLOCKED_WHY = (
    "not measured: the collectives wait inside torch's C++ (DDP's reducer, the "
    "process group), which dlcprof does not time"
)
# Collective ops as Inductor's wrapper calls them (extern calls, in order).
_COLLECTIVE_RE = re.compile(r"^torch\.ops\.(_c10d_functional|c10d_functional|c10d)\.(\w+)")


def rank_runs(session: Session) -> list[Run]:
    """Attached runs that carry a rank, by rank then pid."""
    runs = [
        r for r in session.runs.values() if r.process is not None and r.process.rank is not None
    ]
    return sorted(runs, key=lambda r: (rank_of(r), r.process.pid if r.process else 0))


def rank_of(run: Run) -> int:
    assert run.process is not None and run.process.rank is not None
    return run.process.rank


def by_rank(session: Session) -> dict[int, Run]:
    """One run per rank (the lowest pid: a forked child keeps its parent's RANK)."""
    out: dict[int, Run] = {}
    for r in rank_runs(session):
        out.setdefault(rank_of(r), r)
    return out


def forward_compiles(run: Run) -> list[Compile]:
    """Frame compiles torch finished (forward records), in the order they finished."""
    done = [c for c in run.compiles.values() if c.record is not None and not c.is_backward]
    return sorted(done, key=lambda c: c.record.t if c.record else 0.0)


def graph_count(run: Run, compile_id: str | None = None) -> int:
    """Inductor graphs (one wrapper module each: a forward, a backward, each
    DDPOptimizer piece), counted by their first launch; all of the run's, or
    those of one frame compile (its backward's included)."""
    keys = None if compile_id is None else {compile_id, ev.backward_id(compile_id)}
    return sum(
        1
        for c in run.compiles.values()
        if keys is None or c.compile_id in keys
        for k in c.kernels
        if k.order == 0
    )


@dataclass
class RankRow:
    """One rank's row of the Ranks table."""

    rank: int
    run_id: str
    host: str
    pid: int
    status: str  # Run.status: running / ok / error / crashed / ended / cancelled
    compiles: int  # frame compiles (forward)
    recompiles: int
    graph_breaks: int
    compile_s: float | None  # torch's wall time of its compiles, forward and backward
    cache_hits: int
    cache_misses: int
    graphs: int | None  # Inductor graphs (DDPOptimizer pieces count here); None: no kernels read
    blocked_s: float | None  # estimated wait on a peer's solo recompile (Blocked)
    blocked_why: str | None  # how it was estimated, or why None
    local_rank: int | None = None
    world_size: int | None = None
    cache_dir: str | None = None  # Inductor's cache folder, when the probe said


def rank_rows(session: Session, found: list[Divergence]) -> list[RankRow]:
    """``found``: the job's divergences (divergence.divergences), whose solo
    recompiles give the blocked column its estimate."""
    rows = []
    for run in rank_runs(session):
        p = run.process
        assert p is not None and p.rank is not None
        compiles = forward_compiles(run)
        caches = Counter(c.cache for c in compiles)
        wait = blocked(session, found, p.rank)
        rows.append(
            RankRow(
                rank=p.rank,
                run_id=run.run_id,
                host=p.host,
                pid=p.pid,
                status=run.status,
                compiles=len(compiles),
                recompiles=len(run.recompiles),
                graph_breaks=len(fgb.breaks(run)),
                compile_s=run.compile_wall_s if run.compiles else None,
                cache_hits=caches["hit"],
                cache_misses=caches["miss"],
                graphs=None if "kernels" in run.unavailable else graph_count(run),
                blocked_s=wait.s,
                blocked_why=wait.words,
                local_rank=p.local_rank,
                world_size=p.world_size,
                cache_dir=p.cache_dir,
            )
        )
    return rows


COLUMNS = (
    "rank",
    "host",
    "pid",
    "status",
    "compiles",
    "recompiles",
    "graph breaks",
    "compile",
    "cache hit/miss",
    "graphs",
    "blocked",
)


def row_cells(row: RankRow) -> list[str]:
    """A row as the tables show it (COLUMNS order)."""
    return [
        str(row.rank),
        row.host,
        str(row.pid),
        row.status,
        text.count(row.compiles),
        text.count(row.recompiles),
        text.count(row.graph_breaks),
        text.secs(row.compile_s, "no compile"),
        f"{row.cache_hits}/{row.cache_misses}",
        text.count(row.graphs) if row.graphs is not None else text.na("no kernels"),
        # An estimate, marked so; how, or why n/a: blocked_notes, under the table.
        text.secs(row.blocked_s) if row.blocked_s is None else f"≈{text.secs(row.blocked_s)}",
    ]


def silent_ranks(session: Session) -> list[int]:
    """Ranks of the world (its size as the ranks said it) that sent nothing: a
    process is silent until it compiles. Judged once the program ended."""
    procs = [r.process for r in rank_runs(session) if r.process is not None]
    sizes = {p.world_size for p in procs if p.world_size is not None}
    if session.program_exit is None or len(sizes) != 1:
        return []
    seen = {p.rank for p in procs}
    return [r for r in range(sizes.pop()) if r not in seen]


def silent_note(session: Session) -> str | None:
    silent = silent_ranks(session)
    if not silent:
        return None
    world = len(silent) + len(by_rank(session))
    who = rank_names(silent)
    return (
        f"{who} of {world} sent nothing: {'it' if len(silent) == 1 else 'they'} compiled nothing "
        "(or ran under another dlcprof, on another node)"
    )


def notes(session: Session, rows: list[RankRow]) -> list[str]:
    """What the table's columns cannot say, under it."""
    rest = [n for n in (silent_note(session), collectives_line(session)) if n]
    return blocked_notes(rows) + rest + fhosts.worker_lines(session)


def blocked_notes(rows: list[RankRow]) -> list[str]:
    """How the blocked column's figures were estimated, or why they read n/a: a
    reason every rank shares said once, the others rank by rank."""
    whys = {r.blocked_why for r in rows}
    if len(whys) == 1 and rows[0].blocked_s is None and rows[0].blocked_why:
        return [f"blocked: {text.na(rows[0].blocked_why)}"]
    return [f"blocked, rank {r.rank}: {blocked_words(r.blocked_s, r.blocked_why)}" for r in rows]


def blocked_words(s: float | None, words: str | None) -> str:
    return text.na(words) if s is None else f"≈{text.secs(s)}, estimated: {words}"


@dataclass(frozen=True)
class Blocked:
    """A rank's wait on its peers' solo recompiles: ``s`` estimated (None: not),
    ``words`` how, or why not."""

    s: float | None
    words: str

    @property
    def said(self) -> str:
        return blocked_words(self.s, self.words)


def _span(c: Compile) -> tuple[float, float]:
    assert c.record is not None
    return c.record.start_t, c.record.start_t + c.record.wall_s


def _merge(spans: list[tuple[float, float]]) -> list[tuple[float, float]]:
    """Overlapping spans as one (peers recompiling at once wait together)."""
    merged: list[tuple[float, float]] = []
    for a, b in sorted(spans):
        if merged and a <= merged[-1][1]:
            merged[-1] = (merged[-1][0], max(merged[-1][1], b))
        else:
            merged.append((a, b))
    return merged


def _overlap(spans: list[tuple[float, float]], others: list[tuple[float, float]]) -> float:
    """Seconds of ``spans`` (merged) that ``others`` cover."""
    return sum(max(0.0, min(b, d) - max(a, c)) for a, b in spans for c, d in _merge(others))


def _frame_calls(run: Run, frame: str, before: str | None = None) -> int:
    """Forward calls of a frame's compiled graphs (those compiled before the
    compile id ``before`` only, when given)."""
    if run.graph_calls is None:
        return 0
    limit = None if before is None else before.rsplit("/", 1)[1]
    out = 0
    for cid, g in run.graph_calls.graphs.items():
        at, _, n = cid.rpartition("/")
        if at == frame and n.isdigit() and (limit is None or int(n) < int(limit)):
            out += int(g.get("calls", 0))  # a backward's key ("4/0 (bwd)") is no digit
    return out


def blocked(session: Session, found: list[Divergence], rank: int) -> Blocked:
    """How long a rank waited on the compiles its peers made alone (a partial
    last batch recompiling one rank): those compiles' spans (forward and its
    backward, as torch timed them) while this rank lived and was not compiling
    itself, given it made the call of that frame they served (its next step,
    whose collective waited). An estimate: the seconds the peer spent getting to
    and out of its compile are not in it. Anything else: n/a, and why."""
    ranks = by_rank(session)
    solo = [
        (d.rank, ranks[d.rank].compiles[d.subject])
        for d in found
        if d.check == "compile_ids"
        and d.rank in ranks
        and not d.subject.endswith("/0")
        and d.subject in ranks[d.rank].compiles
    ]
    if any(r == rank for r, _ in solo):
        return Blocked(None, f"rank {rank} recompiled alone: the others waited on it")
    if not solo or rank not in ranks:
        return Blocked(None, BLOCKED_WHY)
    run = ranks[rank]
    peers = rank_names(sorted({p for p, _ in solo}))
    spans, named, served = [], [], []
    for peer, c in solo:
        bwd = ranks[peer].compiles.get(ev.backward_id(c.compile_id))
        if bwd is not None and bwd.record is None:
            return Blocked(
                None,
                f"rank {peer}'s backward of its solo recompile {c.compile_id} has no "
                "CompileFinished: its span is not known",
            )
        spans += [_span(x) for x in (c, bwd) if x is not None]
        named.append(c.compile_id + (" + its backward" if bwd is not None else ""))
        calls = ranks[peer].graph_calls
        if calls is None or run.graph_calls is None:
            who = rank if calls is not None else peer
            return Blocked(
                None,
                f"rank {who}'s graph calls were not timed (no GraphCallsTimed): not known that "
                f"rank {rank} reached the step rank {peer}'s recompile {c.compile_id} served",
            )
        if c.compile_id not in calls.graphs:
            continue  # no graph called (a wrapper frame): its seconds count, no step to match
        frame = c.compile_id.rsplit("/", 1)[0]
        before = _frame_calls(ranks[peer], frame, c.compile_id)
        mine = _frame_calls(run, frame)
        if mine <= before:
            return Blocked(
                None,
                f"rank {rank} made {mine} calls of frame {frame}, rank {peer} {before} before "
                f"its recompile {c.compile_id}: no step of rank {rank}'s matched it, so no "
                "collective of its is seen waiting on it",
            )
        served.append(f"call {before + 1} of frame {frame}")
    if not served:
        return Blocked(
            None,
            f"no graph of {peers}'s solo recompiles was called: no step of rank {rank}'s to "
            "match them to",
        )
    end = run.finished_t if run.finished_t is not None else max(b for _, b in spans)
    alive = [(a, min(b, end)) for a, b in _merge(spans) if min(b, end) > a]
    own = [_span(c) for c in run.compiles.values() if c.record is not None]
    compiling = _overlap(alive, own)
    waited = sum(b - a for a, b in alive) - compiling
    busy = f"compiled {text.secs(compiling)} of it" if compiling else "compiled nothing"
    return Blocked(
        waited,
        f"{peers}'s solo recompile{'s' if len(named) > 1 else ''} {' and '.join(named)}, "
        f"while rank {rank} {busy} and its {', '.join(served)} waited at that step's collective",
    )


def rank_names(ranks: list[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(str(r) for r in ranks[:-1]) + f" and {ranks[-1]}"


def collective_ops(run: Run, compile_id: str) -> dict[str, list[str]]:
    """The collective ops each graph of a frame compile calls, in order, by graph
    kind ("forward", "backward", "inference"): its backward's included."""
    out: dict[str, list[str]] = {}
    for key in (compile_id, ev.backward_id(compile_id)):
        c = run.compiles.get(key)
        for k in c.kernels if c else []:
            m = _COLLECTIVE_RE.match(k.name)
            if m:
                out.setdefault(k.graph or "graph", []).append(f"{m.group(1)}.{m.group(2)}")
    return out


def collectives_line(session: Session) -> str:
    """What the collectives check compared, said even when nothing differs."""
    ranks = by_rank(session)
    blind = next(
        (r.unavailable["kernels"] for r in ranks.values() if "kernels" in r.unavailable), None
    )
    if blind is not None:
        return f"collectives: {text.na(blind)}"
    counted = Counter(
        op
        for run in ranks.values()
        for c in forward_compiles(run)
        for ops in collective_ops(run, c.compile_id).values()
        for op in ops
    )
    if not counted:
        return (
            "collectives: no collectives in the compiled graphs, nothing to compare (DDP's "
            "gradient allreduce runs in its hooks, outside the graphs)"
        )
    return "collectives in the compiled graphs: " + ", ".join(
        f"{op} ×{n}" for op, n in counted.most_common()
    )
