"""One vocabulary of units and words for every view: TUI, console and reports.

A figure is computed in ``dlcprof.figures`` and worded here, so the same
compile reads ``1.93 s`` on screen, in a log and in HTML, and break-even is
counted in "runs" everywhere. A value that is not known is never guessed: it
reads ``n/a`` with the reason beside it. Pure standard library, at the bottom
of the import graph.
"""

from __future__ import annotations

import math
from typing import Any

NA = "n/a"
# Eager and compiled differ by less than their measured spread.
NO_DIFFERENCE = "no measurable difference"
NEVER = "never (compiled is slower)"
NOT_FINISHED = "not finished"
# A sampled thread blocked on another process: the hot-frame row in its place.
WAITING_COMPILER = "waiting on the C++ compiler"
WAITING_WORKERS = "waiting on compile workers"
WAITING_PROCESS = "waiting on a subprocess"


def na(why: str | None = None) -> str:
    return f"{NA} ({why})" if why else NA


def secs(x: float | None, why: str | None = None) -> str:
    """Seconds with a unit that fits: 840 µs, 12 ms, 1.93 s, 2 min 05 s."""
    if x is None or not math.isfinite(x):
        return na(why)
    if x < 0:
        return f"-{secs(-x)}"
    if x < 1e-3:
        return f"{x * 1e6:.0f} µs"
    if x < 1:
        return f"{x * 1e3:.0f} ms"
    if x < 99.995:
        return f"{x:.2f} s"
    m, s = divmod(round(x), 60)
    if m < 60:
        return f"{int(m)} min {s:02.0f} s"
    h, m = divmod(m, 60)
    return f"{int(h)} h {int(m):02d} min"


def ms(x: float | None, why: str | None = None) -> str:
    """Milliseconds with three significant digits: 123 ms, 12.3 ms, 1.23 ms, 12.3 µs."""
    if x is None or not math.isfinite(x):
        return na(why)
    if x < 0:
        return f"-{ms(-x)}"
    if x >= 99.95:
        return f"{x:.0f} ms"
    if x >= 9.995:
        return f"{x:.1f} ms"
    if x >= 0.1:
        return f"{x:.2f} ms"
    return f"{x * 1000:.1f} µs"


def signed_secs(x: float | None) -> str:
    if x is None:
        return NA
    return ("+" if x > 0 else "") + secs(x)


def signed_ms(x: float | None) -> str:
    if x is None:
        return NA
    return ("+" if x > 0 else "") + ms(x)


def pct(x: float | None, why: str | None = None) -> str:
    """A fraction as a percentage: 0.123 -> 12%; under half a percent, <1%."""
    if x is None or not math.isfinite(x):
        return na(why)
    if 0 < x and round(x * 100) == 0:  # 0.005 rounds to even: "0%" would read as none
        return "<1%"
    return f"{x * 100:.0f}%"


def signed_pct(x: float | None) -> str:
    if x is None:
        return NA
    return f"{x * 100:+.0f}%"


def speedup(x: float | None, why: str | None = None) -> str:
    return na(why) if x is None or not math.isfinite(x) else f"{x:.2f}x"


def count(x: float | None) -> str:
    """Large counts made readable: 16,400 / 1.2 M."""
    if x is None or not math.isfinite(x):
        return NA
    if x >= 1e6:
        return f"{x / 1e6:.1f} M"
    return f"{x:,.0f}"


def runs(x: float) -> str:
    """Break-even, in the one word used everywhere: "1,234 runs"."""
    n = max(x, 1.0)
    return f"{count(n)} run" + ("" if round(n) == 1 else "s")


def break_even(x: float | None, measurable: bool = True) -> str:
    """Break-even runs; none when compiled is slower or no faster than the spread."""
    if not measurable:
        return na(NO_DIFFERENCE)
    return NEVER if x is None else runs(x)


def speedup_verdict(x: float | None, measurable: bool = True) -> str:
    """"2.91x", or "1.00x (no measurable difference)"."""
    return speedup(x) if measurable else f"{speedup(x)} ({NO_DIFFERENCE})"


def sweep_verdict(
    static_s: float | None,
    dynamic_s: float | None,
    reduction: float | None,
    steady: tuple[int, float, float] | None,
) -> str:
    """Static vs dynamic shapes in one sentence (the paper's finding 3)."""
    out = f"cumulative transition cost: static {secs(static_s)} vs dynamic {secs(dynamic_s)}"
    if reduction is None:
        out += ": ratio n/a (static cost 0 s)"
    elif reduction >= 0:
        out += f": dynamic shapes cut it by {pct(reduction)}"
    else:
        out += f": dynamic shapes cost {pct(-reduction)} more"
    if steady is not None:
        size, s_ms, d_ms = steady
        ratio = f" ({d_ms / s_ms:.2f}x)" if s_ms > 0 else ""
        out += f"; steady latency at size {size}: {ms(s_ms)} static vs {ms(d_ms)} dynamic{ratio}"
    return out


def spread(x: float | None) -> str:
    """A measured spread (interquartile range) beside its median."""
    return f"± {ms(x)}" if x is not None else ""


