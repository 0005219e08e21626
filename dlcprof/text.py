"""The units and the phrases that two or more places share: TUI, console and reports.

A figure is computed and worded in ``dlcprof.figures.<topic>`` with these units,
so the same compile reads ``1.93 s`` on screen, in a log and in HTML, and
break-even is counted in "runs" everywhere. A value that is not known is never
guessed: it reads ``n/a`` with the reason beside it. A sentence about one topic
lives beside the figures that compute it, not here (tests/unit/test_text_rule.py
holds this module to that and to its line budget). Pure standard library, at
the bottom of the import graph.
"""

from __future__ import annotations

import math
import re
from typing import Any

from dlcprof import own_code

NA = "n/a"
# Eager and compiled differ by less than their measured spread.
NO_DIFFERENCE = "no measurable difference"
NEVER = "never (compiled is slower)"
NOT_FINISHED = "not finished"
# A kernel whose nodes carried no Python stack (e.g. RNG seeds Inductor adds).
NO_SOURCE_LINES = "Inductor recorded no stack trace for it"
TWO_CLUSTERS = "repetitions in two clusters"


# A sampled thread blocked on another process: the hot-frame row in its place.
WAITING_COMPILER = "waiting on the C++ compiler"
WAITING_WORKERS = "waiting on compile workers"
WAITING_PROCESS = "waiting on a subprocess"
WAITING_QUIET = "waiting on dlcprof to pause its monitors"
# A sampled stack that is the program's work, not the compiler's (monitors/samples.py).
RUNNING_COMPILED = "running compiled code"
RUNNING_OPTIMIZER = "running the optimizer (eager)"
KERNEL_SAMPLER = "dlcprof's kernel sampler"
DLCPROF_PROBES = "dlcprof's own probes"


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


def offset_secs(x: float) -> str:
    """An offset from an origin, signed, to 10 ms: "+30.64 s", "-0.12 s"; one
    that rounds to zero reads "+0.00 s", never "-0.00 s"."""
    return f"{round(x, 2) + 0.0:+.2f} s"


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
    """ "2.91x", or "1.00x (no measurable difference)"."""
    return speedup(x) if measurable else f"{speedup(x)} ({NO_DIFFERENCE})"


ROUGH = "rough: a median of single calls, no spread"


def faults(x: float | None) -> str:
    """Page faults per call: "2,433"; a few stray ones, "<1"."""
    if x is None or not math.isfinite(x):
        return NA
    return "<1" if 0 < x < 1 else count(x)


# The two speedups of a CPU benchmark (figures/allocator.py), named alike everywhere.
DEFAULT_ALLOC = "default allocator"
STEADY_ALLOC = "allocator held steady"


def command_words(argv: list[str], cwd: str = "") -> str:
    """The command as its user typed it, near enough: the interpreter or tool
    by its name, a file under the working folder relative to it
    ("/venv/bin/python /home/u/run/train.py --lr 3" -> "python train.py --lr 3")."""
    words = [argv[0].rsplit("/", 1)[-1]] if argv else []
    here = cwd.rstrip("/") + "/" if cwd else ""
    words += [a[len(here) :] if here and a.startswith(here) else a for a in argv[1:]]
    return " ".join(words)


# Where an installed package's files live: what follows is the package's own path.
_PACKAGES = re.compile(r"[/\\](?:site|dist)-packages[/\\]")
# Where the standard library's files live.
_STDLIB = re.compile(r"/lib/python\d+\.\d+/")


def in_package(path: str) -> str | None:
    """The file's path from its installed package on
    (".../site-packages/torch/optim/x.py" -> "torch/optim/x.py"), or None for a file
    that is not in an installed package (the user's own code)."""
    found = list(_PACKAGES.finditer(path))
    return path[found[-1].end() :] if found else None


# A file Inductor wrote into its cache: CACHE/ab/cab<hash>.py (the folder is the
# name's 2nd and 3rd characters), wherever the cache folder is.
_CACHE_FILE = re.compile(r"[/\\]([a-z0-9]{2})[/\\]([a-z]\1[a-z0-9]{20,})(\.\w+)$")


def cache_file(path: str) -> str | None:
    """A file in Inductor's cache, short: "/tmp/torchinductor_u/ab/cabcdef….py" ->
    "<inductor cache>/ab/cabcdef01….py"; None for any other file."""
    m = _CACHE_FILE.search(path)
    return f"<inductor cache>/{m[1]}/{m[2][:10]}…{m[3]}" if m else None


def short_path(path: str) -> str:
    """A file from its package on, or from the standard library on, or in
    Inductor's cache (``cache_file``):
    ".../site-packages/torch/optim/x.py:79" -> "torch/optim/x.py:79",
    ".../lib/python3.11/subprocess.py" -> "subprocess.py", dlcprof's own file from
    its package on ("dlcprof/worker/run.py", a clone's checkout too); any other
    path as it is."""
    cached = cache_file(path)
    if cached is not None:
        return cached
    mine = own_code.module(path)
    if mine is not None:
        return f"dlcprof/{mine}"
    inside = in_package(path)
    if inside is not None:
        return inside
    m = _STDLIB.search(path)
    return path[m.end() :] if m else path


