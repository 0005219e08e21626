"""How long a rank waited on the compiles its peers made alone (a partial last
batch recompiling one rank): an estimate from torch's spans of those compiles,
or n/a and why. The divergence checks find the solo recompiles
(``divergence.solo_ids``); the Ranks table's blocked column and the
checks' evidence word the estimate."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.job.rank_runs import by_rank, rank_names
from dlcprof.figures.runs import is_imported
from dlcprof.session import Compile, Run, Session

BLOCKED_WHY = (
    "not measured: the collectives wait inside torch's C++ (the data-parallel "
    "wrapper's hooks, the process group), which dlcprof does not time"
)


def blocked_words(s: float | None, words: str | None) -> str:
    return text.na(words) if s is None else f"≈{text.secs(s)}, estimated: {words}"


@data(frozen=True)
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


def blocked(session: Session, solo_ids: list[tuple[int, str]], rank: int) -> Blocked:
    """How long a rank waited on the compiles its peers made alone (a partial
    last batch recompiling one rank): those compiles' spans (forward and its
    backward, as torch timed them) while this rank lived and was not compiling
    itself, given it made the call of that frame they served (its next step,
    whose collective waited). An estimate: the seconds the peer spent getting to
    and out of its compile are not in it. Anything else: n/a, and why.
    ``solo_ids``: (rank, compile id) of each recompile one rank made alone."""
    ranks = by_rank(session)
    solo = [
        (r, ranks[r].compiles[cid])
        for r, cid in solo_ids
        if r in ranks and cid in ranks[r].compiles
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
        if c.record is None:  # a log cut short during it
            return Blocked(
                None,
                f"rank {peer}'s solo recompile {c.compile_id} has no compile record (its "
                "process or log ended during it): its span is not known",
            )
        if bwd is not None and bwd.record is None:
            return Blocked(
                None,
                f"rank {peer}'s backward of its solo recompile {c.compile_id} has no "
                "compile record (its process or log ended during it): its span is not known",
            )
        spans += [_span(x) for x in (c, bwd) if x is not None]
        named.append(c.compile_id + (" + its backward" if bwd is not None else ""))
        calls = ranks[peer].graph_calls
        if calls is None or run.graph_calls is None:
            who = rank if calls is not None else peer
            why = (
                "a TORCH_TRACE log holds no call times"
                if is_imported(ranks[who])
                else "its process sent none at its end"
            )
            return Blocked(
                None,
                f"rank {who}'s graph calls were not timed ({why}): not known that "
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
