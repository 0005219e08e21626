"""Fused kernels: grouped across compiles, where each came from, and what each
costs inside the compiled call (the profiling stage, ``KernelsProfiled``)."""

from __future__ import annotations

import re
from collections.abc import Mapping

from dlcprof import events as ev
from dlcprof import text
from dlcprof.attach_contract import NOT_SAMPLED_YET
from dlcprof.data import data
from dlcprof.figures import runs as fruns
from dlcprof.figures.outcome import NO_SPEEDUP
from dlcprof.session import Run

# An imported run's kernels: their code is in its log, their times are not.
NO_TIMES_IN_LOG = "a TORCH_TRACE log holds no kernel times"
# Why a program's process has no kernel times yet, by whose it is.
_UNTIMED = {
    fruns.IMPORTED: NO_TIMES_IN_LOG,
    fruns.TEST: fruns.TEST_UNTIMED,
    fruns.ATTACHED: NOT_SAMPLED_YET,
}

_GRAPH_SHORT = {"forward": "fwd", "backward": "bwd", "inference": ""}
_SOURCE_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?:\s+(?P<code>.*))?$")


def key_of(compile_id: str, graph: str | None, name: str, order: int) -> str:
    return f"{compile_id}|{graph}|{name}|{order}"


def kernel_key(k: ev.KernelGenerated) -> str:
    """Unique within a run: names repeat across compiles and across a compile's
    forward and backward graphs."""
    return key_of(k.compile_id, k.graph, k.name, k.order)


def compile_label(k: ev.KernelGenerated) -> str:
    """ "0/0", "0/0 fwd", "0/0 (bwd)": the compile that generated it, and which
    of its graphs (a backward compiled lazily is a compile of its own)."""
    if k.compile_id.endswith(ev.BACKWARD):
        return k.compile_id
    short = _GRAPH_SHORT.get(k.graph, k.graph) if k.graph else ""
    return f"{k.compile_id} {short}".strip()


@data
class KernelGroup:
    """One kernel and every compile that generated it at the same place: the
    same frame, graph and position in the call, the same name and fused ops (a
    static-shape sweep regenerates each kernel once per shape)."""

    kernel: ev.KernelGenerated
    compile_ids: list[str]

    @property
    def label(self) -> str:
        """ "0/0 fwd", "0/0 fwd, 0/1": every compile that generated it, not a bare count."""
        more = self.compile_ids[1:]
        return compile_label(self.kernel) + (f", {compile_list(more)}" if more else "")


def frame_of(compile_id: str) -> str:
    """The frame a compile id compiles: "0" for "0/3" and "sweep:0/1", "0 (bwd)"
    for a lazily compiled backward of frame 0."""
    frame = compile_id.split("/", 1)[0].rsplit(":", 1)[-1]
    return frame + (ev.BACKWARD if compile_id.endswith(ev.BACKWARD) else "")


def kernel_groups(run: Run) -> list[KernelGroup]:
    """Every kernel once per place it has in its frame's call, in launch order;
    a launch repeated within one call (sixteen addmms) keeps a row each."""
    groups: dict[tuple, KernelGroup] = {}
    for c in run.compiles.values():
        for k in sorted(c.kernels, key=lambda k: k.order):
            key = (frame_of(k.compile_id), k.graph, k.order, k.name, tuple(k.fused_ops))
            g = groups.get(key)
            if g is None:
                groups[key] = KernelGroup(k, [k.compile_id])
            elif k.compile_id not in g.compile_ids:
                g.compile_ids.append(k.compile_id)
    return list(groups.values())


def is_library_call(k: ev.KernelGenerated) -> bool:
    """A call into a library (aten, MKL, cuBLAS): nothing fused into it."""
    return k.kind == "extern"


@data(frozen=True)
class KernelCount:
    """What a run generated, as each compile's output code has it: fused kernels
    and library calls summed over the compiles (a recompile's own kernels count),
    and the rows they make once a kernel regenerated at the same place by a
    later compile shares its first compile's row (``kernel_groups``)."""

    fused: int
    library: int
    compiles: int
    rows: int  # the table's rows, one per kernel_groups group

    @property
    def words(self) -> str:
        """ "31 fused kernels, 65 library calls (in 3 compiles)"."""
        out = text.plural(self.fused, "fused kernel")
        if self.library:
            out += f", {text.plural(self.library, 'library call')}"
        return out + (f" (in {self.compiles} compiles)" if self.compiles > 1 else "")

    @property
    def cell(self) -> str:
        """ "31 / 65" under CELL_HEAD."""
        return f"{self.fused} / {self.library}"

    @property
    def rows_words(self) -> str | None:
        """Why a grouped table has fewer rows than kernels; None when it has as many."""
        if self.rows >= self.fused + self.library:
            return None
        return (
            f"{text.plural(self.rows, 'row')}: a kernel a later compile generated again at "
            "the same place shares its row, which lists each compile"
        )


