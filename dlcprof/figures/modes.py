"""What a mode did: the ops it autotuned, the graphs it CUDA-graphed, and the
modes of one workload side by side.

- ``autotune(run)``: each autotuned op with its choices, the fastest, and the
  seconds torch spent precompiling and benchmarking; else why nothing was.
- ``cudagraphs(run)``: per compiled graph, CUDA-graphed or torch's reason not
  to; on a GPU the recordings, re-recordings and replays.
- ``mode_tables(session)``: runs of one workload that differ only in their mode,
  one row each: compile (of which autotune), steady latency, speedup, kernels,
  CUDA graphs, break-even, and the latency against the default mode's.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.session import Compile, Run, Session
from dlcprof.settings import AUTOTUNE_MODES, CUDAGRAPH_MODES, MODES

BASELINE = "default"
# Inductor's run-time autotuning of Triton kernels (first call, GPU).
RUNTIME_TRITON_PHASE = "CachingAutotuner.benchmark_all_configs"
COLUMNS = ("mode", "compile (autotune)", "steady", "speedup", "break-even", f"vs {BASELINE}",
           "kernels", "CUDA graphs")  # fmt: skip


# --- autotuning -------------------------------------------------------------------------

_KV = re.compile(r"(\w+)=('[^']*'|[^,]+)")
_TILE = ("BLOCK_M", "BLOCK_N", "BLOCK_K")


def triton_config(description: str) -> dict[str, str]:
    """A Triton template choice's config, from its description as torch writes it
    ("ACC_TYPE='tl.float32', BLOCK_K=32, BLOCK_M=64, ..., num_stages=3, num_warps=4")."""
    return {k: v.strip().strip("'") for k, v in _KV.findall(description or "")}


def config_label(description: str) -> str:
    """"64×32×32 tile, 3 stages, 4 warps" for a Triton config; else the description."""
    cfg = triton_config(description)
    if not any(k in cfg for k in _TILE):
        return text.short(description, 60)
    parts = ["×".join(cfg[k] for k in _TILE if k in cfg) + " tile"]
    if "num_stages" in cfg:
        parts.append(text.plural(int(cfg["num_stages"]), "stage"))
    if "num_warps" in cfg:
        parts.append(text.plural(int(cfg["num_warps"]), "warp"))
    return ", ".join(parts)


@dataclass(frozen=True)
class Choice:
    name: str
    ms: float | None  # None: it failed to compile or run
    config: str  # a Triton config's label; "" for a C++ template or an extern kernel


@dataclass(frozen=True)
class TunedOp:
    event: ev.OpAutotuned
    choices: list[Choice]  # fastest first

    @property
    def op(self) -> str:
        return self.event.op

    @property
    def shapes(self) -> str:
        return ", ".join(self.event.shapes)

    @property
    def winner(self) -> Choice | None:
        return self.choices[0] if self.choices and self.choices[0].ms is not None else None

    @property
    def seconds(self) -> float | None:
        """Precompiling plus benchmarking, by torch's own timers."""
        parts = [x for x in (self.event.precompile_s, self.event.benchmark_s) if x is not None]
        return sum(parts) if parts else None

    @property
    def cached(self) -> bool | None:
        return self.event.cached


@dataclass(frozen=True)
class Autotune:
    ops: list[TunedOp]
    op_seconds: float | None  # sum of the ops' timers
    runtime_triton_s: float | None  # Triton kernels autotuned at their first call (GPU)
    runtime_kernels: int
    torch_seconds: float | None  # compilation_metrics' compile_time_autotune_time_us, summed
    why_none: str | None  # nothing autotuned: why

    @property
    def seconds(self) -> float | None:
        """Everything autotuning cost the first call."""
        parts = [x for x in (self.op_seconds, self.runtime_triton_s) if x is not None]
        return sum(parts) if parts else None

    @property
    def has_configs(self) -> bool:
        """Some choice has a config to show (Triton templates; not the CPU's)."""
        return any(c.config for op in self.ops for c in op.choices)

    @property
    def all_cached(self) -> bool:
        return bool(self.ops) and all(op.cached for op in self.ops)

    @property
    def line(self) -> str:
        """The whole story in one line, as every view states it."""
        if self.why_none is not None:
            return text.nothing_autotuned(self.why_none)
        if self.all_cached:
            return text.autotune_cached(len(self.ops))
        return text.autotuned(len(self.ops), self.seconds, self.runtime_kernels,
                              self.runtime_triton_s)  # fmt: skip


def _from_cache(c: Compile) -> bool:
    metrics = c.record.metrics if c.record else {}
    return c.cache == "hit" or bool(metrics.get("aotautograd_local_cache_hit_count"))


