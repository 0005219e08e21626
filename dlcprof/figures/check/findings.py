"""What one run compiled, broke and recompiled, as findings a gate counts and a
baseline matches: each with the user's file:line, Dynamo's reason or the guard
that failed, torch's hint, and the key that identifies it across runs (never
a compile id: ids move when anything before them changes)."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.cache_misses import misses
from dlcprof.figures.graph_breaks import breaks, function_name
from dlcprof.figures.recompiles import newest_reason, normalize_reason, recompile_rows
from dlcprof.session import Compile, Run


@data(frozen=True)
class Finding:
    kind: str  # "graph break" | "recompile" | "compiled frame"
    where: str  # "file:line" in the user's code; "" when torch named none
    reason: str  # Dynamo's reason, the guard that failed, or the frame compiled
    hint: str  # torch's first hint, "" when none
    compile_id: str
    key: tuple[str, ...]  # what a baseline matches it by
    gb_id: str = ""  # a graph break's id in torch's catalogue ("GB0124"), "" when none
    detail: str = ""  # "file:line" inside a library where it broke, beside the user's line

    @property
    def file(self) -> str:
        return split_where(self.where)[0]

    @property
    def line(self) -> int | None:
        return split_where(self.where)[1]

    def words(self) -> str:
        """ "graph break: Data-dependent branching (broke inside trl/x.py:9) (hint: Use
        `torch.cond` ...) [GB0170]"."""
        inside = ""
        if self.detail:
            inside = (
                f" {text.broke_inside(self.detail)}"
                if self.kind == "graph break"
                else f" (recompiled inside {text.short_path(self.detail)})"
            )
        hint = f" (hint: {self.hint})" if self.hint else ""
        return f"{self.kind}: {self.reason}{inside}{hint}" + (
            f" [{self.gb_id}]" if self.gb_id else ""
        )


def split_where(where: str) -> tuple[str, int | None]:
    """ "a/b.py:23" -> ("a/b.py", 23); a place without a line -> (place, None)."""
    file, _, line = where.rpartition(":")
    return (file, int(line)) if file and line.isdigit() else (where, None)


def _frame(c: Compile) -> tuple[str, str]:
    """(the frame's "file:first line", its function) from torch's compile record."""
    m = c.record.metrics if c.record is not None else {}
    file, first = str(m.get("co_filename") or ""), m.get("co_firstlineno")
    name = function_name(str(m.get("co_name") or ""))
    return (f"{file}:{first}" if file and first is not None else file), name


def _frames(run: Run) -> dict[str, tuple[str, str]]:
    """Dynamo's frame number ("0" of "0/1") -> (where, function), from any compile of it."""
    out: dict[str, tuple[str, str]] = {}
    for c in run.compiles.values():
        where, name = _frame(c)
        if where and not c.is_backward:
            out.setdefault(c.compile_id.rsplit("/", 1)[0], (where, name))
    return out


def graph_breaks(run: Run) -> list[Finding]:
    """Each break once, however many frames hit it (figures/graph_breaks.py),
    and a break a compile raised instead (``fullgraph=True``)."""
    out = [
        Finding(
            "graph break",
            b.location,
            b.reason,
            b.hints[0] if b.hints else "",
            b.compile_ids[0] if b.compile_ids else "",
            (b.location, b.reason),
            b.gb_id,
            b.detail,
        )
        for b in breaks(run)
    ]
    raised = run.compile_raised
    if raised is not None and raised.error.startswith(UNSUPPORTED):
        reason = raised.error.removeprefix(UNSUPPORTED).strip() or raised.error
        said = f"{reason} (the compile raised it: it allowed no break, as fullgraph=True does)"
        inside = "" if text.in_torch(raised.inside) else raised.inside  # not Dynamo's raise
        key = (raised.location, reason)
        out.append(
            Finding("graph break", raised.location, said, "", "", key, raised.gb_id, detail=inside)
        )
    return out


# Dynamo's exception for a break (torch._dynamo.exc.Unsupported): raised into the
# program only where the compile allows none (fullgraph=True, error_on_graph_break).
UNSUPPORTED = "Unsupported:"


def reached(run: Run) -> dict[str, str]:
    """Compile id -> the program's own line whose call reached that compile (the
    compile-cost probe reads it once per compile; absent where none was seen)."""
    return {cid: c.cost.called_at for cid, c in run.compiles.items() if c.cost and c.cost.called_at}


