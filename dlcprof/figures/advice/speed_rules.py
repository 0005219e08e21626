"""The rules read from a run's benchmark and kernel times: keep the cache, a
mode that pays back sooner, freezing (GEMM-bound on a CPU), reduce-overhead
(overhead-bound on a GPU), no payback within ``calls``. Each returns an item, a
line for the items left out as inside the noise, or None where it does not
apply. An attached program has no benchmark: none of these reads it."""

from __future__ import annotations

import re

from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import modes as fm
from dlcprof.figures.advice.model import CALLS_TOTAL, LATENCY, Advice, Prediction, compile_noise
from dlcprof.session import Run, Session

# A cold compile this many times a warm one's is worth keeping the cache for.
COLD_RATIO = 2.0
# A GEMM-bound run: extern matmuls take at least this share of the kernels' time.
GEMM_SHARE = 0.5
_GEMM = re.compile(r"\b(?:addmm|mm|bmm|linear|baddbmm|_mkl_linear)\b")


# --- cold vs warm: keep the cache -------------------------------------------------------


def keep_cache(session: Session, run: Run, calls: int) -> Advice | None:
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


# --- a mode that pays back sooner -------------------------------------------------------


def mode(session: Session, run: Run, calls: int) -> Advice | str | None:
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


# --- GEMM-bound on a CPU, overhead-bound on a GPU -----------------------------------------


def _gemm_share(run: Run) -> float | None:
    kp = run.kernel_profile
    if kp is None:
        return None
    times = [(str(k.get("name", "")), k.get("time_ms")) for k in kp.kernels]
    total = sum(t for _, t in times if t)
    gemm = sum(t for n, t in times if t and _GEMM.search(n.replace(".", " ")))
    return gemm / total if total else None


def freezing(session: Session, run: Run, calls: int) -> Advice | None:
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


def reduce_overhead(session: Session, run: Run, calls: int) -> Advice | None:
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


# --- no payback -------------------------------------------------------------------------


def no_payback(session: Session, run: Run, calls: int) -> Advice | None:
    speed = fb.run_speed(run)
    if speed is None:
        return None
    if speed.verdict == fb.FASTER and speed.break_even is not None:
        if speed.break_even <= calls:
            return None
        why = f"it pays back after {text.runs(speed.break_even)}, beyond your {text.runs(calls)}"
    elif speed.verdict == fb.SLOWER:
        why = f"compiled is {fb.speedup_text(speed)} eager: it never pays back"
    elif speed.verdict == fb.SAME:
        why = (
            f"compiled and eager: {text.NO_DIFFERENCE} ({fb.speedup_short(speed)}, inside "
            "the measured spread): no gain measured pays the compile back"
        )
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
