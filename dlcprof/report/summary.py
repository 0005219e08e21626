"""Derived figures shared by the JSON report, Markdown, HTML, trace and compare.

Everything here reads a Session and returns plain data; one place decides
what a number means so the formats never disagree.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

from dlcprof import events as ev
from dlcprof.monitors.device import summarize
from dlcprof.session import Benchmark, Compile, Kernel, Phase, Run, Session, nest_phases

# --- time origins -----------------------------------------------------------------

# The runs table of the HTML and Markdown reports.
SUMMARY_COLUMNS = (
    "#",
    "workload",
    "mode",
    "dynamic",
    "status",
    "compile",
    "kernels",
    "recompiles",
    "graph breaks",
    "speedup",
    "break-even",
)


def session_origin(session: Session) -> float | None:
    """The earliest timestamp in the session (phase starts can precede their event)."""
    ts = [e.t for e in session.events]
    for r in session.runs.values():
        for c in r.compiles.values():
            ts.extend(p.start_t for p in c.phases)
            if c.start_t is not None:
                ts.append(c.start_t)
    return min(ts) if ts else None


def run_origin(run: Run) -> float | None:
    """Run start (RunStarted); else its earliest phase, for a stream cut short."""
    if run.started_t is not None:
        return run.started_t
    starts = [p.start_t for c in run.compiles.values() for p in c.phases]
    return min(starts) if starts else None


# --- phases -----------------------------------------------------------------------


def main_thread(phases: list[Phase]) -> int | None:
    """The thread that compiled: the one holding the longest phase. The others
    are pool threads (g++ compiles, async work)."""
    if not phases:
        return None
    return max(phases, key=lambda p: (p.duration_s, -p.start_t)).thread


def phase_rows(compile_: Compile, origin: float | None) -> list[dict[str, Any]]:
    """Phases in start order with depth and start relative to ``origin``."""
    base = origin or 0.0
    return [
        {
            "name": p.name,
            "start_s": p.start_t - base,
            "duration_s": p.duration_s,
            "depth": depth,
            "thread": p.thread,
            "cache_state": p.cache_state,
        }
        for p, depth in nest_phases(compile_.phases)
    ]


@dataclass
class PhaseTotal:
    name: str
    total_s: float
    count: int
    depth: int  # the shallowest depth it was seen at
    threads: int  # distinct threads it ran on (>1: summed over a pool)
    pool: bool  # ran off the compiling thread


def phase_totals(run: Run) -> list[PhaseTotal]:
    """Time per phase name over all compiles of a run: the compiling thread's
    phases in tree order, then pool-thread phases."""
    acc: dict[tuple[bool, str], PhaseTotal] = {}
    threads: dict[tuple[bool, str], set[int]] = {}
    for c in run.compiles.values():
        main = main_thread(c.phases)
        for p, depth in nest_phases(c.phases):
            key = (p.thread != main, p.name)
            t = acc.get(key)
            if t is None:
                t = acc[key] = PhaseTotal(p.name, 0.0, 0, depth, 0, key[0])
            t.total_s += p.duration_s
            t.count += 1
            t.depth = min(t.depth, depth)
            threads.setdefault(key, set()).add(p.thread)
    for key, t in acc.items():
        t.threads = len(threads[key])
    return sorted(acc.values(), key=lambda t: t.pool)


def phase_tree(run: Run) -> list[PhaseTotal]:
    """Time per phase *path* over all compiles of a run, merged into one tree
    and listed depth-first: a cache-hit compile and a full compile nest the
    same phase names differently, and a flat by-name table would interleave
    the two trees. Pool-thread phases come last, by name."""
    acc: dict[tuple[str, ...], PhaseTotal] = {}
    threads: dict[tuple[str, ...], set[int]] = {}
    children: dict[tuple[str, ...], list[tuple[str, ...]]] = {(): []}
    pool_acc: dict[str, PhaseTotal] = {}
    pool_threads: dict[str, set[int]] = {}
    for c in run.compiles.values():
        main = main_thread(c.phases)
        stack: list[tuple[Phase, tuple[str, ...]]] = []
        for p in sorted(c.phases, key=lambda p: (p.start_t, -p.duration_s)):
            if p.thread != main:
                t = pool_acc.get(p.name) or pool_acc.setdefault(
                    p.name, PhaseTotal(p.name, 0.0, 0, 0, 0, True)
                )
                t.total_s += p.duration_s
                t.count += 1
                pool_threads.setdefault(p.name, set()).add(p.thread)
                continue
            while stack and stack[-1][0].end_t < p.end_t - 1e-9:
                stack.pop()
            parent = stack[-1][1] if stack else ()
            path = (*parent, p.name)
            if path not in acc:
                acc[path] = PhaseTotal(p.name, 0.0, 0, len(parent), 0, False)
                children.setdefault(parent, []).append(path)
                children.setdefault(path, [])
            acc[path].total_s += p.duration_s
            acc[path].count += 1
            threads.setdefault(path, set()).add(p.thread)
            stack.append((p, path))
    out: list[PhaseTotal] = []

    def walk(node: tuple[str, ...]) -> None:
        for child in children.get(node, []):
            acc[child].threads = len(threads[child])
            out.append(acc[child])
            walk(child)

    walk(())
    for name, t in pool_acc.items():
        t.threads = len(pool_threads[name])
        out.append(t)
    return out


def phase_span(phases: list[Phase]) -> float:
    if not phases:
        return 0.0
    return max(p.end_t for p in phases) - min(p.start_t for p in phases)


# --- benchmark -------------------------------------------------------------------------


def within_noise(b: Benchmark) -> bool:
    """Eager and compiled differ by less than their measured spread: the
    speedup (and so the break-even) is not a reliable number."""
    return abs(b.eager_ms - b.compiled_ms) <= max(b.eager_spread_ms, b.compiled_spread_ms)


NOISE_NOTE = "eager and compiled differ by less than their spread: within noise"


# --- kernels ----------------------------------------------------------------------------


@dataclass
class KernelGroup:
    """One generated kernel and every compile that generated it identically
    (a static-shape sweep regenerates the same kernel once per shape)."""

    kernel: Kernel
    compile_ids: list[str]


def kernel_groups(run: Run) -> list[KernelGroup]:
    groups: dict[tuple[str, tuple[str, ...], str], KernelGroup] = {}
    for c in run.compiles.values():
        for k in sorted(c.kernels, key=lambda k: k.order):
            key = (k.name, tuple(k.fused_ops), k.source)
            g = groups.get(key)
            if g is None:
                groups[key] = KernelGroup(k, [k.compile_id])
            elif k.compile_id not in g.compile_ids:
                g.compile_ids.append(k.compile_id)
    return list(groups.values())


_SOURCE_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?:\s+(?P<code>.*))?$")


def source_line(text: str) -> tuple[str, str]:
    """("file.py:13", "y = torch.sin(x)") from a "path/file.py:13 code" line;
    the path shortened to its file name (the full one is in the report)."""
    m = _SOURCE_LINE.match(text.strip())
    if not m:
        return "", text.strip()
    name = m["path"].replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{m['line']}", (m["code"] or "").strip()


def compile_list(ids: list[str], limit: int = 4) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" +{len(ids) - limit}" if len(ids) > limit else "")


# --- compiles, recompiles, sweeps ----------------------------------------------------


_CID_PREFIX = re.compile(r"^\s*\[?\d+/\d+\]?\s*:\s*")


def reason_parts(reason: str) -> list[str]:
    """Dynamo lists one failed guard per cached entry, newest first, joined by
    "; " ("0/1: size mismatch ...; 0/0: size mismatch ...")."""
    parts = [p.strip() for p in re.split(r";\s+(?=\[?\d+/\d+\]?\s*:)", reason.strip())]
    return [p for p in parts if p]


def normalize_reason(reason: str) -> str:
    """A recompile reason without compile ids ("0/1: ..."), for matching."""
    return "; ".join(_CID_PREFIX.sub("", p) for p in reason_parts(reason))


def first_reason(reason: str | None) -> str:
    """The guard that failed against the newest cache entry, plus a count."""
    if not reason:
        return ""
    parts = reason_parts(reason)
    more = f" (+{len(parts) - 1} older entries)" if len(parts) > 1 else ""
    return (parts[0] if parts else reason) + more


def share_base(run: Run, tree: list[PhaseTotal]) -> float:
    """What phase shares are a share of: the compile wall time, or the
    outermost phases when they ran longer (torch's wall excludes a few ms of
    the outer dynamo phase)."""
    roots = sum(t.total_s for t in tree if t.depth == 0 and not t.pool)
    return max(run.compile_wall_s, roots)


def split_totals(
    totals: list[PhaseTotal], wall_s: float, share: float = 0.01
) -> tuple[list[PhaseTotal], list[PhaseTotal]]:
    """(phases worth a row, the short passes): a real compile has ~60 phases,
    most of them a millisecond or two."""
    cut = max(0.005, wall_s * share)
    major = [t for t in totals if t.total_s >= cut or t.depth == 0]
    return major, [t for t in totals if t not in major]


def recompile_rows(run: Run) -> list[dict[str, Any]]:
    """Recompiles with their cost and the running total of those costs."""
    rows, total = [], 0.0
    for rc in run.recompiles:
        if rc.cost_s is not None:
            total += rc.cost_s
        rows.append(
            {
                "compile_id": rc.compile_id,
                "reason": rc.reason,
                "cost_s": rc.cost_s,
                "cumulative_s": total if rc.cost_s is not None else None,
                "t": rc.t,
            }
        )
    return rows


def sweep_total(run: Run) -> float | None:
    if run.sweep_total_s is not None:
        return run.sweep_total_s
    if run.sweep:
        return run.cumulative_transition_s[-1]
    return None


def sweep_runs(session: Session) -> list[Run]:
    return [r for r in session.runs.values() if r.sweep]


@dataclass
class SweepContrast:
    """Static vs dynamic shapes over the same workload: the paper's finding 3."""

    workload: str
    static: Run
    dynamic: Run
    static_s: float
    dynamic_s: float

    @property
    def reduction(self) -> float | None:
        """Fraction of the static transition cost that dynamic shapes saved."""
        if self.static_s <= 0:
            return None
        return 1.0 - self.dynamic_s / self.static_s