def recompiles(run: Run) -> list[Finding]:
    """Each recompile: the guard that failed (newest cache entry), at the user's
    line that installed it, else at the recompiled function's first line; one
    inside a library (a trainer's) at the program's line whose call reached
    it, the library's place beside it."""
    frames = _frames(run)
    called = reached(run)
    # The recompile's own stack first.
    called.update(
        {rc.compile_id: rc.called_at for rc in run.recompiles if rc.compile_id and rc.called_at}
    )
    out = []
    for row in recompile_rows(run):
        cid = row.compile_id or ""
        # The newest entry's guard, its compile id off: normalizing the whole
        # reason first would join every entry's guard into one.
        reason = newest_reason(row.reason)
        frame_at, function = frames.get(cid.rsplit("/", 1)[0], ("", ""))
        guard = normalize_reason(reason.guard) if reason else row.reason
        what = f"{function}: {guard}" if function else guard
        where, detail = (reason.at if reason else "") or frame_at, ""
        if not text.users_code(split_where(where)[0]) and cid in called:
            where, detail = called[cid], where
        out.append(
            Finding(
                "recompile",
                where,
                what,
                "",  # torch gives no hint with a recompile
                cid,
                (frame_at or function, guard),
                detail=detail,
            )
        )
    return out


def compiles(run: Run) -> list[Finding]:
    """Each frame compile (forward; its backward is part of it), in order."""
    out = []
    for c in run.compiles.values():
        if c.record is None or c.is_backward:
            continue
        where, name = _frame(c)
        out.append(Finding("compiled frame", where, name or "?", "", c.compile_id, (where, name)))
    return out


def cache_misses(run: Run, base: Run | None = None) -> list[Finding]:
    """Each compile that missed torch's caches, at its frame, with why (against
    ``base``, its run in a baseline session, where given)."""
    frames = _frames(run)
    out = []
    for m in misses(run, base):
        where, function = frames.get(m.compile_id.rsplit("/", 1)[0], ("", ""))
        of = "the backward of " if m.compile_id.endswith(ev.BACKWARD) else ""
        what = f"{of}{function or '?'} ({', '.join(m.layers)})"
        out.append(
            Finding(
                "cache miss",
                where,
                f"{what}: {'; '.join(m.causes)}",
                "",
                m.compile_id,
                (where, function),
            )
        )
    return out


def findings_of(run: Run, base: Run | None = None) -> dict[str, list[Finding]]:
    """Every kind of finding of ``run``, by the budget that counts it (a cache
    miss explained against ``base``, its baseline run, where given)."""
    return {
        "graph_breaks": graph_breaks(run),
        "recompiles": recompiles(run),
        "compiles": compiles(run),
        "cache_misses": cache_misses(run, base),
    }


@data(frozen=True)
class CompileTime:
    seconds: float
    measure: str  # "cpu" | "wall"

    def words(self) -> str:
        return f"{text.secs(self.seconds)} {MEASURE_WORDS[self.measure]}"


MEASURE_WORDS = {"cpu": "CPU", "wall": "wall"}
# What each measure is, for the output and docs/ci.md.
MEASURE_SAID = {
    "cpu": "compile time = CPU seconds of each compile (the process's threads and the "
    "compiler children it waited for): a busy machine moves them less than wall seconds",
    "wall": "compile time = wall seconds of each compile (CPU seconds were not measured "
    "for every compile: a recording from before the probe, or the probe unavailable); "
    "moves with how busy the machine is",
    "both": "compile time = CPU seconds where a figure says CPU, wall seconds where it says "
    "wall (a run or its baseline has no CPU seconds for every compile: both sides of a "
    "comparison are then wall); wall seconds move with how busy the machine is",
}


def compile_time(run: Run, measure: str | None = None) -> CompileTime:
    """The run's compile time in ``measure``, else the steadiest it has: CPU
    seconds when every compile's were measured, else torch's wall times."""
    records = [c for c in run.compiles.values() if c.record is not None]
    # A frame Dynamo refused (the recompile limit) ran no compile to time: its
    # record has a failure and no CPU seconds, and needs none.
    timed = [c for c in records if not c.is_backward and not (c.record and c.record.fail_type)]
    has_cpu = bool(records) and all(c.cpu_s is not None for c in timed)
    if measure is None:
        measure = "cpu" if has_cpu or not records else "wall"
    if measure == "cpu":
        return CompileTime(sum(c.cpu_s or 0.0 for c in run.compiles.values()), "cpu")
    return CompileTime(run.compile_wall_s, "wall")
