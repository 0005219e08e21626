"""Recompiles and shape sweeps: why a frame compiled again, what it cost, and
what dynamic shapes saved over static ones (the paper's finding 3)."""

from __future__ import annotations

import re

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.benchmark import within_spread
from dlcprof.session import Run, Session
from dlcprof.stats import median_iqr

_CID_PREFIX = re.compile(r"^\s*\[?\d+/\d+\]?\s*:\s*")
_SPLIT = re.compile(r";\s+(?=\[?\d+/\d+\]?\s*:)")


def reason_parts(reason: str) -> list[str]:
    """Dynamo lists one failed guard per cached entry, newest first, joined by
    "; " ("0/1: size mismatch ...; 0/0: size mismatch ...")."""
    parts = [p.strip() for p in _SPLIT.split(reason.strip())]
    return [p for p in parts if p]


def normalize_reason(reason: str) -> str:
    """A recompile reason without compile ids ("0/1: ..."), for matching."""
    return "; ".join(_CID_PREFIX.sub("", p) for p in reason_parts(reason))


@data(frozen=True)
class Reason:
    guard: str  # the guard that failed against the newest cache entry, one line
    at: str  # "file:line" in the user's code that installed it, "" when not said
    older: int  # how many older entries failed too

    @property
    def newest(self) -> str:
        """The guard and where it came from, on one line."""
        return f"{self.guard} at {self.at}" if self.at else self.guard

    def __str__(self) -> str:
        return self.newest + (f" (+{self.older} older entries)" if self.older else "")


# Dynamo's guard line ends "  # <code>  # <file>:<line> in <fn> (<its own frame>)",
# the file cut to its last characters; some reasons add a "User stack trace:"
# whose frames name files in full.
_GUARD_AT = re.compile(r"\s+#\s*(\S*:\d+) in \S+(?:\s*\(.*\))?\s*$")
_STACK_FRAME = re.compile(r'File "([^"]+)", line (\d+)')


def newest_reason(reason: str | None) -> Reason | None:
    """The newest failed guard on one line, with the user's file:line of it (a
    multi-line reason's stack folds into that location)."""
    if not reason:
        return None
    parts = reason_parts(reason) or [reason.strip()]
    first, _, rest = parts[0].partition("\n")
    m = _GUARD_AT.search(first)
    guard = " ".join((first[: m.start()] if m else first).split())
    frames = _STACK_FRAME.findall(rest)
    at = f"{frames[-1][0]}:{frames[-1][1]}" if frames else (m.group(1) if m else "")
    return Reason(guard, at, len(parts) - 1)


# --- the recompile limit -------------------------------------------------------------

_LAST_REASON = re.compile(r"last reason:\s*(.+)")
LIMIT_FIX = (
    "mark the changing dim dynamic (torch._dynamo.mark_dynamic) or compile with "
    "dynamic=True; else raise torch._dynamo.config.recompile_limit"
)


def limit_words(e: ev.RecompileLimitHit) -> str:
    """What hitting the limit means, with the limit and the guard that failed last."""
    limit = f"recompile_limit ({e.limit})" if e.limit is not None else "the recompile limit"
    m = _LAST_REASON.search(e.message)
    # The newest entry's guard, its compile id off (normalizing the whole reason
    # first would join every entry's guard into one).
    last = newest_reason(m.group(1).strip()) if m else None
    return (
        f"{e.function} reached {limit}: each call whose guards match no compiled graph "
        "now runs EAGER, not compiled"
        + (f"; last guard failed: {normalize_reason(last.newest)}" if last else "")
    )


def limit_line(e: ev.RecompileLimitHit) -> str:
    """The limit on one line: where, what it means."""
    return (f"at {e.location}: " if e.location else "") + limit_words(e)


# A recording made before the eager calls were timed.
EAGER_UNTIMED = "not timed in this recording"