def value(x: Any) -> str:
    """Any setting or metric value as short text."""
    if x is None:
        return NA
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, (list, tuple)):
        return ", ".join(value(v) for v in x) if x else "—"
    return str(x)


def short(text: str | None, limit: int = 140) -> str:
    """One line, cut to ``limit`` characters with an ellipsis."""
    if not text:
        return ""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def plural(n: int, word: str, many: str | None = None) -> str:
    return f"{n} {word if n == 1 else (many or word + 's')}"


# --- device metrics: the monitors' keys carry their unit as a suffix ---------------

_UNITS = (("_pct", "%"), ("_mb", "MB"), ("_w", "W"), ("_c", "°C"), ("_mhz", "MHz"))


# Device metrics in display order, with the name people know them by.
METRIC_LABELS: dict[str, str] = {
    "gpu_util_pct": "GPU util",
    "proc_util_pct": "worker GPU util",
    "mem_util_pct": "GPU mem busy",
    "mem_used_mb": "GPU memory",
    "proc_mem_mb": "worker GPU mem",
    "power_w": "GPU power",
    "temp_c": "GPU temp",
    "sm_clock_mhz": "SM clock",
    "worker_cpu_pct": "worker CPU",
    "worker_rss_mb": "worker RSS",
    "cxx_compilers": "compilers running",
    "children_cpu_pct": "compilers CPU",
    "system_cpu_pct": "system CPU",
}


def metric_label(key: str) -> str:
    return METRIC_LABELS.get(key, key)


def metric_unit(key: str) -> str:
    return next((u for suffix, u in _UNITS if key.endswith(suffix)), "")


def metric(key: str, v: float | None) -> str:
    """A device metric with its unit: 42%, 1.25 GB, 310 W, 61 °C."""
    if v is None or not math.isfinite(v):
        return NA
    unit = metric_unit(key)
    if unit == "%":
        return f"{v:.0f}%"
    if unit == "MB":
        return f"{v / 1024:.2f} GB" if v >= 10240 else f"{v:.0f} MB"
    if unit:
        return f"{v:.0f} {unit}"
    return f"{v:.3g}"


def load_avg(values: list[float] | None) -> str:
    return " ".join(f"{x:.2f}" for x in values) if values else NA


def samples(n: int) -> str:
    return f"{count(n)} sample" + ("" if n == 1 else "s")


def hot_scope(thread: str | None, n: int) -> str:
    """What a hot-frame table covers and what its shares are of."""
    if thread is None:
        return f"every thread, {count(n)} sampling ticks; shares of each thread's samples"
    return f"the compiling thread ({thread}), {samples(n)}"


def other_threads(by_thread: dict[str, int]) -> str:
    """The threads a hot-frame table leaves out, with their samples."""
    return "not shown: " + ", ".join(f"{t} ({samples(n)})" for t, n in by_thread.items())


# --- the observer: what watched a run (figures/observer.py) -------------------------


def share_of_core(x: float | None) -> str:
    """A monitor's own CPU as a percentage of one core: "7.2%", "0.4%", "12%"."""
    if x is None or not math.isfinite(x):
        return NA
    return f"{x * 100:.1f}%" if x < 0.1 else pct(x)


def core_share(x: float | None) -> str:
    """CPU used, as a share of one core: "7.2% of a core"."""
    return na("not measured yet") if x is None else f"{share_of_core(x)} of a core"


def watcher(name: str, how: str, share: float | None) -> str:
    return f"{name} {how} ({core_share(share)})"


def observer_timing(quiet: bool | None, timing_now: bool, swept: bool = False) -> str:
    """What the monitors did while the repetitions were timed."""
    if timing_now:
        parts = ["monitors paused: timing now"]
    elif quiet is None:
        parts = [] if swept else ["the monitors pause while the benchmark is timed"]
    elif quiet:
        parts = ["the monitors were paused while the benchmark was timed"]
    else:
        parts = ["the monitors RAN while the benchmark was timed: its latencies include their cost"]
    if swept:
        parts.append("the monitors ran through the shape sweep, its latencies included")
    return "; ".join(parts)


def observer(probes: list[str], watchers: list[str], timing: str | None) -> str:
    """One line for every report: "observer: worker probes (...), py-spy ...; the
    monitors were paused while ..."; ``timing`` None when no monitor ran."""
    parts = [f"worker probes ({', '.join(probes)})"] if probes else []
    if timing is None:
        return f"observer: {', '.join(parts) or 'nothing'} only"
    return f"observer: {', '.join([*parts, *watchers])}; {timing}"


def observer_short(
    watchers: list[tuple[str, float | None]], quiet: bool | None, timing_now: bool
) -> str:
    """The status bar's form: "py-spy 7.2% · device sampler 0.4% of a core, paused while timing"."""
    costs = " · ".join(f"{name} {share_of_core(x)}" for name, x in watchers)
    if timing_now:
        when = "paused now: timing"
    elif quiet is False:
        when = "RAN while timing"
    else:
        when = "paused while timing"
    return f"observer: {costs} of a core, {when}"