def _why_not_autotuned(run: Run) -> str:
    s = run.settings
    if run.process is not None:  # an attached program: its own mode, not ours
        return "the program's compiles autotuned nothing"
    if s is None:
        return text.NOT_STARTED
    if s.backend != "inductor":
        return text.not_inductor(s.backend)
    if s.mode not in AUTOTUNE_MODES:
        return f"{text.mode_does_not(s.mode, 'autotune')} (the max-autotune modes do)"
    if "autotune" in run.unavailable:
        return run.unavailable["autotune"]
    finished = [c for c in run.compiles.values() if c.finished]
    if not finished:
        return text.NOT_COMPILED_YET if run.live else text.NO_COMPILE_FINISHED
    if s.device == "cpu" and not s.freezing:
        return text.CPU_NEEDS_FREEZING
    if all(_from_cache(c) for c in finished):
        return text.FROM_FX_CACHE
    return text.NO_TUNABLE_OPS


def autotune(run: Run) -> Autotune:
    ops = [
        TunedOp(e, [Choice(c["name"], c.get("ms"), config_label(c.get("description") or ""))
                    for c in e.choices])
        for e in run.autotuned
    ]  # fmt: skip
    op_times = [op.seconds for op in ops if op.seconds is not None]
    runtime = [p.duration_s for c in run.compiles.values() for p in c.phases
               if p.name == RUNTIME_TRITON_PHASE]  # fmt: skip
    torch_us = [
        c.record.metrics["compile_time_autotune_time_us"]
        for c in run.compiles.values()
        if c.record and c.record.metrics.get("compile_time_autotune_time_us") is not None
    ]
    return Autotune(
        ops=ops,
        op_seconds=sum(op_times) if op_times else None,
        runtime_triton_s=sum(runtime) if runtime else None,
        runtime_kernels=len(runtime),
        torch_seconds=sum(torch_us) / 1e6 if torch_us else None,
        why_none=None if ops or runtime else _why_not_autotuned(run),
    )


# --- CUDA graphs -----------------------------------------------------------------------

_SKIP_PREFIX = re.compile(r"^(?:(?:skipping|disabling) cudagraphs? (?:due to|for) )+", re.I)


def skip_reason(message: str) -> str:
    """torch's skip message, short: without "skipping cudagraphs due to" (torch
    repeats it when a cached graph's stored reason is logged again) and without
    the stack trace after "Found from"."""
    full = " ".join((message or "").split())
    head = re.split(r"\s*\.?\s*Found from\b", full, maxsplit=1)[0]
    body = _SKIP_PREFIX.sub("", head).strip().rstrip(":.").strip()
    return body or full


@dataclass(frozen=True)
class GraphStatus:
    event: ev.CudagraphDecided
    reason: str | None  # short (skip_reason)
    recordings: int | None
    rerecordings: int | None
    replays: int | None


@dataclass(frozen=True)
class Cudagraphs:
    verdict: str | None  # "yes" | "no" | "partly (1 of 2 graphs)" | "off" | graphed, then
    # skipped at run time; None: not known
    reason: str | None  # why not, why off, or why not known
    graphs: list[GraphStatus]
    runtime_skips: list[str]  # short reasons of skips torch announced at run time
    skips: int | None  # torch's own counter of skips
    recordings: int | None  # totals, on a GPU
    rerecordings: int | None
    replays: int | None

    @property
    def line(self) -> str:
        return text.cudagraphed(self.verdict, self.reason)

    @property
    def counted(self) -> bool:
        return self.replays is not None


def cudagraphs(run: Run) -> Cudagraphs:
    s = run.settings
    counts = run.cudagraph_counts
    per = counts.per_compile if counts else {}
    on_gpu = s is not None and s.device == "cuda"

    def count(cid: str | None, key: str) -> int | None:
        return per.get(cid or "?", {}).get(key, 0) if on_gpu and counts else None

    graphs = [
        GraphStatus(d, None if d.graphed else skip_reason(d.reason or text.NO_REASON_GIVEN),
                    count(d.compile_id, "recordings"), count(d.compile_id, "rerecordings"),
                    count(d.compile_id, "replays"))
        for d in run.cudagraphs
    ]  # fmt: skip
    runtime = [skip_reason(x.reason) for x in run.cudagraph_skips]

    def total(key: str) -> int | None:
        return sum(v.get(key, 0) for v in per.values()) if on_gpu and counts else None

    verdict, reason = _cudagraph_verdict(run, graphs, runtime)
    return Cudagraphs(
        verdict, reason, graphs, runtime, counts.skips if counts else None,
        total("recordings"), total("rerecordings"), total("replays"),
    )  # fmt: skip


def _cudagraph_verdict(
    run: Run, graphs: list[GraphStatus], runtime: list[str]
) -> tuple[str | None, str | None]:
    s = run.settings
    if run.process is not None and not graphs:
        return None, "no compiled graph of the program asked for CUDA graphs"
    if s is None:
        return None, text.NOT_STARTED
    if s.backend != "inductor":
        return "off", text.not_inductor(s.backend)
    if s.mode not in CUDAGRAPH_MODES:
        return "off", text.CUDAGRAPHS_NOT_IN_MODE
    if not graphs:
        if "cudagraphs" in run.unavailable:
            return None, run.unavailable["cudagraphs"]
        return None, text.NOT_COMPILED_YET if run.live else text.NO_GRAPH_REPORTED
    skipped = [g for g in graphs if not g.event.graphed]
    why = skipped[0].reason if skipped else (runtime[0] if runtime else None)
    if why and s.device == "cpu":
        why = text.on_cpu(why)
    if not skipped:
        return ("yes", None) if not runtime else (text.SKIPPED_AT_RUN_TIME, why)
    if len(skipped) == len(graphs):
        return "no", why
    return text.partly(len(graphs) - len(skipped), len(graphs), "graph"), why