# A table column of kernel counts (KernelCount.cell).
CELL_HEAD = "kernels / library calls"


def kernel_count(run: Run) -> KernelCount:
    """The one kernel count every view states (console, TUI, reports, modes)."""
    kernels = run.kernels
    library = sum(is_library_call(k) for k in kernels)
    compiles = len({k.compile_id for k in kernels})
    return KernelCount(len(kernels) - library, library, compiles, len(kernel_groups(run)))


# The widest a kernel's name and its fused ops are in a console row: longer ones
# lose their middle ("…"), so that the figures beside them stay on the screen.
NAME_CELL = 48
OPS_CELL = 40


def short_name(name: str, limit: int = NAME_CELL) -> str:
    """A long generated name without its middle: its start and its number stay."""
    return text.middle(name, limit)


def ops_whole(k: ev.KernelGenerated) -> str:
    return ", ".join(short_ops(k)) or text.NA


def ops_cell(k: ev.KernelGenerated, limit: int = OPS_CELL) -> str:
    """The fused ops in at most ``limit`` characters: "sub, add, … (+9)" (never
    a trailing comma); too narrow even for that, cut in the middle."""
    ops = short_ops(k)
    if len(", ".join(ops)) <= limit:
        return ops_whole(k)
    shown: list[str] = []
    for op in ops:
        left = len(ops) - len(shown) - 1
        if len(", ".join([*shown, op, f"… (+{left})"])) > limit:
            break
        shown.append(op)
    cut = ", ".join([*shown, f"… (+{len(ops) - len(shown)})"])
    return cut if len(cut) <= limit else text.middle(ops_whole(k), limit)


def source_line(line: str) -> tuple[str, str]:
    """("file.py:13", "y = torch.sin(x)") from a "path/file.py:13 code" line;
    the path shortened to its file name (the full one is in the report)."""
    m = _SOURCE_LINE.match(line.strip())
    if not m:
        return "", line.strip()
    name = m["path"].replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{m['line']}", (m["code"] or "").strip()


def compile_list(ids: list[str], limit: int = 4) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" +{len(ids) - limit} more" if len(ids) > limit else "")


def short_ops(k: ev.KernelGenerated) -> list[str]:
    """Fused ops without the ``aten.`` prefix every one of them carries."""
    return [op.removeprefix("aten.") for op in k.fused_ops]


# --- time, fusion gain and bandwidth (the profiling stage) ------------------------------


@data(frozen=True)
class KernelTiming:
    """One kernel's figures per compiled call; a None figure has its reason in ``why``."""

    time_ms: float | None
    spread_ms: float | None  # IQR over the profiling repetitions
    share: float | None  # of the compiled call's measured latency
    launches: int
    eager_ms: float | None  # the eager ops it fused, run one by one
    gain: float | None  # eager_ms / time_ms: what fusing them saved
    bytes: int | None  # read + written
    gbps: float | None
    bw_share: float | None  # gbps / the copy bandwidth measured on the spot
    why: dict[str, str]

    def reason(self, figure: str) -> str | None:
        """Why ``figure`` is None: the reason of what it is made of, else its own."""
        for f in (*_MADE_OF.get(figure, ()), figure):
            if f in self.why:
                return self.why[f]
        return None


# A derived figure is n/a for the reason one of its parts is.
_MADE_OF = {
    "share": ("time_ms",),
    "gain": ("time_ms", "eager_ms"),
    "gbps": ("time_ms", "bytes"),
    "bw_share": ("time_ms", "bytes"),
}


