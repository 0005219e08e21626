"""Ranks grouped by what they did: ranks with the same compile ids,
guard failures, cache pattern, graph op counts, graph breaks and failures
form one group, so a job of 1,024 ranks reads as "1,023 ranks alike; rank 1
alone recompiled 4/1: …", outliers first, never as 1,024 rows.

A rank's ``RankSignature`` is read from its run (a live job's, or an imported
rank whose events the session keeps) or from its ``RankSummarized`` (what
``dlcprof import`` keeps of every rank): the importer computes the summary
with ``signature`` itself, so both agree. Times are left out: two ranks that
did the same work in different seconds are alike; so are the values each
process has its own of (object ids and addresses in guards, pids, temporary
folders): 256 real processes that did the same work are one group.

A rank's ``RankRecord`` (its signature, compile seconds and where it ran) is
the one source of its counts: the groups table and the Ranks table
(``figures/job/ranks.py``) both read them from it.
"""

from __future__ import annotations

import re
import statistics
from dataclasses import field

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.job.rank_runs import by_rank, rank_of, rank_runs
from dlcprof.session import Run, Session

# Differences named in a group's words before "…".
_SHOWN = 2
# Past this many ranks' runs a view (the Ranks table, the lanes) lists this
# many, the outliers (the smallest groups' ranks) first: never 1,024 rows.
RUNS_SHOWN = 32
_ID_RE = re.compile(r"\d+")
_RESETS_RE = re.compile(r"reset(\d+):")  # events.after_reset's prefix
# What differs between processes that did the same work, and what stands for
# it: the object ids Dynamo's guards compare (``___check_obj_id(x, 1404…)``,
# ``id(x) == 1404…``, "with LHS value: {'id': 1404…}", "Object 1404… of type …
# is weakref'd"), addresses in reprs, pids, temporary folders' random names.
# Each with the texts it cannot match without: words that hold none are not
# searched (most hold none; the pid's, any case, is always searched).
_OBJ = r"(?:[^()]|\([^()]*\))*?"  # a guard's argument, one level of calls in it
_PER_PROCESS: tuple[tuple[tuple[str, ...], re.Pattern[str], str], ...] = (
    (("___check_",), re.compile(rf"(___check_\w*id\({_OBJ},\s*)-?\d+"), r"\g<1><id>"),
    (("id(",), re.compile(rf"(\bid\({_OBJ}\)\s*[!=]=\s*)-?\d+"), r"\g<1><id>"),
    # A guard's value, a finalized object.
    (("'id': ", "Object "), re.compile(r"('id': |\bObject )\d+"), r"\g<1><id>"),
    (("0x",), re.compile(r"\b0x[0-9a-fA-F]{4,}\b"), "0x<address>"),
    ((), re.compile(r"\b(pid[ =:]\s*)\d+", re.IGNORECASE), r"\g<1><pid>"),
    (("/tmp",), re.compile(r"(?<=/)tmp[A-Za-z0-9_]{6,}\b"), "tmp<random>"),
)
CACHE_COLUMN = "cache hit/miss (fwd+bwd)"  # every Inductor graph's: forward and backward


@data(frozen=True)
class RankSignature:
    """What grouping compares of a rank (each a sorted tuple of words)."""

    compiles: tuple[str, ...]  # compile ids finished, forward and backward
    guard_failures: tuple[str, ...]  # each recompile's failed guard (one per recompile)
    cache: tuple[str, ...]  # "compile id: hit|miss|bypass"
    graph_ops: tuple[str, ...]  # "compile id: op count" of each graph Dynamo made
    breaks: tuple[str, ...]  # "reason at file:line"
    failures: tuple[str, ...]  # "compile id: fail type"


def id_order(compile_id: str) -> tuple[int, ...]:
    """Compile ids in numeric order ("4/10" after "4/2"), a backward after its
    forward, the ids after a ``torch._dynamo.reset()`` ("reset1:0/0") after all
    before it."""
    resets = _RESETS_RE.match(compile_id)
    rest = compile_id[resets.end() :] if resets else compile_id
    numbers = tuple(int(n) for n in _ID_RE.findall(rest))
    return (int(resets[1]) if resets else 0, *numbers, rest.endswith(ev.BACKWARD))


