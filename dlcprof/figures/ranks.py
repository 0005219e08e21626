"""Many ranks of one job (``dlcprof run -- torchrun …``, issue 22): each rank's
compiles side by side, and the checks that find ranks disagreeing.

A rank is an attached process (a run with ``process``) that carries a rank.
Each check compares only ranks that exist (that sent events) and only what
every compared rank has settled: a compile id one rank has not finished yet
is no divergence until it is past it (ended, or ``SKEW_S`` later and not
compiling it), so a clean job raises no alarm while it runs. One
``Divergence`` per finding, its headline naming the rank, what differs and
the first differing event; ``evidence`` holds the per-rank values.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Hashable, Mapping
from dataclasses import dataclass

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import outcome
from dlcprof.session import Compile, Run, Session

CHECKS = ("compile_ids", "graph_counts", "cache", "collectives", "compile_skew", "crash")
CHECKED = "compile ids, graph counts, cache hits, collectives, compile skew, crashes"
# Later than this after the fastest rank, a rank's compile is skew (and a compile
# id it lacks, a divergence): compiles of the same graph on a loaded host vary
# by seconds, a recompile or a cold compile on one rank by far more.
SKEW_S = 10.0
NCCL_TIMEOUT = "NCCL's default timeout is 10 min"
BLOCKED_WHY = (
    "not measured: the collectives wait inside torch's C++ (DDP's reducer, the "
    "process group), which dlcprof does not time"
)
# Collective ops as Inductor's wrapper calls them (extern calls, in order).
_COLLECTIVE_RE = re.compile(r"^torch\.ops\.(_c10d_functional|c10d_functional|c10d)\.(\w+)")
# How a rank ended badly (Run.status).
FAILED = {"error": "failed", "crashed": "crashed", "ended": "ended without its exit hook"}
SHARED_CACHE = "shared cache: hit pattern may differ harmlessly"


def rank_runs(session: Session) -> list[Run]:
    """Attached runs that carry a rank, by rank then pid."""
    runs = [
        r for r in session.runs.values() if r.process is not None and r.process.rank is not None
    ]
    return sorted(runs, key=lambda r: (_rank(r), r.process.pid if r.process else 0))


def _rank(run: Run) -> int:
    assert run.process is not None and run.process.rank is not None
    return run.process.rank


def by_rank(session: Session) -> dict[int, Run]:
    """One run per rank (the lowest pid: a forked child keeps its parent's RANK)."""
    out: dict[int, Run] = {}
    for r in rank_runs(session):
        out.setdefault(_rank(r), r)
    return out


# --- the table -----------------------------------------------------------------------


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
    graphs: int  # Inductor graphs (DDPOptimizer pieces count here)
    blocked_s: float | None  # time blocked in the first collective after a compile
    blocked_why: str | None  # why None
    local_rank: int | None = None
    world_size: int | None = None
    cache_dir: str | None = None  # Inductor's cache folder, when the probe said


def rank_rows(session: Session) -> list[RankRow]:
    rows = []
    for run in rank_runs(session):
        p = run.process
        assert p is not None and p.rank is not None
        compiles = forward_compiles(run)
        caches = Counter(c.cache for c in compiles)
        rows.append(
            RankRow(
                rank=p.rank,
                run_id=run.run_id,
                host=p.host,
                pid=p.pid,
                status=run.status,
                compiles=len(compiles),
                recompiles=len(run.recompiles),
                graph_breaks=len(run.graph_breaks),
                compile_s=run.compile_wall_s if run.compiles else None,
                cache_hits=caches["hit"],
                cache_misses=caches["miss"],
                graphs=graph_count(run),
                blocked_s=None,
                blocked_why=BLOCKED_WHY,
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
        text.count(row.graphs),
        text.secs(row.blocked_s),  # the why: blocked_note, once under the table
    ]


def silent_ranks(session: Session) -> list[int]:
    """Ranks of the world (its size as the ranks said it) that sent nothing: a
    process is silent until it compiles. Judged once the program ended."""
    rows = rank_rows(session)
    sizes = {r.world_size for r in rows if r.world_size is not None}
    if session.program_exit is None or len(sizes) != 1:
        return []
    seen = {r.rank for r in rows}
    return [r for r in range(sizes.pop()) if r not in seen]


def silent_note(session: Session) -> str | None:
    silent = silent_ranks(session)
    if not silent:
        return None
    world = len(silent) + len(by_rank(session))
    who = _names(silent)
    return (
        f"{who} of {world} sent nothing: {'it' if len(silent) == 1 else 'they'} compiled nothing "
        "(or ran under another dlcprof, on another node)"
    )


def notes(session: Session, rows: list[RankRow]) -> list[str]:
    """What the table's columns cannot say, under it."""
    return [n for n in (blocked_note(rows), silent_note(session), collectives_line(session)) if n]


def blocked_note(rows: list[RankRow]) -> str | None:
    """The one reason the blocked column reads n/a, said once under the table."""
    whys = {r.blocked_why for r in rows if r.blocked_s is None and r.blocked_why}
    return f"blocked: {text.na(whys.pop())}" if len(whys) == 1 else None


# --- divergences -------------------------------------------------------------------


@dataclass
class Divergence:
    """One check that found ranks disagreeing."""

    check: str  # one of CHECKS
    rank: int  # the rank that differs
    alarm: bool  # False: a note (e.g. SHARED_CACHE)
    headline: str  # one line for the banner: the rank, what differs, the first differing event
    evidence: list[str]  # lines that show it (per-rank values side by side)
    subject: str = ""  # what it is about (a compile id; "" for the whole rank)
    t: float = 0.0  # when the first differing event happened
    # About a frame of torch's own code (DDP's or Dynamo's wrapper around the
    # user's forward): it follows from the user's frame, so it is listed after.
    in_torch: bool = False

    @property
    def key(self) -> tuple[str, int, str]:
        """The finding, whatever its words say as it grows (a skew still counting)."""
        return (self.check, self.rank, self.subject)


def divergences(session: Session, now: float | None = None) -> list[Divergence]:
    """Every finding of every check, the first differing event first. ``now``:
    the clock of a live session (a rank that is late shows while it is);
    None judges only what has ended or finished."""
    ranks = by_rank(session)
    if len(ranks) < 2:
        return []
    found = [
        *_compile_ids(ranks, now),
        *_graph_counts(ranks),
        *_cache(ranks),
        *_collectives(ranks),
        *_compile_skew(ranks, now),
        *_crash(ranks, session),
    ]
    return sorted(found, key=lambda d: (d.in_torch, d.t, CHECKS.index(d.check), d.rank))


def alarms(found: list[Divergence]) -> list[Divergence]:
    return [d for d in found if d.alarm]


def summary(found: list[Divergence], ranks: int) -> str:
    """The checks' verdict in one line."""
    if ranks < 2:
        return f"divergence checks: n/a ({text.plural(ranks, 'rank')}: nothing to compare)"
    a, notes = len(alarms(found)), len(found) - len(alarms(found))
    if not found:
        return f"divergence checks: the {ranks} ranks agree ({CHECKED})"
    parts = [text.plural(a, "divergence")] if a else []
    parts += [text.plural(notes, "note")] if notes else []
    return f"divergence checks: {', '.join(parts)} among {ranks} ranks"


def _names(ranks: list[int]) -> str:
    if len(ranks) == 1:
        return f"rank {ranks[0]}"
    return "ranks " + ", ".join(str(r) for r in ranks[:-1]) + f" and {ranks[-1]}"


def _minority(values: Mapping[int, Hashable]) -> list[int]:
    """Ranks whose value differs from the most common one (ties: the lowest rank's)."""
    groups: dict[Hashable, list[int]] = {}
    for rank, v in values.items():
        groups.setdefault(v, []).append(rank)
    if len(groups) < 2:
        return []
    ref = max(groups.values(), key=lambda rs: (len(rs), -min(rs)))
    return sorted(r for rs in groups.values() if rs is not ref for r in rs)


def frame_words(c: Compile) -> str:
    """The frame a compile is of: "forward at train.py:24" (what the record names)."""
    m = c.record.metrics if c.record else {}
    name, file, line = m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno")
    where = f"{text.short_path(str(file))}:{line}" if file and line is not None else ""
    return " at ".join(str(x) for x in (name, where) if x) or "frame not named"


def _in_torch(c: Compile) -> bool:
    return text.in_torch(str((c.record.metrics if c.record else {}).get("co_filename") or ""))


def _reason(run: Run, c: Compile) -> str | None:
    reason = c.record.recompile_reason if c.record else None
    if not reason:
        reason = next((rc.reason for rc in run.recompiles if rc.compile_id == c.compile_id), None)
    return text.short(reason, 200) if reason else None


def _end_t(c: Compile) -> float | None:
    r = c.record
    return None if r is None else r.start_t + r.wall_s


def _compiling(run: Run) -> set[str]:
    return {p.compile_id for p in run.open_phases.values() if p.compile_id}


def _past(run: Run, since: float, now: float | None) -> bool:
    """Is the rank past the point where it would have made a compile another rank
    finished at ``since``? Ended, or not compiling anything ``SKEW_S`` later (a
    rank still compiling, whatever frame, is behind: the skew check's)."""
    if not run.live:
        return True
    return now is not None and now - since > SKEW_S and not run.open_phases


def _frame_ids(run: Run, frame: str) -> list[str]:
    return [c.compile_id for c in forward_compiles(run) if c.compile_id.rsplit("/", 1)[0] == frame]


def _compile_ids(ranks: dict[int, Run], now: float | None) -> list[Divergence]:
    held: dict[str, dict[int, Compile]] = {}
    for rank, run in ranks.items():
        for c in forward_compiles(run):
            held.setdefault(c.compile_id, {})[rank] = c
    out = []
    for cid, holders in held.items():
        first = min(holders.values(), key=lambda c: c.record.t if c.record else 0.0)
        since = _end_t(first) or 0.0
        lacking = [r for r in ranks if r not in holders and _past(ranks[r], since, now)]
        if not lacking:
            continue
        frame = cid.rsplit("/", 1)[0]
        evidence = [
            f"rank {r}: frame {frame} compiled as {', '.join(_frame_ids(run, frame)) or 'nothing'}"
            for r, run in ranks.items()
        ]
        if len(holders) <= len(lacking):
            others = "the others" if len(lacking) == len(ranks) - len(holders) else _names(lacking)
            for rank, c in sorted(holders.items()):
                reason = _reason(ranks[rank], c)
                verb = "recompiled" if not cid.endswith("/0") else "compiled"
                head = f"rank {rank} {verb} {cid}, {frame_words(c)} ({others} did not)"
                why = [f"{cid}: {reason}"] if reason else []
                out.append(
                    Divergence(
                        "compile_ids",
                        rank,
                        True,
                        f"{head}: {reason}" if reason else head,
                        evidence + why,
                        cid,
                        c.record.t if c.record else 0.0,
                        _in_torch(c),
                    )
                )
        else:
            did = (
                "the others"
                if len(holders) == len(ranks) - len(lacking)
                else _names(sorted(holders))
            )
            for rank in lacking:
                out.append(
                    Divergence(
                        "compile_ids",
                        rank,
                        True,
                        f"rank {rank} did not compile {cid}, {frame_words(first)} ({did} did)",
                        evidence,
                        cid,
                        first.record.t if first.record else 0.0,
                        _in_torch(first),
                    )
                )
    return out


def _last_t(run: Run) -> float:
    return max((c.record.t for c in run.compiles.values() if c.record), default=0.0)


def _shared_ids(ranks: dict[int, Run]) -> set[str]:
    """Frame compiles every rank made."""
    return set.intersection(*({c.compile_id for c in forward_compiles(r)} for r in ranks.values()))


def _graph_counts(ranks: dict[int, Run]) -> list[Divergence]:
    """Judged once the ranks have ended: a graph's backward comes later, at its
    first backward pass, so counts differ for a while in any job."""
    if any(r.live for r in ranks.values()):
        return []
    if _blind(ranks):
        return []
    out = []
    flagged: set[int] = set()
    shared = _shared_ids(ranks)
    for cid in sorted(shared):
        counts = {rank: graph_count(run, cid) for rank, run in ranks.items()}
        for rank in _minority(counts):
            flagged.add(rank)
            others = sorted({n for r, n in counts.items() if r != rank})
            out.append(
                Divergence(
                    "graph_counts",
                    rank,
                    True,
                    f"rank {rank} made {text.plural(counts[rank], 'Inductor graph')} of {cid}, "
                    f"the others {' or '.join(map(str, others))}",
                    [f"rank {r}: {text.plural(n, 'graph')} of {cid}" for r, n in counts.items()],
                    cid,
                    _last_t(ranks[rank]),
                )
            )
    totals = {rank: graph_count(run) for rank, run in ranks.items()}
    for rank in _minority(totals):
        if rank in flagged:
            continue
        others = sorted({n for r, n in totals.items() if r != rank})
        evidence = []
        for r, run in ranks.items():
            per = ", ".join(
                f"{c.compile_id}: {graph_count(run, c.compile_id)}"
                for c in forward_compiles(run)
                if graph_count(run, c.compile_id)
            )
            evidence.append(
                f"rank {r}: {text.plural(totals[r], 'graph')}" + (f" ({per})" if per else "")
            )
        out.append(
            Divergence(
                "graph_counts",
                rank,
                True,
                f"rank {rank} ends with {text.plural(totals[rank], 'Inductor graph')}, "
                f"the others with {' or '.join(map(str, others))}",
                evidence,
                "",
                _last_t(ranks[rank]),
            )
        )
    return out


def shared_cache(ranks: list[Run]) -> bool | None:
    """Do these ranks use one Inductor cache folder? None: not known (not recorded)."""
    procs = [r.process for r in ranks if r.process is not None]
    if len({p.host for p in procs}) > 1:
        return False
    dirs = {p.cache_dir for p in procs}
    if None in dirs:
        return None
    return len(dirs) == 1


def _cache(ranks: dict[int, Run]) -> list[Divergence]:
    states: dict[int, dict[str, str]] = {
        rank: {c.compile_id: c.cache for c in forward_compiles(run) if c.cache}
        for rank, run in ranks.items()
    }
    shared = set.intersection(*(set(s) for s in states.values()))
    order = [c.compile_id for c in forward_compiles(next(iter(ranks.values())))]
    seq = [cid for cid in order if cid in shared]
    if not seq:
        return []
    differ = _minority({rank: tuple(s[cid] for cid in seq) for rank, s in states.items()})
    if not differ:
        return []
    together = shared_cache(list(ranks.values()))
    evidence = [
        f"rank {rank}: " + ", ".join(f"{cid} {states[rank][cid]}" for cid in seq) for rank in ranks
    ]
    if together:
        folder = ranks[differ[0]].process.cache_dir if ranks[differ[0]].process else None
        tail, alarm = f"{SHARED_CACHE} (one folder: {folder})", False
    elif together is None:
        tail, alarm = (
            "cache folders not recorded: if the ranks share one, "
            "the hit pattern may differ harmlessly",
            False,
        )
    else:
        tail, alarm = (
            "separate caches: the rank that misses compiles while the others wait in the "
            "next collective",
            True,
        )
    ref = next(r for r in ranks if r not in differ)
    out = []
    for rank in differ:
        cid = next(c for c in seq if states[rank][c] != states[ref][c])
        c = ranks[rank].compiles[cid]
        out.append(
            Divergence(
                "cache",
                rank,
                alarm,
                f"rank {rank} had a cache {states[rank][cid]} on {cid} where rank {ref} had a "
                f"{states[ref][cid]}: {tail}",
                evidence,
                "",
                c.record.t if c.record else 0.0,
            )
        )
    return out


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


def _graph_settled(run: Run, compile_id: str, graph: str) -> bool:
    """Has this rank made all it will of that graph kind? The forward comes with
    the frame's record; a backward with its own record, or with the forward's on a
    cache hit, or never once the rank ended."""
    if graph != "backward" or not run.live:
        return True
    bwd = run.compiles.get(ev.backward_id(compile_id))
    own = run.compiles.get(compile_id)
    return bool((bwd and bwd.record) or (own and any(k.graph == "backward" for k in own.kernels)))


def _blind(ranks: dict[int, Run]) -> bool:
    """Graphs and their collectives are read from the kernels: not without that probe."""
    return any("kernels" in r.unavailable for r in ranks.values())


def _collectives(ranks: dict[int, Run]) -> list[Divergence]:
    if _blind(ranks):
        return []
    shared = _shared_ids(ranks)
    out = []
    for cid in sorted(shared):
        per = {rank: collective_ops(run, cid) for rank, run in ranks.items()}
        kinds = sorted({g for ops in per.values() for g in ops})
        for graph in kinds:
            settled = [r for r in ranks if _graph_settled(ranks[r], cid, graph)]
            if len(settled) < 2:
                continue
            differ = _minority({r: tuple(per[r].get(graph, [])) for r in settled})
            for rank in differ:
                ref = next(r for r in settled if r not in differ)
                mine, theirs = per[rank].get(graph, []), per[ref].get(graph, [])
                i = next(
                    (i for i, (a, b) in enumerate(zip(mine, theirs, strict=False)) if a != b),
                    min(len(mine), len(theirs)),
                )
                first = (
                    f"call {i + 1}: {mine[i] if i < len(mine) else 'none'} vs "
                    f"{theirs[i] if i < len(theirs) else 'none'}"
                )
                out.append(
                    Divergence(
                        "collectives",
                        rank,
                        True,
                        f"rank {rank}'s {graph} graph of {cid} calls other collectives than "
                        f"rank {ref}'s ({first}): the ranks would wait on different collectives",
                        [
                            f"rank {r}: {', '.join(per[r].get(graph, [])) or 'no collective'}"
                            for r in settled
                        ],
                        f"{cid} {graph}",
                        _last_t(ranks[rank]),
                    )
                )
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


def _compile_skew(ranks: dict[int, Run], now: float | None) -> list[Divergence]:
    ends: dict[str, dict[int, float]] = {}
    for rank, run in ranks.items():
        for c in run.compiles.values():
            end = _end_t(c)
            if end is not None and not (c.record and c.record.fail_type):
                ends.setdefault(c.compile_id, {})[rank] = end
    out = []
    for cid, done in ends.items():
        fastest = min(done, key=lambda r: done[r])
        first = done[fastest]
        evidence = [
            f"rank {r}: finished {cid} at +{text.secs(t - first)}" for r, t in sorted(done.items())
        ]
        for rank, run in ranks.items():
            late = done.get(rank)
            still = late is None and now is not None and cid in _compiling(run) and run.live
            lag = (late if late is not None else now or first) - first
            if (late is None and not still) or lag <= SKEW_S:
                continue
            what = (
                f"finished compiling {cid} {text.secs(lag)} after rank {fastest}"
                if late is not None
                else f"is still compiling {cid}, {text.secs(lag)} after rank {fastest} finished it"
            )
            out.append(
                Divergence(
                    "compile_skew",
                    rank,
                    True,
                    f"rank {rank} {what} (more than {text.secs(SKEW_S)}): the others wait in the "
                    f"next collective; {NCCL_TIMEOUT}",
                    evidence + ([f"rank {rank}: still compiling {cid}"] if still else []),
                    cid,
                    first + SKEW_S,
                )
            )
    return out


def _crash(ranks: dict[int, Run], session: Session) -> list[Divergence]:
    """The first rank that failed, and what became of the others. A failure every
    rank shares (the same error, or all stopped alike) is no divergence, nor one
    that followed a stop dlcprof passed on."""
    failed = sorted(
        (
            run
            for run in ranks.values()
            if run.status in FAILED and outcome.stopped_before(run, session) is None
        ),
        key=lambda run: run.finished_t or 0.0,
    )
    if not failed:
        return []
    if len(failed) == len(ranks) and len({(r.status, _error(r)) for r in failed}) == 1:
        return []
    first = failed[0]
    rank = _rank(first)
    fates = [f"rank {r}: {_fate(o, first)}" for r, o in ranks.items() if r != rank]
    return [
        Divergence(
            "crash",
            rank,
            True,
            f"rank {rank} {FAILED[first.status]}{_error(first)}; " + "; ".join(fates),
            [f"rank {r}: {o.status}{_error(o)}" for r, o in ranks.items()],
            "",
            first.finished_t or 0.0,
        )
    ]


def _error(run: Run) -> str:
    e = run.errors[-1] if run.errors else None
    return f" ({text.short(e.message, 120)})" if e else ""


def _fate(other: Run, failed: Run) -> str:
    """What became of another rank after one failed."""
    if other.live:
        return "runs on"
    when = ""
    if other.finished_t is not None and failed.finished_t is not None:
        when = f" {text.secs(max(0.0, other.finished_t - failed.finished_t))} later"
    if other.status == "ended":
        return f"killed{when} (ended without its exit hook)"
    return f"{FAILED.get(other.status, other.status)}{when}{_error(other)}"