# --- every mode side by side --------------------------------------------------------------


@dataclass(frozen=True)
class ModeRow:
    run: Run
    mode: str
    compile_s: float | None  # first call minus a steady one (torch's compile sum if no benchmark)
    autotune: Autotune
    speed: fb.Speed | None
    kernels: int
    cudagraphs: Cudagraphs
    vs_baseline: tuple[float | None, str] | None  # (ratio, verdict) against BASELINE's latency

    def words(self) -> list[str]:
        """The row in COLUMNS order, as every view states it."""
        s, a = self.speed, self.autotune
        why = text.na(fb.why_none(self.run, short=True))
        if self.compile_s is None:
            compile_ = why
        elif self.mode not in AUTOTUNE_MODES:
            compile_ = text.secs(self.compile_s)
        elif a.why_none is not None:
            compile_ = f"{text.secs(self.compile_s)} ({text.NOTHING_AUTOTUNED})"
        elif a.all_cached:
            compile_ = f"{text.secs(self.compile_s)} (autotune cached)"
        else:
            compile_ = text.with_autotune(self.compile_s, a.seconds)
        return [
            self.mode,
            compile_,
            f"{text.ms(s.compiled_ms)} {text.spread(s.compiled_spread_ms)}" if s else why,
            text.speedup_verdict(s.speedup, s.measurable) if s else why,
            text.break_even(s.break_even, s.measurable) if s else why,
            text.vs_baseline(*self.vs_baseline) if self.vs_baseline else "—",
            str(self.kernels),
            self.cudagraphs.line,
        ]


@dataclass(frozen=True)
class ModeTable:
    workload: str
    cache: str
    rows: list[ModeRow]

    @property
    def notes(self) -> list[str]:
        """What the cells leave out: each autotune mode's line, the cache caveat."""
        out = [f"{r.mode}: {r.autotune.line}" for r in self.rows if r.mode in AUTOTUNE_MODES]
        if self.cache == "warm":
            out.append(text.WARM_CACHE_ORDER)
        return out

    @property
    def title(self) -> str:
        return f"Modes side by side, {self.workload}"

    @property
    def columns(self) -> tuple[str, ...]:
        return COLUMNS


def _group_key(s: ev.RunStarted) -> tuple:
    """What must match for two runs to compare modes: everything but the mode."""
    return (s.target, s.dynamic, s.backend, s.device, s.dtype, s.size, s.cache,
            getattr(s, "freezing", False), s.threads, s.iters, s.reps, tuple(s.shapes),
            s.sweep, s.benchmark)  # fmt: skip


def _against(speed: fb.Speed | None, base: fb.Speed | None) -> tuple[float | None, str] | None:
    if speed is None or base is None:
        return None
    if fb.within_spread(speed.compiled_ms, base.compiled_ms, speed.compiled_spread_ms,
                        base.compiled_spread_ms):  # fmt: skip
        return None, text.NO_DIFFERENCE
    if speed.compiled_ms < base.compiled_ms:
        return base.compiled_ms / speed.compiled_ms, fb.FASTER
    return speed.compiled_ms / base.compiled_ms, fb.SLOWER


def _row(run: Run, base: Run | None) -> ModeRow:
    speed = fb.run_speed(run)
    finished = any(c.finished for c in run.compiles.values())
    compile_s = speed.compile_s if speed else (run.compile_wall_s if finished else None)
    base_speed = fb.run_speed(base) if base is not None and base is not run else None
    return ModeRow(
        run=run, mode=run.settings.mode if run.settings else text.NA, compile_s=compile_s,
        autotune=autotune(run), speed=speed, kernels=len(run.kernels),
        cudagraphs=cudagraphs(run), vs_baseline=_against(speed, base_speed),
    )  # fmt: skip


def mode_tables(session: Session) -> list[ModeTable]:
    """One table per workload and settings run in two or more modes (the latest
    run of each mode), in MODES order."""
    groups: dict[tuple, dict[str, Run]] = {}
    for r in session.runs.values():
        if r.settings is not None:
            groups.setdefault(_group_key(r.settings), {})[r.settings.mode] = r
    tables = []
    for by_mode in groups.values():
        if len(by_mode) < 2:
            continue
        runs = [by_mode[m] for m in MODES if m in by_mode]
        base = by_mode.get(BASELINE)
        first = runs[0]
        cache = first.settings.cache if first.settings else text.NA
        tables.append(ModeTable(first.name, cache, [_row(r, base) for r in runs]))
    return tables


def mode_table(session: Session, run: Run | None) -> ModeTable | None:
    """The table ``run`` is in (None if it is in none); with no run, the newest."""
    tables = mode_tables(session)
    if run is None:
        return tables[-1] if tables else None
    return next((t for t in tables if any(row.run is run for row in t.rows)), None)