def users_code(path: str) -> bool:
    """A file of the user's own code: in neither an installed package nor the
    standard library (an unknown file, "", is not)."""
    return bool(path) and in_package(path) is None and _STDLIB.search(path) is None


def in_torch(path: str) -> bool:
    """A file of torch's own package, by its path (also one recorded elsewhere)."""
    return re.match(r"torch[/\\]", in_package(path) or "") is not None


def broke_inside(detail: str) -> str:
    """Where Dynamo broke, beside the user's line that led there."""
    return f"(broke inside {short_path(detail)})" if detail else ""


_SUPERSCRIPT = str.maketrans("0123456789", "⁰¹²³⁴⁵⁶⁷⁸⁹")


class Footnotes:
    """ "n/a" in a narrow table cell, with its reason once below the table:
    ``cell(None, why)`` -> "n/a¹"; ``lines()`` -> ["¹ why", ...]."""

    def __init__(self) -> None:
        self.reasons: list[str] = []

    def mark(self, why: str | None) -> str:
        if not why:
            return ""
        if why not in self.reasons:
            self.reasons.append(why)
        return str(self.reasons.index(why) + 1).translate(_SUPERSCRIPT)

    def cell(self, words: str | None, why: str | None) -> str:
        return words if words is not None else NA + self.mark(why)

    def lines(self) -> list[str]:
        return [
            f"{str(i).translate(_SUPERSCRIPT)} {NA}: {why}" for i, why in enumerate(self.reasons, 1)
        ]


def gbps(x: float | None, why: str | None = None) -> str:
    """A bandwidth: 9.22 GB/s, 123 GB/s, 2.1 TB/s."""
    if x is None or not math.isfinite(x):
        return na(why)
    if x >= 999.5:
        return f"{x / 1000:.1f} TB/s"
    return f"{x:.3g} GB/s"


def nbytes(x: float | None, why: str | None = None) -> str:
    """A size in decimal units: 512 B, 8.19 KB, 4.19 MB, 1.07 GB."""
    if x is None or not math.isfinite(x):
        return na(why)
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("KB", 1e3)):
        if x >= scale:
            return f"{x / scale:.3g} {unit}"
    return f"{x:.0f} B"


def profiled(wall_s: float, calls: int, method: str) -> str:
    return f"profiled after the benchmark in {secs(wall_s)}: {calls} calls, {method}"


def spread(x: float | None) -> str:
    """A measured spread (interquartile range) beside its median."""
    return f"± {ms(x)}" if x is not None else ""


def ms_spread(x: float, spread_ms: float | None, narrow: bool = False) -> str:
    """A median with its spread: "12.3 ms ± 0.41 ms"; narrow, "12.3 ms ±0.41"."""
    if not narrow or spread_ms is None:
        return f"{ms(x)} {spread(spread_ms)}".rstrip()
    median, s = ms(x), ms(spread_ms)
    unit = median.rsplit(" ", 1)[-1]
    return f"{median} ±{s.removesuffix(' ' + unit)}"


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


def middle(name: str, limit: int) -> str:
    """``name`` in at most ``limit`` characters, its middle cut ("…"): the start
    and the end (a kernel's number, a file's name) stay."""
    if len(name) <= limit:
        return name
    if limit <= 1:
        return "…"[:limit]
    tail = (limit - 1) // 3
    return f"{name[: limit - 1 - tail]}…{name[len(name) - tail :]}"


def short(text: str | None, limit: int = 140) -> str:
    """One line, cut to ``limit`` characters with an ellipsis."""
    if not text:
        return ""
    one = " ".join(str(text).split())
    return one if len(one) <= limit else one[: limit - 1] + "…"


def plural(n: int, word: str, many: str | None = None) -> str:
    """A count and its noun: "1 log", "1,024 logs" (the number as ``count`` writes it)."""
    return f"{n:,} {word if n == 1 else (many or word + 's')}"


def eager_calls(n: int | None) -> str:
    """What a recompile limit hit cost: the calls that then ran eager, uncompiled."""
    if n is None:
        return na("not counted")
    return f"{plural(n, 'call')} then ran eager"


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


# --- modes: what each one does, what it autotuned, whether it used CUDA graphs ----------


NOT_MEASURED_YET = "not measured yet"


def modes_need_inductor(backend: str) -> str:
    """Why every mode side by side cannot run with another backend."""
    return (
        f"every mode side by side compares Inductor's modes: backend {backend} has none "
        "(pick backend inductor)"
    )


# --- a monitor's own CPU (figures/observer.py) ---------------------------------------


def share_of_core(x: float | None) -> str:
    """A monitor's own CPU as a percentage of one core: "7.2%", "0.4%", "12%"; before
    its first measurement "n/a (not measured yet)"."""
    if x is None or not math.isfinite(x):
        return na(NOT_MEASURED_YET)
    return f"{x * 100:.1f}%" if x < 0.1 else pct(x)


def core_share(x: float | None) -> str:
    """CPU used, as a share of one core: "7.2% of a core"."""
    return share_of_core(x) if x is None else f"{share_of_core(x)} of a core"