@data(frozen=True)
class ProfileSummary:
    """The profiling stage as a whole: how much of each call its parts explain."""

    method: str
    calls: int
    wall_s: float
    kernel_ms: float | None  # sum of kernel times per compiled call
    kernel_spread_ms: float | None  # sum of their spreads (IQR), None where one has none
    compiled_ms: float | None  # the compiled call, measured alongside the kernels
    coverage: float | None  # kernel_ms / compiled_ms
    call_ms: float | None  # the compiled call while instrumented
    eager_nodes_ms: float | None  # the user ops of the graphs, run one by one
    eager_kernels_ms: float | None  # the part of it the kernels fused (views stay out)
    eager_ms: float | None  # the eager call, measured alongside the replay
    eager_coverage: float | None  # eager_nodes_ms / eager_ms
    eager_why: str | None
    copy_gbps: float | None
    copy_why: str | None
    device_busy: float | None  # GPU: device kernel time / compiled latency
    notes: list[str]


def why_no_profile(run: Run) -> str:
    """Why a run has no per-kernel figures, in one wording for every view."""
    if run.kernel_profile is not None:
        return "not profiled"
    if (whose := fruns.kind(run)) != fruns.WORKLOAD:
        return _UNTIMED[whose]
    if run.settings is not None and run.settings.backend != "inductor":
        return f"backend {run.settings.backend} generates no kernels"
    if run.nothing_compiled is not None:
        return NO_SPEEDUP
    if run.settings is not None and not run.settings.benchmark:
        # The TUI's shape sweep skips the benchmark by itself: no flag to name there.
        why = (
            "a shape sweep skips the benchmark"
            if run.settings.sweep
            else ("compile only (--no-benchmark)")
        )
        return f"{why}: kernels are profiled after the benchmark"
    if run.profiling is not None:
        return "profiling…" if run.live else f"the run ended ({run.status}) while profiling"
    if run.live:
        return "measured after the benchmark"
    if run.status in ("cancelled", "crashed", "error"):
        return f"the run ended ({run.status}) before the profiling stage"
    return "no profiling stage in this run"


def _ratio(a: float | None, b: float | None) -> float | None:
    return a / b if a is not None and b is not None and b > 0 else None


def _compiled_ms(run: Run) -> float | None:
    """The compiled call the kernel times are shares of: measured alongside them
    by the profiling stage, else the benchmark's."""
    p = run.kernel_profile
    if p is not None and p.compiled_ms is not None:
        return p.compiled_ms
    return run.benchmark.compiled_ms if run.benchmark else None


# A library call fuses nothing: eager runs the very same call, so a "gain" of
# it would only compare two timings of one call, split by attribution.
LIBRARY_GAIN = "a library call: nothing fused into it, eager runs the same call"


def kernel_timings(run: Run) -> dict[str, KernelTiming]:
    """Every kernel of the run by kernel_key (n/a with the reason where not measured)."""
    p = run.kernel_profile
    measured = {
        key_of(d["compile_id"], d.get("graph"), d["name"], d["order"]): d
        for d in (p.kernels if p else [])
    }
    compiled_ms = _compiled_ms(run)
    copy = p.copy_gbps if p else None
    out = {}
    for k in run.kernels:
        key = kernel_key(k)
        d = measured.get(key)
        if d is None:
            later = (
                NOT_SAMPLED_YET if run.process is not None else "compiled after the profiling stage"
            )
            absent = later if p else why_no_profile(run)
            d = {"why": dict.fromkeys(("time_ms", "eager_ms", "bytes"), absent)}
        why = dict(d.get("why") or {})
        t, eager, nbytes = d.get("time_ms"), d.get("eager_ms"), d.get("bytes")
        gbps = nbytes / (t * 1e6) if nbytes is not None and t else None
        if is_library_call(k):
            why.setdefault("gain", LIBRARY_GAIN)
        if compiled_ms is None:
            why["share"] = "no benchmark"
        if copy is None:
            why["bw_share"] = (p.copy_why if p else None) or "no copy bandwidth measured"
        out[key] = KernelTiming(
            time_ms=t,
            spread_ms=d.get("spread_ms"),
            share=_ratio(t, compiled_ms),
            launches=int(d.get("launches") or 0),
            eager_ms=eager,
            gain=None if is_library_call(k) else _ratio(eager, t),
            bytes=nbytes,
            gbps=gbps,
            bw_share=_ratio(gbps, copy),
            why=why,
        )
    return out