def process_free(words: str) -> str:
    """``words`` with what each process has its own of (ids, addresses, pids,
    temporary folders) replaced by a placeholder."""
    for needles, pattern, stand_in in _PER_PROCESS:
        if not needles or any(n in words for n in needles):
            words = pattern.sub(stand_in, words)
    return words


def signature(run: Run) -> RankSignature:
    done = sorted(
        (c for c in run.compiles.values() if c.record is not None),
        key=lambda c: id_order(c.compile_id),
    )
    return RankSignature(
        compiles=tuple(c.compile_id for c in done),
        guard_failures=tuple(sorted(process_free(r.reason) for r in run.recompiles)),
        cache=tuple(f"{c.compile_id}: {c.cache}" for c in done if c.cache),
        graph_ops=tuple(
            f"{c.compile_id}: {c.record.graph_op_count}"
            for c in done
            if c.record is not None and c.record.graph_op_count is not None
        ),
        breaks=tuple(
            sorted({process_free(f"{b.reason} at {b.location}") for b in run.graph_breaks})
        ),
        failures=tuple(
            f"{c.compile_id}: {c.record.fail_type}"
            for c in done
            if c.record is not None and c.record.fail_type
        ),
    )


def summary_signature(s: ev.RankSummarized) -> RankSignature:
    return RankSignature(
        tuple(s.compiles),
        tuple(s.guard_failures),
        tuple(s.cache),
        tuple(s.graph_ops),
        tuple(s.breaks),
        tuple(s.failures),
    )


@data(frozen=True)
class RankRecord:
    """One rank: what it did (its signature), its compile seconds and where it
    ran; every count of it either table shows comes from here."""

    rank: int
    run_id: str | None  # its run, when the session holds its events
    host: str
    pid: int
    signature: RankSignature
    compile_s: float | None  # torch's wall time of its compiles; None: it compiled nothing

    @property
    def compiles(self) -> int:
        """Frame compiles (forward)."""
        return sum(not c.endswith(ev.BACKWARD) for c in self.signature.compiles)

    @property
    def recompiles(self) -> int:
        return len(self.signature.guard_failures)

    @property
    def graph_breaks(self) -> int:
        """Distinct breaks (reason and place), each once however often hit."""
        return len(self.signature.breaks)

    @property
    def cache_counts(self) -> tuple[int, int]:
        """(hits, misses) of every Inductor graph, forward and backward (CACHE_COLUMN)."""
        states = [c.rsplit(": ", 1)[-1] for c in self.signature.cache]
        return states.count("hit"), states.count("miss")


def records(session: Session) -> dict[int, RankRecord]:
    """Every rank's record, by rank: an imported session's summaries (its
    every rank), else the runs of a live job's ranks."""
    if session.rank_summaries:
        return {
            s.rank: RankRecord(
                s.rank,
                s.run_id,
                s.host,
                s.pid,
                summary_signature(s),
                s.compile_s if s.compiles else None,
            )
            for s in sorted(session.rank_summaries.values(), key=lambda s: s.rank)
        }
    return {rank: run_record(rank, run) for rank, run in by_rank(session).items()}


def run_record(rank: int, run: Run) -> RankRecord:
    p = run.process
    return RankRecord(
        rank,
        run.run_id,
        p.host if p else "",
        p.pid if p else 0,
        signature(run),
        run.compile_wall_s if run.compiles else None,
    )


@data
class RankGroup:
    """Ranks alike. ``run_id``: the run of its first rank whose events the
    session holds (None: an imported group none of whose ranks' events it keeps)."""

    members: list[RankRecord]
    differs: list[str] = field(default_factory=list)  # from the largest group; [] for it

    @property
    def ranks(self) -> list[int]:
        return [m.rank for m in self.members]

    @property
    def first(self) -> RankRecord:
        return self.members[0]

    @property
    def signature(self) -> RankSignature:
        return self.first.signature

    @property
    def run_id(self) -> str | None:
        return next((m.run_id for m in self.members if m.run_id), None)

    @property
    def name(self) -> str:
        return rank_span(self.ranks)

    @property
    def words(self) -> str:
        """ "rank 1 alone recompiled 4/1: …" or "255 ranks alike"."""
        if not self.differs:
            return (
                f"{text.count(len(self.ranks))} ranks alike"
                if len(self.ranks) > 1
                else (f"{self.name} alone")
            )
        who = f"{self.name} alone" if len(self.ranks) == 1 else f"{self.name} ({len(self.ranks)})"
        more = f"; +{len(self.differs) - _SHOWN} more" if len(self.differs) > _SHOWN else ""
        return f"{who} {'; '.join(self.differs[:_SHOWN])}{more}"


