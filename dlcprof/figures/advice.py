"""What to change, from one session's own numbers: one rule per remedy of
PyTorch's "Reducing compile time" list, each item with the change (a snippet at
the user's file:line where one applies), the evidence it rests on, the
predicted saving and how it was predicted, and the known cost.

An item whose predicted saving is inside the measured noise is not shown; a run
that needs no change gets one "nothing to change" line saying why. ``options``
holds the run options ``dlcprof try`` applies to measure an item; empty where
dlcprof cannot apply the change itself (``try_why`` says why).

An attached program's process (``dlcprof run -- CMD``) gets the rules its own
compiles can support (regional compilation, recompiles on an input's size, graph
breaks); none can be tried for you, and the benchmark-based rules are not checked.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import compile_cost as fc
from dlcprof.figures import modes as fm
from dlcprof.figures.cache import HEADER_BUILT
from dlcprof.session import Run, Session

# `--calls N`: how many calls the compile must pay back within (the paper's "thousands").
DEFAULT_CALLS = 1000
# Phases paid once per process whatever is compiled: regional compilation keeps them.
FIXED_PHASES = ("inductor_codecache_torch_key",)
# Where the compiling thread builds or waits for kernels: identical blocks share their
# kernels' source, so their builds do not shrink with the number of blocks compiled.
BUILD_PHASES = ("compile_file", "async_compile.wait", "PyCodeCache.load_by_key_path")
# A cold compile this many times a warm one's is worth keeping the cache for.
COLD_RATIO = 2.0
# "tensor 'x' size mismatch at index 1. expected 4, actual 6"
_SIZE_MISMATCH = re.compile(r"tensor '(?:L\[')?([^'\]]+)(?:'\])?' size mismatch at index (\d+)")
_EXPECTED = re.compile(r"size mismatch at index \d+\. expected (\d+)")
INSIDE_TORCH = ("site-packages/", "dist-packages/")
CALLS_TOTAL = "compile and calls"
# A dynamic compile against a static one of the same code, where the session has no
# dynamic sweep to measure it (benchmarks/RESULTS.md §7).
DYNAMIC_PREMIUM = 2.0
LATENCY = "steady latency"
# A GEMM-bound run: extern matmuls take at least this share of the kernels' time.
GEMM_SHARE = 0.5
_GEMM = re.compile(r"\b(?:addmm|mm|bmm|linear|baddbmm|_mkl_linear)\b")
# Waiting on compile workers for this share of the compile, with cores idle.
WAIT_SHARE = 0.2
COMPILE_FILE_PHASE = "compile_file"
WAIT_PHASE = "async_compile.wait"
# Why no item of an attached program can be tried for you, and what is not checked there.
PROGRAM_TRY_WHY = (
    "dlcprof does not re-run your program with a changed configuration: edit your code as "
    "shown (at the file:line given), run it again under dlcprof (dlcprof run -- CMD) and "
    "compare the two sessions with dlcprof compare"
)
PROGRAM_UNCHECKED = (
    "keep the cache, a mode that pays back sooner, freezing, reduce-overhead, no payback: "
    "not checked: an attached program has no benchmark (no eager timing)"
)


@dataclass(frozen=True)
class Prediction:
    what: str  # "compile" | "recompiles" (the sweep's transitions) | CALLS_TOTAL | LATENCY
    before_s: float
    after_s: float
    how: str  # how it was predicted, in words
    calls: int | None = None  # for CALLS_TOTAL: compile plus this many steady calls

    @property
    def saving_s(self) -> float:
        return self.before_s - self.after_s

    @property
    def change(self) -> float | None:
        """after / before - 1: -0.71 for a 71% saving."""
        return self.after_s / self.before_s - 1.0 if self.before_s > 0 else None


@dataclass(frozen=True)
class Advice:
    rule: str  # "regional" | "mark-dynamic" | "graph-break" | "cache" | "no-payback" | ...
    title: str
    change: str  # what to change, in words
    evidence: list[str]
    cost: str  # the known cost of the change
    predicted: Prediction | None = None
    snippet: str = ""
    where: str = ""  # the user's file:line the snippet belongs at
    options: dict[str, Any] = field(default_factory=dict)  # what `dlcprof try` runs with
    try_why: str = ""  # why it cannot be tried for you, when options is empty


@dataclass(frozen=True)
class AdviceList:
    run_id: str
    items: list[Advice]
    nothing: str | None  # "nothing to change: ..." when no item applies
    hidden: list[str]  # items left out as inside the noise, one line each


SWEEP = "sweep:"  # the prefix of a shape sweep's compile ids


def _first_call_walls(run: Run) -> float | None:
    """torch's compilation_metrics of the first call's compiles (a sweep's excluded)."""
    walls = [
        c.wall_s
        for c in run.compiles.values()
        if c.wall_s is not None and not c.compile_id.startswith(SWEEP)
    ]
    return sum(walls) if walls else None


def compile_seconds(run: Run) -> float | None:
    """The compile of the first call: first call minus a steady call, else torch's sum."""
    return run.benchmark.compile_s if run.benchmark is not None else _first_call_walls(run)


def compile_noise(run: Run) -> float:
    """The compile's measured uncertainty: its two accounts (first call minus a
    steady call, torch's compilation_metrics) differ by this much; 0 with one account."""
    walls = _first_call_walls(run)
    if run.benchmark is None or walls is None:
        return 0.0
    return abs(run.benchmark.compile_s - walls)


def advise(session: Session, run: Run, calls: int = DEFAULT_CALLS) -> AdviceList:
    if run.process is not None:
        return _advise_program(session, run)
    items: list[Advice] = []
    hidden: list[str] = []
    noise = compile_noise(run)
    items += _above_noise([_regional(session, run), _mark_dynamic(session, run)], noise, hidden)
    items += _graph_breaks(run)
    for rule in (_cache, _mode, _gemm_cpu, _overhead_gpu, _compile_threads, _no_payback):
        item = rule(session, run, calls)
        if item is None:
            continue
        if isinstance(item, str):
            hidden.append(item)
        else:
            items.append(item)
    return AdviceList(run.run_id, items, None if items else _nothing(run, hidden), hidden)


def _above_noise(found: list[Advice | None], noise: float, hidden: list[str]) -> list[Advice]:
    """The items whose predicted saving is above the noise; the others go to ``hidden``."""
    items = []
    for item in found:
        if item is None:
            continue
        saving = item.predicted.saving_s if item.predicted is not None else None
        if saving is not None and saving <= noise:
            if saving < 0:  # a loss, whatever the noise
                hidden.append(f"{item.title}: predicted to cost {text.secs(-saving)} more")
            else:
                hidden.append(
                    f"{item.title}: predicted {text.secs(saving)}, "
                    f"inside the compile's noise ({text.secs(noise)})"
                )
            continue
        items.append(item)
    return items


def _advise_program(session: Session, run: Run) -> AdviceList:
    """An attached program's process: its compiles, recompiles and graph breaks only
    (no benchmark, so no noise to compare with: a saving must be positive)."""
    hidden: list[str] = []
    found = [_regional(session, run), _program_mark_dynamic(session, run)]
    items = [
        dataclasses.replace(i, options={}, try_why=PROGRAM_TRY_WHY)
        for i in _above_noise(found, 0.0, hidden) + _graph_breaks(run)
    ]
    nothing = None if items else _nothing(run, hidden)
    return AdviceList(run.run_id, items, nothing, [*hidden, PROGRAM_UNCHECKED])


# --- 1. regional compilation ------------------------------------------------------------


def _user_code(location: str) -> bool:
    return bool(location) and not any(m in location for m in INSIDE_TORCH)


def _regional(session: Session, run: Run) -> Advice | None:
    cost = fc.compile_cost(run)
    before = compile_seconds(run)
    if cost is None or before is None or not cost.lowered_s:
        return None
    if run.settings is not None and run.settings.regional:
        return None  # already regional
    blocks = [r for r in fc.repeated(cost) if r.forward is not None and _user_code(r.location)]
    if not blocks:
        return None
    b = blocks[0]
    assert b.forward is not None
    n = len(b.instances)
    share = b.lowering_s / cost.lowered_s
    fixed = _phase_s(run, FIXED_PHASES)
    builds = _builds_s(run)
    dynamo = cost.dynamo_s if cost.dynamo_s is not None else cost.traced_s
    backend = max(0.0, before - dynamo - fixed - builds)
    guards = max(0.0, dynamo - cost.traced_s)
    after = b.forward.total_s / n + backend * share / n + fixed + guards + builds
    how = (
        f"one {b.cls} compiled instead of {n}: its Dynamo tracing "
        f"({text.secs(b.forward.total_s)} for {n}) and its {text.pct(share)} share of the "
        f"rest of the backend ({text.secs(backend)}, by lowering time) divided by {n}; the "
        f"code around the blocks no longer compiles; kernel builds ({text.secs(builds)}: "
        f"identical blocks share kernels) and one-time work ({text.secs(fixed + guards)}) "
        "stay"
    )
    name = "module" if b.cls[0].isupper() else "m"
    return Advice(
        rule="regional",
        title=f"compile each {b.cls} on its own (regional compilation)",
        change=(
            f"compile the {n} {b.cls} instances one by one instead of the whole model: "
            "they share one compiled graph"
        ),
        evidence=[
            f"{b.cls}.forward traced {b.forward.traced} times, {text.secs(b.forward.total_s)} "
            f"of Dynamo's {text.secs(dynamo)}",
            f"its {n} instances are {text.pct(share)} of Inductor's lowering "
            f"({text.secs(b.lowering_s)} of {text.secs(cost.lowered_s)}, {b.nodes} FX nodes)",
            f"compile {text.secs(before)}",
        ],
        cost=(
            "the code around the blocks runs eager and nothing fuses across a block's edge: "
            "steady latency may rise (try measures it)"
        ),
        predicted=Prediction("compile", before, after, how),
        snippet=(
            f"for {name} in model.modules():\n    if isinstance({name}, {b.cls}):\n"
            f"        {name}.compile()  # instead of torch.compile(model)"
        ),
        where=b.location,
        options={"regional": b.cls},
    )


def _builds_s(run: Run) -> float:
    """Seconds the compiling thread spent building or waiting for kernels (nested
    phases counted once)."""
    total = 0.0
    for c in run.compiles.values():
        main = {p.thread for p in c.phases if p.name == "entire_frame_compile"}
        spans = sorted(
            (p.start_t, p.end_t) for p in c.phases if p.name in BUILD_PHASES and p.thread in main
        )
        end = float("-inf")
        for a, b in spans:
            if b > end:
                total += b - max(a, end)
                end = b
    return total


def _phase_s(run: Run, names: tuple[str, ...]) -> float:
    return sum(p.duration_s for c in run.compiles.values() for p in c.phases if p.name in names)


# --- 2. shape-driven recompiles -----------------------------------------------------------


def size_mismatch(reason: str) -> tuple[str, int] | None:
    """("x", 1) from "tensor 'x' size mismatch at index 1 ..."."""
    m = _SIZE_MISMATCH.search(reason)
    return (m.group(1), int(m.group(2))) if m else None


def _from_size_0_or_1(reason: str) -> bool:
    """ "... size mismatch at index 0. expected 1, actual 2": the guard of a size torch
    specializes even on a dim marked dynamic."""
    m = _EXPECTED.search(reason)
    return m is not None and int(m.group(1)) in (0, 1)


def _dynamic_premium(session: Session, run: Run) -> tuple[float, str]:
    """How many times a static compile a dynamic one costs, and where that came from:
    a dynamic sweep of the same workload in the session, else DYNAMIC_PREMIUM."""
    first = run.sweep[0].transition_s if run.sweep else 0.0
    for other in reversed(session.runs.values()):
        o = other.settings
        if (
            o is not None
            and o.dynamic == "true"
            and other.sweep
            and first > 0
            and run.settings is not None
            and o.target == run.settings.target
        ):
            ratio = other.sweep[0].transition_s / first
            return ratio, f"{ratio:.1f}x, measured by this session's dynamic sweep"
    return DYNAMIC_PREMIUM, f"{DYNAMIC_PREMIUM:.0f}x, as measured on variable-length here"


def _mark_dynamic(session: Session, run: Run) -> Advice | None:
    if run.settings is None or run.settings.mark_dynamic or run.settings.dynamic == "true":
        return None
    steps = run.sweep
    recompiled = [st for st in steps[1:] if st.recompiled and st.reason]
    found = [size_mismatch(st.reason or "") for st in recompiled]
    dims = [d for d in found if d is not None]
    if not dims:
        return None
    name, dim = max(set(dims), key=dims.count)
    paid = [st for st, d in zip(recompiled, found, strict=True) if d == (name, dim)]
    before = sum(st.transition_s for st in steps)
    # One compile, dynamic from the first size: what the other sizes paid to recompile
    # goes, and the first compile, now dynamic, costs more.
    premium, source = _dynamic_premium(session, run)
    paid_s = sum(st.transition_s for st in paid)
    gone = f"the {text.plural(len(paid), 'recompile')} on {name}'s dim {dim} ({text.secs(paid_s)})"
    gone += " no longer happens" if len(paid) == 1 else " no longer happen"
    # torch specializes a size of 0 or 1 whatever mark_dynamic says: the recompile away
    # from it stays, and is the compile that turns dynamic.
    kept = next((st for st in paid if _from_size_0_or_1(st.reason or "")), None)
    if kept is None:
        first = steps[0].transition_s
        after = before - paid_s + first * (premium - 1)
        how = f"{gone}; the first compile, now dynamic, costs more: {text.secs(first)} × {source}"
    else:
        after = before - paid_s + kept.transition_s * premium
        how = (
            f"{gone}, but the one away from a size of 0 or 1 (torch "
            f"specializes those), now dynamic and costing more: "
            f"{text.secs(kept.transition_s)} × {source}"
        )
    return Advice(
        rule="mark-dynamic",
        title=f"mark {name}'s dim {dim} dynamic",
        change=(
            f"call torch._dynamo.mark_dynamic({name}, {dim}) on the input before the compiled "
            f"call (or compile with dynamic=True): one compile serves every size"
        ),
        evidence=[
            f"{len(paid)} of {len(steps)} sweep sizes recompiled on {name} dim {dim} "
            f"({text.secs(sum(st.transition_s for st in paid))})",
            f"sweep transitions {text.secs(before)} in all",
        ],
        cost="a kernel with a symbolic size may run slower than one specialized to a size",
        predicted=Prediction("recompiles", before, after, how),
        snippet=f"torch._dynamo.mark_dynamic({name}, {dim})",
        options={"mark_dynamic": f"{name}:{dim}"},
    )


def _program_mark_dynamic(session: Session, run: Run) -> Advice | None:
    """An attached process's recompiles on an input's size: what they cost, from torch's
    wall time of each compile they triggered."""
    found = [(rc, size_mismatch(rc.reason)) for rc in run.recompiles]
    dims = [d for _, d in found if d is not None]
    if not dims:
        return None
    name, dim = max(set(dims), key=dims.count)
    paid = [rc for rc, d in found if d == (name, dim)]
    priced = [rc.cost_s for rc in paid if rc.cost_s is not None]
    paid_s = sum(priced)
    frames = {rc.compile_id.split("/")[0] for rc in paid if rc.compile_id}
    firsts = [run.compiles[f"{f}/0"].wall_s for f in frames if f"{f}/0" in run.compiles]
    first = sum(w for w in firsts if w is not None)
    premium, source = _dynamic_premium(session, run)
    unpriced = len(paid) - len(priced)
    how = (
        f"the {text.plural(len(priced), 'recompile')} on {name}'s dim {dim} "
        f"({text.secs(paid_s)}, torch's wall time of each) no longer happen; the first "
        f"compile, now dynamic, costs more: {text.secs(first)} × {source}"
        + (f"; {unpriced} not finished yet, not counted" if unpriced else "")
    )
    return Advice(
        rule="mark-dynamic",
        title=f"mark {name}'s dim {dim} dynamic",
        change=(
            f"call torch._dynamo.mark_dynamic({name}, {dim}) on the input before the compiled "
            f"call (or compile with dynamic=True): one compile serves every size"
        ),
        evidence=[
            f"{text.plural(len(paid), 'recompile')} on {name} dim {dim} "
            f"({text.secs(paid_s)}): {text.short(paid[0].reason, 200)}"
        ],
        cost="a kernel with a symbolic size may run slower than one specialized to a size",
        predicted=(Prediction("compile", first + paid_s, first * premium, how) if priced else None),
        snippet=f"torch._dynamo.mark_dynamic({name}, {dim})",
    )


# --- 3. graph breaks ---------------------------------------------------------------------


def _graph_breaks(run: Run) -> list[Advice]:
    """One item per distinct break (reason and line), with the graph it added."""
    seen: dict[tuple[str, str], Any] = {}
    for gb in run.graph_breaks:
        if gb.compile_id and gb.compile_id.startswith(SWEEP):
            continue
        seen.setdefault((gb.reason, gb.location), gb)
    if not seen:
        return []
    # A recompile is the same frame again, not the graph a break resumed in.
    compiles = sorted(
        (
            c
            for c in run.compiles.values()
            if c.record
            and not c.is_backward
            and not c.record.recompile_reason
            and not c.compile_id.startswith(SWEEP)
        ),
        key=lambda c: c.start_t or 0.0,
    )
    extra = compiles[1:]  # each break adds a resumed graph after the first
    total = compile_seconds(run)
    items = []
    for i, gb in enumerate(seen.values()):
        resumed = extra[i] if i < len(extra) else None
        cost_s = resumed.wall_s if resumed is not None else None
        hint = gb.hints[0] if gb.hints else "move the line out of the compiled code"
        items.append(
            Advice(
                rule="graph-break",
                title=f"graph break at {text.short_path(gb.location) or 'unknown line'}: "
                f"{text.short(gb.reason, 80)}",
                change=hint,
                evidence=[
                    f"Dynamo: {text.short(gb.reason, 200)}",
                    f"an extra graph compiled after it: {text.secs(cost_s, 'not recorded')}",
                    "eager time between the graphs: "
                    + text.na("not timed: the Python between graphs runs unobserved"),
                ],
                cost="none known; the fix may change what the code computes: check its output",
                predicted=(
                    Prediction(
                        "compile",
                        total,
                        total - cost_s,
                        "the extra graph's compile no longer happens",
                    )
                    if cost_s and total and cost_s < total
                    else None
                ),
                where=gb.location,
                try_why="the fix is a change to your code: dlcprof cannot make it for you",
            )
        )
    return items


# --- 4. cold vs warm: keep the cache -------------------------------------------------------


def _cache(session: Session, run: Run, calls: int) -> Advice | None:
    """A run of the same workload with the other cache state, measured in this session."""
    s = run.settings
    if s is None or run.benchmark is None:
        return None
    pair = {}
    for other in session.runs.values():
        o = other.settings
        if o is None or other.benchmark is None or o.target != s.target or o.mode != s.mode:
            continue
        state = fb.compile_cache(other)
        if state is not None and state.state in ("hit", "miss"):
            pair[state.state] = other
    if set(pair) != {"hit", "miss"}:
        return None
    cold, warm = pair["miss"].benchmark, pair["hit"].benchmark
    assert cold is not None and warm is not None
    if warm.compile_s <= 0 or cold.compile_s / warm.compile_s < COLD_RATIO:
        return None
    return Advice(
        rule="cache",
        title="keep the compile cache for every start (or ship Mega-Cache artifacts)",
        change=(
            "keep TORCHINDUCTOR_CACHE_DIR between runs; where a fresh machine starts, save "
            "torch.compiler.save_cache_artifacts() after a compile and load them first"
        ),
        evidence=[
            f"cold compile {text.secs(cold.compile_s)}, warm {text.secs(warm.compile_s)} "
            f"({cold.compile_s / warm.compile_s:.1f}x)"
        ],
        cost="the artifacts are tied to this torch version, device and model code",
        predicted=Prediction(
            "compile",
            cold.compile_s,
            warm.compile_s,
            "a cold start becomes as fast as this session's warm one",
        ),
        snippet=(
            "data, _ = torch.compiler.save_cache_artifacts()  # after the first call\n"
            "torch.compiler.load_cache_artifacts(data)  # before it, at the next start"
        ),
        try_why=(
            f"it takes two runs, one to save and one to load: dlcprof run {s.target} "
            "--cache cold --cache-artifacts FILE, twice"
        ),
    )


# --- 5. a mode that pays back sooner -------------------------------------------------------


def _mode(session: Session, run: Run, calls: int) -> Advice | str | None:
    """From runs of the same settings in other modes (``--mode all``)."""
    table = fm.mode_table(session, run)
    if table is None:
        return None
    rows = [r for r in table.rows if r.speed is not None and r.compile_s is not None]
    mine = next((r for r in rows if r.run is run), None)
    if mine is None or len(rows) < 2:
        return None
    eager = [(r.speed.eager_ms, r.speed.eager_spread_ms) for r in rows if r.speed]
    if any(not fb.within_spread(a, b, sa, sb) for a, sa in eager for b, sb in eager):
        low, high = min(e for e, _ in eager), max(e for e, _ in eager)
        return (
            f"modes not compared: each mode's worker measured its own eager, and those "
            f"differ beyond their spreads ({text.ms(low)} to {text.ms(high)})"
        )

    def total(r: fm.ModeRow) -> float:
        assert r.speed is not None and r.compile_s is not None
        return r.compile_s + calls * r.speed.compiled_ms / 1e3

    best = min(rows, key=total)
    if best is mine:
        return None
    assert best.speed is not None and mine.speed is not None
    noise = calls * max(best.speed.compiled_spread_ms, mine.speed.compiled_spread_ms) / 1e3
    saving = total(mine) - total(best)
    if saving <= noise + compile_noise(run):
        return (
            f"mode {best.mode}: {text.secs(saving)} sooner over {text.count(calls)} calls, "
            f"inside the noise ({text.secs(noise)})"
        )
    return Advice(
        rule="mode",
        title=f"compile with mode={best.mode!r} for {text.count(calls)} calls",
        change=f"torch.compile(model, mode={best.mode!r})",
        evidence=[
            f"{r.mode}: compile {text.secs(r.compile_s)}, {text.ms(r.speed.compiled_ms)} per call"
            for r in (mine, best)
            if r.speed
        ],
        cost=f"what {best.mode} turns on (docs/advice.md)",
        predicted=Prediction(
            CALLS_TOTAL,
            total(mine),
            total(best),
            f"compile + {text.count(calls)} × steady latency, both measured",
            calls,
        ),
        snippet=f"torch.compile(model, mode={best.mode!r})",
        options={"mode": best.mode},
    )


# --- 6. GEMM-bound on a CPU, overhead-bound on a GPU -----------------------------------------


def _gemm_share(run: Run) -> float | None:
    kp = run.kernel_profile
    if kp is None:
        return None
    times = [(str(k.get("name", "")), k.get("time_ms")) for k in kp.kernels]
    total = sum(t for _, t in times if t)
    gemm = sum(t for n, t in times if t and _GEMM.search(n.replace(".", " ")))
    return gemm / total if total else None


def _gemm_cpu(session: Session, run: Run, calls: int) -> Advice | None:
    s = run.settings
    if s is None or s.device != "cpu" or s.freezing or s.mode in ("max-autotune",):
        return None
    share = _gemm_share(run)
    if share is None or share < GEMM_SHARE:
        return None
    return Advice(
        rule="freezing",
        title="freeze the weights and let max-autotune pick the CPU matmuls",
        change=(
            "under torch.no_grad(), set torch._inductor.config.freezing = True and compile "
            "with mode='max-autotune': Inductor then benchmarks its C++ GEMM templates "
            "against the library's"
        ),
        evidence=[f"matrix multiplies take {text.pct(share)} of the compiled call's kernels"],
        cost=(
            "a longer compile (each matmul benchmarked); weights become constants, so "
            "inference only"
        ),
        snippet=(
            "torch._inductor.config.freezing = True\n"
            "compiled = torch.compile(model, mode='max-autotune')"
        ),
        options={"freezing": True, "mode": "max-autotune"},
    )


def _overhead_gpu(session: Session, run: Run, calls: int) -> Advice | None:
    s, kp = run.settings, run.kernel_profile
    if s is None or s.device != "cuda" or s.mode in ("reduce-overhead", "max-autotune"):
        return None
    if kp is None or kp.device_busy_ms is None or not kp.compiled_ms:
        return None
    if kp.device_busy_ms >= 0.5 * kp.compiled_ms:
        return None
    return Advice(
        rule="reduce-overhead",
        title="replay the compiled call as a CUDA graph (mode='reduce-overhead')",
        change="torch.compile(model, mode='reduce-overhead')",
        evidence=[
            f"the GPU is busy {text.ms(kp.device_busy_ms)} of each "
            f"{text.ms(kp.compiled_ms)} compiled call: the rest is launch overhead"
        ],
        cost="CUDA graphs hold their memory pool; inputs must keep their addresses",
        predicted=Prediction(
            LATENCY,
            kp.compiled_ms / 1e3,
            kp.device_busy_ms / 1e3,
            "at best the call takes the GPU's busy time",
        ),
        snippet="torch.compile(model, mode='reduce-overhead')",
        options={"mode": "reduce-overhead"},
    )


# --- 7. compile workers waited on while cores sit idle -----------------------------------------


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    now = most = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def _compile_threads(session: Session, run: Run, calls: int) -> Advice | None:
    cores = session.worker.cpu_count if session.worker else None
    before = compile_seconds(run)
    if not cores or not before:
        return None
    phases = [p for c in run.compiles.values() for p in c.phases]
    builds = [(p.start_t, p.end_t) for p in phases if p.name == COMPILE_FILE_PHASE]
    wait = sum(p.duration_s for p in phases if p.name == WAIT_PHASE)
    at_once = _most_at_once(builds)
    if not builds or wait < WAIT_SHARE * before or at_once >= cores - 1:
        return None
    after = before - wait * (1 - at_once / (cores - 1))
    return Advice(
        rule="compile-threads",
        title=f"build kernels on {cores - 1} threads",
        change=(
            f"set torch._inductor.config.compile_threads = {cores - 1} (or "
            f"TORCHINDUCTOR_COMPILE_THREADS) before the first compile"
        ),
        evidence=[
            f"the compile waited {text.secs(wait)} on kernel builds, at most {at_once} "
            f"at once on a {cores}-core machine"
        ],
        cost="the builds take cores from whatever else runs",
        predicted=Prediction(
            "compile",
            before,
            after,
            f"the wait shrinks as {at_once} builds at once become {cores - 1}",
        ),
        snippet=f"torch._inductor.config.compile_threads = {cores - 1}",
        try_why="no run option sets compile_threads yet",
    )


# --- 8. no payback -------------------------------------------------------------------------


def _no_payback(session: Session, run: Run, calls: int) -> Advice | None:
    speed = fb.run_speed(run)
    if speed is None:
        return None
    if speed.verdict == fb.FASTER and speed.break_even is not None:
        if speed.break_even <= calls:
            return None
        why = f"it pays back after {text.runs(speed.break_even)}, beyond your {text.runs(calls)}"
    elif speed.verdict in (fb.SLOWER, fb.SAME):
        why = f"compiled is {fb.speedup_text(speed)} eager: it never pays back"
    else:
        return None
    return Advice(
        rule="no-payback",
        title="compiling does not pay back within your horizon",
        change=(
            f"run this code eager, or compile it only where it is called more than "
            f"{text.count(calls)} times"
        ),
        evidence=[
            why,
            f"compile {speed.compile_text}; eager {text.ms(speed.eager_ms)}, "
            f"compiled {text.ms(speed.compiled_ms)} per call",
        ],
        cost="eager keeps its own speed",
        try_why="not compiling needs no trial",
    )


# --- nothing to change ------------------------------------------------------------------------


def _nothing(run: Run, hidden: list[str]) -> str:
    facts = []
    speed = fb.run_speed(run)
    if speed is not None and speed.break_even is not None:
        facts.append(f"the compile pays back after {text.runs(speed.break_even)}")
    n = len(run.recompiles)
    on_size = any(size_mismatch(rc.reason) for rc in run.recompiles)
    facts.append(
        "no recompiles"
        if not n
        else text.plural(n, "recompile") + ("" if on_size else ", none on an input's size")
    )
    facts.append("no graph breaks")
    if hidden:
        facts.append(f"{text.plural(len(hidden), 'change')} would save less than the noise")
    elif fc.compile_cost(run) is not None:
        facts.append("no module class of your code repeated")
    return "nothing to change: " + ", ".join(facts)


# --- words shared by the views -------------------------------------------------------------------


def predicted_text(p: Prediction | None) -> str:
    """ "−71% compile (8.10 s → 2.35 s)"."""
    if p is None:
        return text.na("not predictable from this run")
    return (
        f"{text.signed_pct(p.change)} {p.what} ({text.secs(p.before_s)} → {text.secs(p.after_s)})"
    )


def measured_text(
    predicted: Prediction | None, before_s: float | None, after_s: float | None
) -> str:
    if before_s is None or after_s is None or before_s <= 0:
        return text.na("not measured")
    change = after_s / before_s - 1.0
    return f"{text.signed_pct(change)} ({text.secs(before_s)} → {text.secs(after_s)})"


# --- dlcprof try: the change measured beside its prediction ------------------------------------


def advised_run(session: Session) -> Run | None:
    """The run advice is read from: the latest that is not itself a trial."""
    trials = {t.run_id for t in session.tried}
    attached = [r for r in session.runs.values() if r.process is not None]
    if attached:  # an attached program: the process that compiled the most
        return max(attached, key=lambda r: r.compile_wall_s)
    runs = [r for r in session.runs.values() if r.run_id not in trials and r.settings]
    return runs[-1] if runs else None


def trial_settings(run: Run, item: Advice) -> dict[str, Any]:
    """The advised run's settings as it ran (cache setting included), with the item's change."""
    import dataclasses

    assert run.settings is not None
    d = dataclasses.asdict(run.settings)
    d["shapes"] = d.get("shapes") or None
    # py-spy takes CPU from a compile: the trial samples only if the advised run did.
    spy = run.monitors.get("py-spy")
    d["hotspots"] = spy is not None and spy.available
    d.update(item.options)
    return d


def _measured_s(run: Run, p: Prediction | None) -> float | None:
    what = p.what if p else "compile"
    if what == "recompiles":
        return sum(st.transition_s for st in run.sweep) if run.sweep else None
    if what == LATENCY:
        return run.benchmark.compiled_ms / 1e3 if run.benchmark else None
    compile_s = compile_seconds(run)
    if what == CALLS_TOTAL and p is not None and p.calls:
        if compile_s is None or run.benchmark is None:
            return None
        return compile_s + p.calls * run.benchmark.compiled_ms / 1e3
    return compile_s


def tried(advised: Run, trial: Run, item: Advice) -> ev.AdviceTried:
    p = item.predicted
    what = p.what if p else "compile"
    before, after = advised.benchmark, trial.benchmark
    spreads = [b.compiled_spread_ms for b in (before, after) if b is not None]
    return ev.AdviceTried(
        run_id=trial.run_id,
        advised_run=advised.run_id,
        rule=item.rule,
        title=item.title,
        options=dict(item.options),
        what=what,
        predicted_before_s=p.before_s if p else None,
        predicted_after_s=p.after_s if p else None,
        measured_before_s=_measured_s(advised, p),
        measured_after_s=_measured_s(trial, p),
        steady_before_ms=before.compiled_ms if before else None,
        steady_after_ms=after.compiled_ms if after else None,
        steady_spread_ms=max(spreads) if len(spreads) == 2 else None,
        cache_before=_cache_state(advised),
        cache_after=_cache_state(trial),
    )


def _cache_state(run: Run) -> str | None:
    cache = fb.compile_cache(run)
    state = cache.state if cache else None
    return f"{state}{_HEADER}" if run.header_built is not None else state


def prediction_error(t: ev.AdviceTried) -> float | None:
    """|predicted saving − measured saving| / measured saving."""
    if None in (t.predicted_before_s, t.predicted_after_s, t.measured_before_s, t.measured_after_s):
        return None
    predicted = t.predicted_before_s - t.predicted_after_s  # type: ignore[operator]
    measured = t.measured_before_s - t.measured_after_s  # type: ignore[operator]
    return abs(predicted - measured) / abs(measured) if measured else None


def _change(before: float | None, after: float | None) -> float | None:
    return after / before - 1.0 if before and after is not None else None


def tried_text(t: ev.AdviceTried) -> str:
    """ "predicted −71% compile, measured −64%; steady latency +9%"."""
    predicted = _change(t.predicted_before_s, t.predicted_after_s)
    measured = _change(t.measured_before_s, t.measured_after_s)
    said = (
        f"predicted {text.signed_pct(predicted)} {t.what}"
        if predicted is not None
        else f"no prediction; {t.what}"
    )
    words = (
        f"{said}, measured {text.signed_pct(measured)} ({text.secs(t.measured_before_s)} "
        f"→ {text.secs(t.measured_after_s)})"
    )
    if t.steady_before_ms is not None and t.steady_after_ms is not None:
        spread = t.steady_spread_ms or 0.0
        if abs(t.steady_after_ms - t.steady_before_ms) <= spread:
            words += f"; steady latency: {text.NO_DIFFERENCE}"
        else:
            steady = text.signed_pct(_change(t.steady_before_ms, t.steady_after_ms))
            words += (
                f"; steady latency {steady} ({text.ms(t.steady_before_ms)} → "
                f"{text.ms(t.steady_after_ms)})"
            )
    if t.cache_before != t.cache_after:
        words += (
            f"; not comparable: {_cache_words(t.cache_before)} before, "
            f"{_cache_words(t.cache_after)} in the trial"
        )
    return words


# A run whose first compile also built Inductor's precompiled header paid a
# one-time cost the other run did not: its compile seconds are not comparable.
_HEADER = "+header"


def _cache_words(state: str | None) -> str:
    if state and state.endswith(_HEADER):
        return f"{fb.cache_state(state.removesuffix(_HEADER))} {HEADER_BUILT}"
    return fb.cache_state(state)