def eager_each(call_s: list[float], untimed: str | None) -> str:
    """What each call past the limit cost, as the guard probe timed the first
    few (worker/probes/guards.py): median, range, how many; else n/a and why."""
    if not call_s:
        return f"each eager call: {text.na(untimed or EAGER_UNTIMED)}"
    ms = sorted(s * 1000 for s in call_s)
    med, _ = median_iqr(ms)
    timed = f"{len(ms)} timed" if len(ms) > 1 else "1 timed"
    span = f", {text.ms(ms[0])}–{text.ms(ms[-1])}" if len(ms) > 1 else ""
    return (
        f"each eager call: {text.ms(med)} (median of {timed}{span}; "
        "an upper bound: timed under a profile hook)"
    )


def eager_cost(run: Run) -> str:
    """What the limit cost: the calls that then ran eager, and what each took
    (a sweep's sizes that ran eager: their steady latency)."""
    calls = text.eager_calls(run.eager_calls)
    steps = [st for st in run.sweep if st.ran_eager]
    if steps:
        each = ", ".join(f"{text.ms(st.latency_ms)} at size {st.size}" for st in steps)
        return f"{calls}; each eager call: {each}"
    return f"{calls}; {eager_each(run.eager_call_s, run.eager_untimed)}"


@data
class RecompileRow:
    compile_id: str | None
    reason: str
    cost_s: float | None  # None until the compile it triggered finished
    cumulative_s: float | None
    t: float


def recompile_rows(run: Run) -> list[RecompileRow]:
    """Recompiles with their cost and the running total of those costs: each
    one Dynamo announced, and each compile whose record (torch's
    compilation_metrics) names a recompile reason no announcement carried."""
    found = [(rc.compile_id, rc.reason, rc.cost_s, rc.t) for rc in run.recompiles]
    ids = {rc.compile_id for rc in run.recompiles}
    # An announcement without a compile id still covers the compile its reason names.
    reasons = {rc.reason for rc in run.recompiles}
    for c in run.compiles.values():
        rec = c.record
        if rec is None or not rec.recompile_reason:
            continue
        if c.compile_id not in ids and rec.recompile_reason not in reasons:
            t = rec.start_t if rec.start_t is not None else rec.t
            found.append((c.compile_id, rec.recompile_reason, rec.wall_s, t))
    rows, total = [], 0.0
    for cid, reason, cost_s, t in sorted(found, key=lambda r: r[3]):
        if cost_s is not None:
            total += cost_s
        cum = total if cost_s is not None else None
        rows.append(RecompileRow(cid, reason, cost_s, cum, t))
    return rows


# A symbol whose source is a tensor's size, stride or storage offset; any other
# symbol is a Python scalar Dynamo left unspecialized (under dynamic=True a
# float constant such as math.pi, a LayerNorm eps or a dropout p).
_TENSOR_DIM = re.compile(r"\.(?:size|stride)\(\)\[\d+\]$|\.storage_offset\(\)$")
_SOURCE_PART = re.compile(r"^[LG]\['([^']*)'\]|\._modules\['([^']*)'\]|\[(?:'([^']*)'|(\d+))\]")


# The source torch gives a tensor it made inside its own code, which no input of
# the program is ("__meta_utils_unknown_tensor23.size()[1]"): not the user's dim.
INTERNAL_SOURCE = "__meta_utils_unknown_tensor"


def _unique(run: Run) -> list[ev.DimMadeDynamic]:
    """Each symbol once (every compile attempt announces its symbols again), those
    of tensors torch made itself left out."""
    seen: dict[tuple[str, str], ev.DimMadeDynamic] = {}
    for d in run.dynamic_dims:
        if not d.source.startswith(INTERNAL_SOURCE):
            seen.setdefault((d.symbol, d.source), d)
    return list(seen.values())


def is_tensor_dim(d: ev.DimMadeDynamic) -> bool:
    return bool(_TENSOR_DIM.search(d.source))


def unique_dims(run: Run) -> list[ev.DimMadeDynamic]:
    """Tensor dimensions that became symbolic."""
    return [d for d in _unique(run) if is_tensor_dim(d)]


# What every view calls the dims that ``unique_dims`` lists.
DIMS_MADE_DYNAMIC = "Dims made dynamic"