def group_timing(group: KernelGroup, timings: dict[str, KernelTiming]) -> KernelTiming | None:
    """A kernel compiled several times identically: the first compile that was timed."""
    first = None
    for cid in group.compile_ids:
        k = group.kernel
        t = timings.get(key_of(cid, k.graph, k.name, k.order))
        if t is not None and t.time_ms is not None:
            return t
        first = first or t
    return first or timings.get(kernel_key(group.kernel))


def by_time(
    kernels: list[ev.KernelGenerated], timings: Mapping[str, KernelTiming | None]
) -> list[ev.KernelGenerated]:
    """Slowest first; kernels without a time after, in launch order."""

    def key(k: ev.KernelGenerated) -> tuple[float, str, int]:
        t = timings.get(kernel_key(k))
        ms = t.time_ms if t is not None and t.time_ms is not None else -1.0
        return (-ms, k.compile_id, k.order)

    return sorted(kernels, key=key)


def profile_summary(run: Run) -> ProfileSummary | None:
    p = run.kernel_profile
    if p is None:
        return None
    timed = [d for d in p.kernels if d.get("time_ms") is not None]
    kernel_ms = sum(d["time_ms"] for d in timed) if timed else None
    spreads = [d.get("spread_ms") for d in timed]
    spread_ms = sum(x for x in spreads if x is not None) if None not in spreads else None
    eager = [d["eager_ms"] for d in p.kernels if d.get("eager_ms") is not None]
    b = run.benchmark
    compiled_ms = _compiled_ms(run)
    eager_ms = p.eager_ms if p.eager_ms is not None else (b.eager_ms if b else None)
    return ProfileSummary(
        method=p.method,
        calls=p.calls,
        wall_s=p.wall_s,
        kernel_ms=kernel_ms,
        kernel_spread_ms=spread_ms,
        compiled_ms=compiled_ms,
        coverage=_ratio(kernel_ms, compiled_ms),
        call_ms=p.call_ms,
        eager_nodes_ms=p.eager_nodes_ms,
        eager_kernels_ms=sum(eager) if eager else None,
        eager_ms=eager_ms,
        eager_coverage=_ratio(p.eager_nodes_ms, eager_ms),
        eager_why=p.eager_why,
        copy_gbps=p.copy_gbps,
        copy_why=p.copy_why,
        device_busy=_ratio(p.device_busy_ms, compiled_ms),
        notes=list(p.notes),
    )


# The per-kernel figure columns, as every table heads them (TimingCells order).
TIMING_COLUMNS = ("time", "share", "eager ops", "fusion gain", "bytes", "GB/s", "of copy BW")


@data(frozen=True)
class TimingCells:
    """A kernel's figures worded for a table row ("n/a¹" where not known)."""

    time: str
    share: str
    eager: str
    gain: str
    bytes: str
    gbps: str
    bw_share: str

    def values(self) -> tuple[str, ...]:
        """In TIMING_COLUMNS order."""
        return (self.time, self.share, self.eager, self.gain, self.bytes, self.gbps, self.bw_share)


def timing_cells(t: KernelTiming | None, notes: text.Footnotes) -> TimingCells:
    if t is None:
        na = notes.cell(None, "not profiled")
        return TimingCells(na, na, na, na, na, na, na)

    def cell(value: float | None, figure: str, words) -> str:
        return notes.cell(None if value is None else words(value), t.reason(figure))

    return TimingCells(
        time=cell(t.time_ms, "time_ms", text.ms),
        share=cell(t.share, "share", text.pct),
        eager=cell(t.eager_ms, "eager_ms", text.ms),
        gain=cell(t.gain, "gain", text.speedup),
        bytes=cell(t.bytes, "bytes", text.nbytes),
        gbps=cell(t.gbps, "gbps", text.gbps),
        bw_share=cell(t.bw_share, "bw_share", text.pct),
    )


def timing_sentence(t: KernelTiming) -> str:
    """One kernel's figures in a line, each "n/a (why)" where not known."""
    time = text.ms(t.time_ms, t.reason("time_ms"))
    if t.share is not None:
        time += f" ({text.pct(t.share)} of the compiled call)"
    if t.launches > 1:
        time += f", {t.launches} launches"
    return (
        f"time {time} · eager ops {text.ms(t.eager_ms, t.reason('eager_ms'))} · "
        f"fusion gain {text.speedup(t.gain, t.reason('gain'))} · "
        f"{text.nbytes(t.bytes, t.reason('bytes'))} read and written at "
        f"{text.gbps(t.gbps, t.reason('gbps'))} = "
        f"{text.pct(t.bw_share, t.reason('bw_share'))} of copy bandwidth"
    )