def sweep_contrasts(session: Session) -> list[SweepContrast]:
    """For each workload swept with dynamic=false and with dynamic true/auto."""
    out = []
    by_workload: dict[str, list[Run]] = {}
    for r in sweep_runs(session):
        by_workload.setdefault(r.workload, []).append(r)
    for workload, runs in by_workload.items():
        static = [r for r in runs if str(r.settings.get("dynamic")) == "false"]
        dynamic = [r for r in runs if str(r.settings.get("dynamic")) in ("true", "auto")]
        if not static or not dynamic:
            continue
        s, d = static[-1], dynamic[-1]
        s_total, d_total = sweep_total(s), sweep_total(d)
        if s_total is None or d_total is None:
            continue
        out.append(SweepContrast(workload, s, d, s_total, d_total))
    return out


# --- device, hotspots ------------------------------------------------------------------


def unique(items: list[str]) -> list[str]:
    return list(dict.fromkeys(items))


def finite(x: Any) -> bool:
    return isinstance(x, (int, float)) and not isinstance(x, bool) and math.isfinite(x)


def device_series(session: Session) -> dict[str, list[tuple[float, float]]]:
    """metric -> [(t, value)], skipping samples where the probe had no value."""
    series: dict[str, list[tuple[float, float]]] = {}
    for s in session.device_samples:
        for k, v in s.values.items():
            if finite(v):
                series.setdefault(k, []).append((s.t, float(v)))
            else:
                series.setdefault(k, [])
    return series