def dim_words(run: Run) -> list[str]:
    """The dims made dynamic, each as "s0 = L['x'].size()[0]"."""
    return [f"{d.symbol} = {d.source}" for d in unique_dims(run)]


def symbolic_scalars(run: Run) -> list[ev.DimMadeDynamic]:
    """Python scalars Dynamo made symbols of instead of constants (not dims)."""
    return [d for d in _unique(run) if not is_tensor_dim(d)]


def scalar_name(source: str) -> str:
    """Dynamo's source as the Python a user wrote:
    ``L['self']._modules['norm'].eps`` -> ``self.norm.eps``, ``G['math'].pi`` -> ``math.pi``."""

    def part(m: re.Match[str]) -> str:
        name, module, key, index = m.groups()
        if index is not None:
            return f"[{index}]"
        word = next(g for g in (name, module, key) if g is not None)
        # A module Dynamo imported itself: "__import_transformers_dot_activations".
        if word.startswith("__import_"):
            word = word.removeprefix("__import_").replace("_dot_", ".")
        return "." + word

    return _SOURCE_PART.sub(part, source).lstrip(".")


# --- shape sweeps -------------------------------------------------------------------


def cumulative(run: Run) -> list[float]:
    out, total = [], 0.0
    for step in run.sweep:
        total += step.transition_s
        out.append(total)
    return out


def sweep_total(run: Run) -> float | None:
    if run.sweep_done is not None:
        return run.sweep_done.cumulative_transition_s
    return cumulative(run)[-1] if run.sweep else None


def rough_latency(run: Run) -> bool:
    """A step's latency was a median of single calls (reports before it was
    measured like the benchmark)."""
    return any(st.latency_spread_ms is None for st in run.sweep)


def step_flag(index: int, step: ev.ShapeStepMeasured) -> str:
    """What happened at one sweep size: the first size's compile is not a *re*compile."""
    if step.ran_eager:
        return "ran EAGER"
    if step.recompiled:
        return "compiled" if index == 0 else "recompiled"
    return "reused"


def is_static(run: Run) -> bool:
    return run.settings is not None and run.settings.dynamic == "false"


def is_dynamic(run: Run) -> bool:
    """dynamic=true, or torch's automatic dynamic (dynamic after a size changes)."""
    return run.settings is not None and run.settings.dynamic in ("true", "auto")


def sweep_runs(session: Session) -> list[Run]:
    return [r for r in session.runs.values() if r.sweep]


@data
class SweepPair:
    """The latest static and dynamic sweeps of one target: static vs dynamic shapes."""

    target: str
    static: Run | None
    dynamic: Run | None

    @property
    def workload(self) -> str:
        run = self.static or self.dynamic
        return run.name if run else self.target

    @property
    def complete(self) -> bool:
        return all(r is not None and r.sweep_done is not None for r in (self.static, self.dynamic))

    @property
    def static_s(self) -> float | None:
        return sweep_total(self.static) if self.static else None

    @property
    def dynamic_s(self) -> float | None:
        return sweep_total(self.dynamic) if self.dynamic else None

    @property
    def reduction(self) -> float | None:
        """Share of the static transition cost that dynamic shapes saved
        (negative: dynamic cost more); None until both sweeps finished."""
        s, d = self.static_s, self.dynamic_s
        if not self.complete or s is None or d is None or s <= 0:
            return None
        return 1.0 - d / s

    def _steady_steps(self) -> tuple[ev.ShapeStepMeasured, ev.ShapeStepMeasured] | None:
        """The static and the dynamic step at the largest size both swept."""
        if not self.complete:
            return None
        assert self.static is not None and self.dynamic is not None
        dyn = {st.size: st for st in self.dynamic.sweep}
        common = [st for st in self.static.sweep if st.size in dyn]
        if not common:
            return None
        last = max(common, key=lambda st: st.size)
        return last, dyn[last.size]

    @property
    def steady(self) -> tuple[int, float, float] | None:
        """(size, static ms, dynamic ms) at the largest size both swept."""
        steps = self._steady_steps()
        if steps is None:
            return None
        s, d = steps
        return s.size, s.latency_ms, d.latency_ms

    @property
    def steady_differs(self) -> bool | None:
        """Whether the steady latencies differ by more than their spread; None
        when a side has no measured spread (older reports)."""
        steps = self._steady_steps()
        if steps is None or any(st.latency_spread_ms is None for st in steps):
            return None
        s, d = steps
        assert s.latency_spread_ms is not None and d.latency_spread_ms is not None
        return not within_spread(
            s.latency_ms, d.latency_ms, s.latency_spread_ms, d.latency_spread_ms
        )

    @property
    def verdict(self) -> str:
        return sweep_verdict(
            self.static_s, self.dynamic_s, self.reduction, self.steady, self.steady_differs
        )

    def sizes(self) -> list[int]:
        out: list[int] = []
        for r in (self.static, self.dynamic):
            for st in r.sweep if r else []:
                if st.size not in out:
                    out.append(st.size)
        return out


