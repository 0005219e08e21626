"""One idea: the checks that find the ranks of one job disagreeing.

Each check compares only ranks that exist (that sent events) and only what
every compared rank has settled: a compile id one rank has not finished yet
is no divergence until it is past it (ended, or ``SKEW_S`` later and not
compiling it), so a clean job raises no alarm while it runs. One
``Divergence`` per finding, its headline naming the rank, what differs and
the first differing event; ``evidence`` holds the per-rank values.

Every check weighs each compared rank by the ranks it stands for: an import
past its bound keeps the events of one rank per group (``figures/job/groups.py``),
so the run of rank 0 may stand for 1,023 ranks alike and rank 137's for
itself alone; the minority is the fewest ranks of the job, never the fewest
runs, and is named by its group.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Mapping

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import outcome
from dlcprof.figures.cache_misses import miss_of
from dlcprof.figures.job.blocked import blocked
from dlcprof.figures.job.groups import rank_groups, rank_span
from dlcprof.figures.job.rank_runs import (
    by_rank,
    collective_ops,
    forward_compiles,
    graph_count,
    rank_of,
)
from dlcprof.session import Compile, Run, Session

# Later than this after the fastest rank, a rank's compile is skew (and a compile
# id it lacks, a divergence): compiles of the same graph on a loaded host vary
# by seconds, a recompile or a cold compile on one rank by far more.
SKEW_S = 10.0
NCCL_TIMEOUT = "NCCL's default timeout is 10 min"
# How a rank ended badly (Run.status).
FAILED = {"error": "failed", "crashed": "crashed", "ended": "ended without its exit hook"}
SHARED_CACHE = "shared cache: hit pattern may differ harmlessly"
# Evidence lines of a finding, one per compared rank, past which ranks with the
# same value share one line, the fewest ranks first.
EVIDENCE_SHOWN = 8


@data(frozen=True)
class Compared:
    """The ranks the checks compare: each one's run, by rank, and the job's
    ranks it stands for (itself; past an import's bound, its whole group)."""

    runs: dict[int, Run]
    stands_for: dict[int, list[int]]

    @property
    def total(self) -> int:
        return sum(len(rs) for rs in self.stands_for.values())

    def weight(self, ranks: list[int] | set[int]) -> int:
        return sum(len(self.stands_for[r]) for r in ranks)

    def name(self, rank: int) -> str:
        """ "rank 137", or the group a kept rank stands for ("ranks 0–136, 138–1023")."""
        return rank_span(self.stands_for[rank])

    def names(self, ranks: list[int]) -> str:
        return rank_span([x for r in ranks for x in self.stands_for[r]])

    def rest(self, them: list[int], us: list[int]) -> str:
        """``them``, said against ``us``: "the others" when they are all the rest."""
        if set(them) | set(us) != set(self.runs):
            return self.names(them)
        n = self.weight(them)
        return "the others" if n == len(them) else f"the other {text.count(n)}"

    def evidence(self, values: Mapping[int, str]) -> list[str]:
        """ "rank 3: value" per compared rank; past EVIDENCE_SHOWN ranks, one line
        per value, the fewest ranks first."""
        if len(values) <= EVIDENCE_SHOWN:
            return [f"{self.name(r)}: {v}" for r, v in values.items()]
        same: dict[str, list[int]] = {}
        for r, v in values.items():
            same.setdefault(v, []).append(r)
        lines = sorted(same.items(), key=lambda kv: (self.weight(kv[1]), min(kv[1])))
        out = [f"{self.names(rs)}: {v}" for v, rs in lines[:EVIDENCE_SHOWN]]
        if len(lines) > EVIDENCE_SHOWN:
            out.append(f"+{len(lines) - EVIDENCE_SHOWN} more values")
        return out


def compared(session: Session) -> Compared:
    """The ranks whose events the session holds, each standing for itself, or,
    where it holds one rank of a group of an import, for the whole group."""
    runs = by_rank(session)
    stands: dict[int, list[int]] = {r: [r] for r in runs}
    if session.rank_summaries:
        for g in rank_groups(session):
            kept = [r for r in g.ranks if r in runs]
            if kept:
                stands[kept[0]] = [r for r in g.ranks if r == kept[0] or r not in runs]
    return Compared(runs, stands)


@data(frozen=True)
class Check:
    """One divergence check: its name (``Divergence.check``), what it compares in
    words, and what it finds among the ranks (``now``: a live session's clock)."""

    name: str
    words: str
    find: Callable[[Compared, Session, float | None], list[Divergence]]


@data
class Divergence:
    """One check that found ranks disagreeing."""

    check: str  # a Check's name
    rank: int  # the rank that differs
    alarm: bool  # False: a note (e.g. SHARED_CACHE)
    headline: str  # one line for the banner: the rank, what differs, the first differing event
    evidence: list[str]  # lines that show it (per-rank values side by side)
    subject: str = ""  # what it is about (a compile id; "" for the whole rank)
    t: float = 0.0  # when the first differing event happened
    # About a frame of torch's own code (DDP's or Dynamo's wrapper around the
    # user's forward): it follows from the user's frame, so it is listed after.
    in_torch: bool = False
    solo: bool = False  # a compile id the rank made and the others did not

    @property
    def key(self) -> tuple[str, int, str]:
        """The finding, whatever its words say as it grows (a skew still counting)."""
        return (self.check, self.rank, self.subject)


def divergences(session: Session, now: float | None = None) -> list[Divergence]:
    """Every finding of every check, the first differing event first. ``now``:
    the clock of a live session (a rank that is late shows while it is);
    None judges only what has ended or finished."""
    job = compared(session)
    ranks = job.runs
    if len(ranks) < 2:
        return []
    found = [d for check in CHECKS for d in check.find(job, session, now)]
    found.sort(key=lambda d: (d.in_torch, d.t, _ORDER[d.check], d.rank))
    solo = solo_ids(found)
    told: set[int] = set()
    for d in found:  # a solo recompile's first finding: what the others waited (the table's words)
        if (d.rank, d.subject) in solo and d.rank not in told:
            told.add(d.rank)
            others = [r for r in ranks if r != d.rank]
            d.evidence += [
                f"rank {r} blocked: {blocked(session, solo, r).said}"
                for r in others[:EVIDENCE_SHOWN]
            ]
            if len(others) > EVIDENCE_SHOWN:
                d.evidence.append(
                    f"+{len(others) - EVIDENCE_SHOWN} more ranks: the Ranks table's blocked column"
                )
    return found


def solo_ids(found: list[Divergence]) -> list[tuple[int, str]]:
    """(rank, compile id) of each recompile a rank made while the others did not."""
    return [
        (d.rank, d.subject)
        for d in found
        if d.check == "compile_ids" and d.solo and not d.subject.endswith("/0")
    ]


def alarms(found: list[Divergence]) -> list[Divergence]:
    return [d for d in found if d.alarm]


def summary(found: list[Divergence], ranks: int, of: int = 0, groups: int = 1) -> str:
    """The checks' verdict in one line. ``of``: the job's ranks, where the
    session holds the events of only the first rank of each group (an import
    past its bound): the checks then compare the groups, each weighed by its
    ranks. ``groups``: how many groups the ranks make (groups.rank_groups)."""
    if ranks < 2:
        return f"divergence checks: n/a ({text.plural(ranks, 'rank')}: nothing to compare)"
    who = (
        f"{ranks} ranks"
        if of <= ranks
        else f"{text.count(of)} ranks ({ranks} groups, each compared by its first rank)"
    )
    a, notes = len(alarms(found)), len(found) - len(alarms(found))
    checked = ", ".join(c.words for c in CHECKS)
    if not found and groups > 1:
        return (
            f"divergence checks: the {who} agree on {checked}; their groups differ in what "
            "these checks do not compare (graph breaks, graph ops or guard failures)"
        )
    if not found:
        return f"divergence checks: the {who} agree ({checked})"
    parts = [text.plural(a, "divergence")] if a else []
    parts += [text.plural(notes, "note")] if notes else []
    return f"divergence checks: {', '.join(parts)} among {who}"


def verdict(session: Session, found: list[Divergence]) -> str:
    """``summary`` of a session's ranks, their groups and ``found``."""
    ranks = len(by_rank(session))
    return summary(found, ranks, len(session.rank_summaries), len(rank_groups(session)))


def _minority(job: Compared, values: Mapping[int, Hashable]) -> list[int]:
    """Ranks whose value differs from the one most of the job's ranks hold
    (each compared rank weighed by the ranks it stands for; ties: the lowest
    rank's)."""
    groups: dict[Hashable, list[int]] = {}
    for rank, v in values.items():
        groups.setdefault(v, []).append(rank)
    if len(groups) < 2:
        return []
    ref = max(groups.values(), key=lambda rs: (job.weight(rs), -min(rs)))
    return sorted(r for rs in groups.values() if rs is not ref for r in rs)


def frame_words(c: Compile) -> str:
    """The frame a compile is of: "forward at train.py:24" (what the record names)."""
    m = c.record.metrics if c.record else {}
    name, file, line = m.get("co_name"), m.get("co_filename"), m.get("co_firstlineno")
    where = f"{text.short_path(str(file))}:{line}" if file and line is not None else ""
    return " at ".join(str(x) for x in (name, where) if x) or "frame not named"


def _in_torch(c: Compile) -> bool:
    return text.in_torch(str((c.record.metrics if c.record else {}).get("co_filename") or ""))


def _diverging_frame(run: Run, c: Compile) -> str:
    """The frame a finding names, never one of torch's: a compile of torch's own
    wrapper (Dynamo's or DDP's around the user's forward) names the user's frame
    the rank compiled last, or says it is not compiled yet, so the banner does not
    send the user into torch's code."""
    if not _in_torch(c):
        return frame_words(c)
    m = c.record.metrics if c.record else {}
    where = f"{text.short_path(str(m.get('co_filename')))}:{m.get('co_firstlineno')}"
    user = [u for u in forward_compiles(run) if u.record and not _in_torch(u)]
    if user:
        latest = max(user, key=lambda u: u.record.t if u.record else 0.0)
        return f"torch's wrapper around {frame_words(latest)} ({where})"
    return f"a frame inside torch ({where}, torch's wrapper), the user's frame not compiled yet"


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


def _compile_ids(job: Compared, session: Session, now: float | None) -> list[Divergence]:
    ranks = job.runs
    held: dict[str, dict[int, Compile]] = {}
    for rank, run in ranks.items():
        for c in forward_compiles(run):
            held.setdefault(c.compile_id, {})[rank] = c
    out = []
    for cid, holders in held.items():
        first_rank = min(holders, key=lambda r: rec.t if (rec := holders[r].record) else 0.0)
        first = holders[first_rank]
        since = _end_t(first) or 0.0
        lacking = [r for r in ranks if r not in holders and _past(ranks[r], since, now)]
        if not lacking:
            continue
        frame = cid.rsplit("/", 1)[0]
        evidence = job.evidence(
            {
                r: f"frame {frame} compiled as {', '.join(_frame_ids(run, frame)) or 'nothing'}"
                for r, run in ranks.items()
            }
        )
        if job.weight(set(holders)) <= job.weight(lacking):
            others = job.rest(lacking, list(holders))
            for rank, c in sorted(holders.items()):
                reason = _reason(ranks[rank], c)
                verb = "recompiled" if not cid.endswith("/0") else "compiled"
                frame_named = _diverging_frame(ranks[rank], c)
                head = f"{job.name(rank)} {verb} {cid}, {frame_named} ({others} did not)"
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
                        solo=True,
                    )
                )
        else:
            did = job.rest(sorted(holders), lacking)
            for rank in lacking:
                out.append(
                    Divergence(
                        "compile_ids",
                        rank,
                        True,
                        f"{job.name(rank)} did not compile {cid}, "
                        f"{_diverging_frame(ranks[first_rank], first)} ({did} did)",
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


def _graph_counts(job: Compared, session: Session, now: float | None) -> list[Divergence]:
    """Judged once the ranks have ended: a graph's backward comes later, at its
    first backward pass, so counts differ for a while in any job."""
    ranks = job.runs
    if any(r.live for r in ranks.values()):
        return []
    if _blind(ranks):
        return []
    out = []
    flagged: set[int] = set()
    shared = _shared_ids(ranks)
    for cid in sorted(shared):
        counts = {rank: graph_count(run, cid) for rank, run in ranks.items()}
        for rank in _minority(job, counts):
            flagged.add(rank)
            others = sorted({n for r, n in counts.items() if r != rank})
            out.append(
                Divergence(
                    "graph_counts",
                    rank,
                    True,
                    f"{job.name(rank)} made {text.plural(counts[rank], 'Inductor graph')} of "
                    f"{cid}, the others {' or '.join(map(str, others))}",
                    job.evidence(
                        {r: f"{text.plural(n, 'graph')} of {cid}" for r, n in counts.items()}
                    ),
                    cid,
                    _last_t(ranks[rank]),
                )
            )
    totals = {rank: graph_count(run) for rank, run in ranks.items()}
    for rank in _minority(job, totals):
        if rank in flagged:
            continue
        others = sorted({n for r, n in totals.items() if r != rank})
        per_rank = {}
        for r, run in ranks.items():
            per = ", ".join(
                f"{c.compile_id}: {graph_count(run, c.compile_id)}"
                for c in forward_compiles(run)
                if graph_count(run, c.compile_id)
            )
            per_rank[r] = text.plural(totals[r], "graph") + (f" ({per})" if per else "")
        out.append(
            Divergence(
                "graph_counts",
                rank,
                True,
                f"{job.name(rank)} ends with {text.plural(totals[rank], 'Inductor graph')}, "
                f"the others with {' or '.join(map(str, others))}",
                job.evidence(per_rank),
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


def _cache(job: Compared, session: Session, now: float | None) -> list[Divergence]:
    ranks = job.runs
    states: dict[int, dict[str, str]] = {
        rank: {c.compile_id: c.cache for c in forward_compiles(run) if c.cache}
        for rank, run in ranks.items()
    }
    shared = set.intersection(*(set(s) for s in states.values()))
    order = [c.compile_id for c in forward_compiles(next(iter(ranks.values())))]
    seq = [cid for cid in order if cid in shared]
    if not seq:
        return []
    differ = _minority(job, {rank: tuple(s[cid] for cid in seq) for rank, s in states.items()})
    if not differ:
        return []
    together = shared_cache(list(ranks.values()))
    evidence = job.evidence(
        {rank: ", ".join(f"{cid} {states[rank][cid]}" for cid in seq) for rank in ranks}
    )
    if together:
        process = ranks[differ[0]].process
        folder = process.cache_dir if process else None
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
    alike = [r for r in ranks if r not in differ]
    ref = max(alike, key=lambda r: (job.weight([r]), -r))
    out = []
    for rank in differ:
        cid = next(c for c in seq if states[rank][c] != states[ref][c])
        c = ranks[rank].compiles[cid]
        # A lone miss where the others hit, by the key component that differs
        # from the reference rank's lookup (or its folder's state).
        miss = None
        if states[ref][cid] == "hit":
            miss = miss_of(ranks[rank], cid, ranks[ref], f"{job.name(ref)}")
        if miss is not None:
            missed = " and the ".join(miss.layers)
            why = "; ".join(miss.causes)
            headline = (
                f"{job.name(rank)} missed the {missed} on {cid} where "
                f"{job.rest(alike, differ)} hit: {why} ({tail})"
            )
        else:
            headline = (
                f"{job.name(rank)} had a cache {states[rank][cid]} on {cid} where "
                f"{job.name(ref)} had a {states[ref][cid]}: {tail}"
            )
        out.append(
            Divergence(
                "cache", rank, alarm, headline, evidence, "", c.record.t if c.record else 0.0
            )
        )
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


def _collectives(job: Compared, session: Session, now: float | None) -> list[Divergence]:
    ranks = job.runs
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
            differ = _minority(job, {r: tuple(per[r].get(graph, [])) for r in settled})
            for rank in differ:
                ref = max(
                    (r for r in settled if r not in differ), key=lambda r: (job.weight([r]), -r)
                )
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
                        f"{job.name(rank)}'s {graph} graph of {cid} calls other collectives than "
                        f"{job.name(ref)}'s ({first}): the ranks would wait on different "
                        "collectives",
                        job.evidence(
                            {
                                r: ", ".join(per[r].get(graph, [])) or "no collective"
                                for r in settled
                            }
                        ),
                        f"{cid} {graph}",
                        _last_t(ranks[rank]),
                    )
                )
    return out


def _compile_skew(job: Compared, session: Session, now: float | None) -> list[Divergence]:
    ranks = job.runs
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
        evidence = job.evidence(
            {r: f"finished {cid} at +{text.secs(t - first)}" for r, t in sorted(done.items())}
        )
        for rank, run in ranks.items():
            late = done.get(rank)
            still = late is None and now is not None and cid in _compiling(run) and run.live
            lag = (late if late is not None else now or first) - first
            if (late is None and not still) or lag <= SKEW_S:
                continue
            what = (
                f"finished compiling {cid} {text.secs(lag)} after {job.name(fastest)}"
                if late is not None
                else (
                    f"is still compiling {cid}, {text.secs(lag)} after {job.name(fastest)} "
                    "finished it"
                )
            )
            out.append(
                Divergence(
                    "compile_skew",
                    rank,
                    True,
                    f"{job.name(rank)} {what} (more than {text.secs(SKEW_S)}): the others wait "
                    f"in the next collective; {NCCL_TIMEOUT}",
                    evidence + ([f"rank {rank}: still compiling {cid}"] if still else []),
                    cid,
                    first + SKEW_S,
                )
            )
    return out


def _crash(job: Compared, session: Session, now: float | None) -> list[Divergence]:
    """The first rank that failed, and what became of the others. A failure every
    rank shares (the same error, or all stopped alike) is no divergence, nor one
    that followed a stop dlcprof passed on."""
    ranks = job.runs
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
    rank = rank_of(first)
    fates = job.evidence({r: _fate(o, first) for r, o in ranks.items() if r != rank})
    return [
        Divergence(
            "crash",
            rank,
            True,
            f"{job.name(rank)} {FAILED[first.status]}{_error(first)}; " + "; ".join(fates),
            job.evidence({r: f"{o.status}{_error(o)}" for r, o in ranks.items()}),
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


# Every check, in the order findings of the same moment are listed.
CHECKS = (
    Check("compile_ids", "compile ids", _compile_ids),
    Check("graph_counts", "graph counts", _graph_counts),
    Check("cache", "cache hits", _cache),
    Check("collectives", "collectives", _collectives),
    Check("compile_skew", "compile skew", _compile_skew),
    Check("crash", "crashes", _crash),
)
_ORDER = {c.name: i for i, c in enumerate(CHECKS)}