def is_percent(metric: str) -> bool:
    m = metric.lower()
    return any(w in m for w in ("pct", "percent", "util", "%"))


# Display names and units of the device monitor's values.
METRIC_UNITS = (("_pct", "%"), ("_mb", "MB"), ("_w", "W"), ("_c", "°C"), ("_mhz", "MHz"))


def metric_unit(metric: str) -> str:
    if is_percent(metric):
        return "%"
    return next((u for suffix, u in METRIC_UNITS if metric.endswith(suffix)), "")


METRIC_TITLES = {
    "cxx_compilers": "backend compiles in flight (g++, ptxas)",
    "power_w": "GPU power (W)",
    "temp_c": "GPU temperature (°C)",
    "sm_clock_mhz": "SM clock (MHz)",
}


def device_groups(series: dict[str, list[tuple[float, float]]]) -> list[tuple[str, list[str]]]:
    """Metrics that share a unit share a chart: (title, metric names)."""
    groups: dict[str, list[str]] = {}
    for metric in series:
        unit = metric_unit(metric)
        key = {"%": "utilization (%)", "MB": "memory (MB)"}.get(unit) or METRIC_TITLES.get(
            metric, metric
        )
        groups.setdefault(key, []).append(metric)
    return list(groups.items())


def device_summary(session: Session) -> dict[str, Any]:
    series = device_series(session)
    samples = session.device_samples
    metrics = {}
    for k, pts in series.items():
        vals = [v for _, v in pts]
        metrics[k] = {
            "count": len(vals),
            "min": min(vals) if vals else None,
            "mean": sum(vals) / len(vals) if vals else None,
            "max": max(vals) if vals else None,
            "last": vals[-1] if vals else None,
        }
    # Samples share the event clock with the compile phases: split them into
    # "compile" vs "after compile" (benchmark, sweep), pooled over runs.
    spans = [span for run in session.runs.values() for span in run.activity_spans]
    return {
        "by_span": summarize(samples, spans) if samples and spans else {},
        "samples": len(samples),
        "sources": sorted({s.source for s in samples}),
        "duration_s": (samples[-1].t - samples[0].t) if len(samples) > 1 else 0.0,
        "metrics": metrics,
        "monitors": {
            name: {"available": m.available, "message": m.message}
            for name, m in session.monitors.items()
        },
    }