def sweep_pairs(session: Session) -> list[SweepPair]:
    """One pair per swept target, in the order targets were first swept."""
    pairs: dict[str, SweepPair] = {}
    for r in sweep_runs(session):
        p = pairs.setdefault(r.target, SweepPair(r.target, None, None))
        if is_static(r):
            p.static = r
        elif is_dynamic(r):
            p.dynamic = r
    return list(pairs.values())


def sweep_pair(session: Session, run: Run | None) -> SweepPair | None:
    """The pair for the selected run's target (else the latest swept target)."""
    pairs = sweep_pairs(session)
    if run is not None:
        return next((p for p in pairs if p.target == run.target), None)
    return pairs[-1] if pairs else None


def cumulative_by_size(run: Run | None) -> dict[int, float]:
    if run is None:
        return {}
    return {s.size: c for s, c in zip(run.sweep, cumulative(run), strict=True)}


# --- the words of recompiles and sweeps (the units are text's) ------------------


def latency(x: float, spread_ms: float | None) -> str:
    """A sweep step's steady latency: with its spread, or marked rough ("~")
    when a report measured none (the note ROUGH says what "~" means)."""
    return f"{text.ms(x)} {text.spread(spread_ms)}" if spread_ms is not None else f"~{text.ms(x)}"


def sweep_verdict(
    static_s: float | None,
    dynamic_s: float | None,
    reduction: float | None,
    steady: tuple[int, float, float] | None,
    steady_differs: bool | None = None,
) -> str:
    """Static vs dynamic shapes in one sentence (the paper's finding 3).
    ``steady_differs``: whether the steady latencies differ by more than their
    spread (None: no spread was measured)."""
    out = (
        f"cumulative transition cost: static {text.secs(static_s)} vs dynamic "
        f"{text.secs(dynamic_s)}"
    )
    if reduction is None:
        out += ": ratio n/a (static cost 0 s)"
    elif reduction >= 0:
        out += f": dynamic shapes cut it by {text.pct(reduction)}"
    else:
        out += f": dynamic shapes cost {text.pct(-reduction)} more"
    if steady is not None:
        size, s_ms, d_ms = steady
        ratio = f" ({d_ms / s_ms:.2f}x)" if s_ms > 0 else ""
        if steady_differs is False:
            ratio = f": {text.NO_DIFFERENCE}"
        elif steady_differs is None:
            ratio = ratio[:-1] + f"; {text.ROUGH})" if ratio else f" ({text.ROUGH})"
        out += (
            f"; steady latency at size {size}: {text.ms(s_ms)} static vs {text.ms(d_ms)} "
            f"dynamic{ratio}"
        )
    return out


def scalars_made_symbols(names: list[str], limit: int = 6) -> str:
    """Unspecialized Python scalars, apart from the dims: "2 scalars made symbols
    (not dims): self.norm.eps, math.pi"."""
    shown = ", ".join(names[:limit])
    if len(names) > limit:
        shown += f", … (+{len(names) - limit} more)"
    return f"{text.plural(len(names), 'scalar')} made symbols (not dims): {shown}"