def rank_span(ranks: list[int]) -> str:
    """ "rank 3", "ranks 0, 2–255": runs of consecutive ranks as ranges."""
    ranks = sorted(ranks)
    parts: list[str] = []
    start = prev = ranks[0]
    for r in [*ranks[1:], None]:
        if r is not None and r == prev + 1:
            prev = r
            continue
        parts.append(str(start) if start == prev else f"{start}–{prev}")
        if r is not None:
            start = prev = r
    return ("rank " if len(ranks) == 1 else "ranks ") + ", ".join(parts)


def rank_groups(session: Session) -> list[RankGroup]:
    """The job's ranks grouped by signature, outliers (the smallest groups) first,
    the largest last; each but the largest says how it differs from it."""
    return grouped(list(records(session).values()))


def grouped(members: list[RankRecord]) -> list[RankGroup]:
    """``members`` (by rank) grouped by signature, as ``rank_groups``."""
    groups: dict[RankSignature, RankGroup] = {}
    for m in members:
        groups.setdefault(m.signature, RankGroup([])).members.append(m)
    ordered = sorted(groups.values(), key=lambda g: (len(g.ranks), g.ranks[0]))
    if len(ordered) > 1:
        major = max(ordered, key=lambda g: (len(g.ranks), -g.ranks[0]))
        for g in ordered:
            if g is not major:
                g.differs = differences(g.signature, major.signature)
        ordered.remove(major)
        ordered.append(major)
    return ordered


def shown_runs(session: Session) -> list[Run]:
    """The ranks' runs a view lists: every one by rank, or past ``RUNS_SHOWN``
    that many, the ranks of the smallest groups first."""
    runs = rank_runs(session)
    if len(runs) <= RUNS_SHOWN:
        return runs
    size = {r: len(g.ranks) for g in rank_groups(session) for r in g.ranks}
    return sorted(runs, key=lambda r: (size.get(rank_of(r), 0), rank_of(r)))[:RUNS_SHOWN]


def shown_groups(groups: list[RankGroup]) -> list[RankGroup]:
    """The groups a table lists: every one, or past ``RUNS_SHOWN`` the smallest
    ones and the largest, that many in all."""
    return groups if len(groups) <= RUNS_SHOWN else groups[: RUNS_SHOWN - 1] + groups[-1:]


def groups_note(groups: list[RankGroup]) -> str | None:
    """What ``shown_groups`` left out, where it did."""
    if len(groups) <= RUNS_SHOWN:
        return None
    return (
        f"groups: {RUNS_SHOWN} of {text.count(len(groups))} listed, the smallest and the "
        "largest; the JSON report holds every one"
    )


def shown_words(session: Session) -> str:
    """Which ranks ``shown_runs`` lists, where it cannot list them all."""
    if session.rank_summaries and len(rank_runs(session)) <= RUNS_SHOWN:
        return "the first rank of each group"
    return "the smallest groups' ranks first"