HOTSPOT_KEYS = ("function", "file", "line", "thread", "own", "total", "phase")


def hotspot_rows(session: Session, limit: int = 20) -> list[dict[str, Any]]:
    if session.hot_frames is None:
        return []
    # Rows come grouped by phase; the table wants the heaviest frames overall.
    rows = [{k: r.get(k) for k in HOTSPOT_KEYS} for r in session.hot_frames.rows]
    rows.sort(key=lambda r: (-(r["own"] or 0), -(r["total"] or 0)))
    return rows[:limit]


def hotspot_share(value: Any, samples: int) -> float | None:
    """own/total as a fraction of samples (py-spy rows count samples)."""
    if not finite(value) or samples <= 0:
        return None
    return float(value) / samples


# --- environment ------------------------------------------------------------------


def latest_with(session: Session, pred: Any) -> Run | None:
    for r in reversed(list(session.runs.values())):
        if pred(r):
            return r
    return None


def profile_event(session: Session) -> ev.ProfileSaved | None:
    for e in reversed(session.events):
        if isinstance(e, ev.ProfileSaved):
            return e
    return None


def workload_title(session: Session) -> str:
    """Every workload in the session, in run order."""
    names = list(dict.fromkeys(r.workload or r.run_id for r in session.runs.values()))
    return ", ".join(names) if names else "empty session"


def workload_of(session: Session) -> tuple[str, str]:
    r = session.latest_run
    if r is None:
        return "", ""
    return r.workload or r.settings.get("workload", ""), r.target