def summary_lines(run: Run, method: bool = True) -> list[str]:
    """The profiling stage in sentences: coverage, eager coverage, copy bandwidth,
    and (``method``) how and when it measured."""
    s = profile_summary(run)
    if s is None:
        return [f"time per kernel: {text.na(why_no_profile(run))}"]
    lines = [
        kernel_coverage(s.kernel_ms, s.compiled_ms, s.coverage, s.device_busy, s.kernel_spread_ms),
        eager_coverage(
            s.eager_nodes_ms, s.eager_ms, s.eager_coverage, s.eager_why, s.eager_kernels_ms
        ),
        copy_bandwidth(s.copy_gbps, s.copy_why),
        *s.notes,
    ]
    if any((t.bw_share or 0) > 1 for t in kernel_timings(run).values()):
        lines.append(f"of copy BW {OVER_COPY}")
    if not method:
        return lines
    if run.process is not None:
        return [*lines, sampled(s.calls, s.method)]
    return [*lines, text.profiled(s.wall_s, s.calls, s.method)]


def sampled(calls: int, method: str) -> str:
    """How an attached program's kernels were timed (dlcprof/worker/attached/kernel_sample.py;
    what that cost the program is figures/job/program.py's sampling line)."""
    return f"sampled in the program's own calls: {calls} calls, {method}"


# --- the words of the profiling stage (the units are text's) -------------------

# Figures that pass 100%, and why: said where they show (console, reports, the
# Kernels pane's lines), not only in the TUI's help.
OVER_CALL = "over 100%: medians summed, within their spread: the call is all kernels"
OVER_CALL_BEYOND = (
    "over 100% beyond the kernels' spread: timed one by one they ran slower than the "
    "plain call (a loaded machine, or the timers' own cost): read their shares as upper bounds"
)
OVER_CALL_UNJUDGED = "over 100%: medians summed, with no spread to judge it by"
OVER_COPY = "over 100%: the kernel's bytes sat in cache, the copy's in memory"
OVER_EAGER = (
    "over 100%: timed one by one, the ops took longer than in the call that runs them "
    "together: read the fusion gains as upper bounds"
)


def kernel_coverage(
    kernel_ms: float | None,
    compiled_ms: float | None,
    coverage: float | None,
    device_busy: float | None = None,
    spread_ms: float | None = None,
) -> str:
    """How much of the compiled call the kernels explain; the rest is the wrapper's
    own work. Over 100% is noise only where the kernels' summed spread reaches
    back to the call."""
    if kernel_ms is None:
        return f"kernels {text.NA} (no kernel was timed)"
    out = f"kernels {text.ms(kernel_ms)}"
    if coverage is None:
        return out
    out += f" = {text.pct(coverage)} of the compiled call ({text.ms(compiled_ms)}, timed alongside)"
    if device_busy is not None:
        return out + f"; device busy {text.pct(device_busy)} of the call"
    if coverage <= 1:
        return out + "; the rest is Python, guards, allocation and launches"
    if spread_ms is None or compiled_ms is None:
        return out + f"; {OVER_CALL_UNJUDGED}"
    within = kernel_ms - spread_ms <= compiled_ms
    return out + f"; {OVER_CALL if within else OVER_CALL_BEYOND}"


def eager_coverage(
    nodes_ms: float | None,
    eager_ms: float | None,
    coverage: float | None,
    why: str | None,
    in_kernels_ms: float | None = None,
) -> str:
    """The user's ops run one by one, against the eager call they come from, and
    how much of them the kernels fused."""
    if nodes_ms is None:
        return f"eager ops {text.na(why)}"
    out = f"eager ops one by one {text.ms(nodes_ms)}"
    if coverage is not None:
        out += f" = {text.pct(coverage)} of the eager call ({text.ms(eager_ms)}, timed alongside)"
    if in_kernels_ms is not None:
        out += f"; the kernels fused {text.ms(in_kernels_ms)} of them"
    if coverage is not None and coverage > 1:
        out += f"; {OVER_EAGER}"
    return out


def copy_bandwidth(x: float | None, why: str | None) -> str:
    if x is None:
        return f"copy bandwidth {text.gbps(x, why)}"
    return f"copy bandwidth {text.gbps(x)} (a 256 MiB tensor copy, same device and threads)"