def differences(sig: RankSignature, major: RankSignature) -> list[str]:
    """How a group's signature differs from the largest group's, each in words."""

    def extra(mine: tuple[str, ...], theirs: tuple[str, ...]) -> list[str]:
        return [x for x in mine if x not in set(theirs)]

    out = []
    added, missing = extra(sig.compiles, major.compiles), extra(major.compiles, sig.compiles)
    failed = extra(sig.guard_failures, major.guard_failures)
    if failed:
        out.append(f"recompiled {_ids(added)}: {failed[0]}")
    elif added:
        out.append(f"compiled {_ids(added)} where the others did not")
    if missing:
        out.append(f"did not compile {_ids(missing)}")
    for x in extra(sig.failures, major.failures):
        out.append(f"failed {x}")
    for x in extra(sig.breaks, major.breaks):
        out.append(f"broke its graph: {x}")
    for x in extra(major.breaks, sig.breaks):
        out.append(f"did not break: {x}")
    common = set(sig.compiles) & set(major.compiles)
    for field_name, what in (("cache", "cache"), ("graph_ops", "graph ops")):
        mine = {k: v for k, _, v in (x.partition(": ") for x in getattr(sig, field_name))}
        theirs = {k: v for k, _, v in (x.partition(": ") for x in getattr(major, field_name))}
        changed = [k for k in sorted(common, key=id_order) if mine.get(k) != theirs.get(k)]
        if changed:
            k = changed[0]
            more = f" (+{len(changed) - 1} more)" if len(changed) > 1 else ""
            out.append(f"{what} {k}: {mine.get(k, 'none')} vs {theirs.get(k, 'none')}{more}")
    return out or ["differ in what they compiled"]


def _ids(ids: list[str]) -> str:
    """Forward ids, a backward said with its forward: "0/1, 4/1 (+backward)"."""
    forward = [i for i in ids if not i.endswith(ev.BACKWARD)]
    backward = {i.removesuffix(ev.BACKWARD) for i in ids if i.endswith(ev.BACKWARD)}
    shown = forward or sorted(backward, key=id_order)
    said = ", ".join(shown[:4]) + (f" +{len(shown) - 4} more" if len(shown) > 4 else "")
    return said + (" (+backward)" if forward and backward else "")


def summary(groups: list[RankGroup]) -> str:
    """One line: "255 ranks alike; rank 1 alone recompiled 4/1: …"."""
    if not groups:
        return ""
    major = groups[-1]
    if len(groups) == 1:
        return f"all {len(major.ranks)} ranks alike" if len(major.ranks) > 1 else major.name
    lead = (
        f"{text.count(len(major.ranks))} ranks alike ({major.name})"
        if len(major.ranks) > 1
        else f"the {len(groups)} ranks differ"
        if len(groups) == 2
        else f"{len(groups)} ranks, no two alike; against {major.name}"
    )
    rest = "; ".join(g.words for g in groups[:-1][:3])
    more = f"; +{len(groups) - 4} more groups" if len(groups) > 4 else ""
    return f"{lead}; {rest}{more}"


def group_stats(g: RankGroup) -> str:
    """The group's compile wall time: one rank's, or the median and range."""
    secs = [m.compile_s for m in g.members if m.compile_s is not None]
    if not secs:
        return text.na("no compile")
    lo, hi = min(secs), max(secs)
    if text.secs(lo) == text.secs(hi):
        return text.secs(lo)
    return f"{text.secs(statistics.median(secs))} ({text.secs(lo)}–{text.secs(hi)})"


GROUP_COLUMNS = (
    "ranks",
    "count",
    "compiles",
    "recompiles",
    "graph breaks",
    CACHE_COLUMN,
    "compile",
    "differs",
)


def group_cells(g: RankGroup, groups: int) -> list[str]:
    """A group as the tables show it (GROUP_COLUMNS order); ``groups``: how
    many the job has (a lone group is told against no other)."""
    m = g.first
    hits, misses = m.cache_counts
    return [
        g.name.removeprefix("ranks ").removeprefix("rank "),
        text.count(len(g.ranks)),
        text.count(m.compiles),
        text.count(m.recompiles),
        text.count(m.graph_breaks),
        f"{hits}/{misses}",
        group_stats(g),
        "; ".join(g.differs) if g.differs else _major_words(g, groups),
    ]


def _major_words(g: RankGroup, groups: int) -> str:
    if groups == 1:
        return "every rank alike" if len(g.ranks) > 1 else "the only rank"
    if len(g.ranks) == 1 and groups == 2:
        return "the other rank is told against this one"
    if len(g.ranks) == 1:
        return "no two ranks alike: the others are told against this one"
    return "the largest group: the others are told against it"
