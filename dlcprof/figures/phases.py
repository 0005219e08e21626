"""Compile phases: torch's phase names -> the compiler stage a user knows, and time per phase.

``stage_of`` is the one classifier: the TUI's timeline, the console's table,
the HTML timeline and its legend all colour a phase by it. Exact names come
first (the phases torch has emitted for several releases), then name
fragments for the many short passes and what later releases add.
"""

from __future__ import annotations

import re

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.session import Compile, Run


@data(frozen=True)
class Stage:
    name: str
    style: str  # a Rich colour, for the terminal
    color: str  # hex, for HTML and SVG


DYNAMO = Stage("Dynamo", "cyan", "#3b6fd8")
AOT = Stage("AOTAutograd", "magenta", "#8a5cd0")
INDUCTOR = Stage("Inductor", "green", "#1f9e89")
BUILD = Stage("C++/Triton", "red", "#e08a1e")  # kernel builds and loads
AUTOTUNE = Stage("Autotune", "yellow", "#c9a227")  # benchmarking choices (max-autotune)
OTHER = Stage("other", "bright_black", "#8b93a5")
STAGES = (DYNAMO, AOT, INDUCTOR, BUILD, AUTOTUNE, OTHER)


# A C++ or Triton module built (not found in the code cache), by its compile's id.
COMPILE_FILE = "compile_file"


@data(frozen=True)
class PhaseKind:
    stage: Stage
    label: str | None = None  # a key phase's name for people ("Inductor: fusion")


# The phases users ask about, in pipeline order (key phases carry a label),
# and the outer ones every compile has.
_EXACT: dict[str, PhaseKind] = {
    "dynamo": PhaseKind(DYNAMO),
    "entire_frame_compile": PhaseKind(DYNAMO),
    "bytecode_tracing": PhaseKind(DYNAMO, "Dynamo: trace bytecode"),
    "build_guards": PhaseKind(DYNAMO, "Dynamo: build guards"),
    "backend_compile": PhaseKind(AOT),
    "create_aot_dispatcher_function": PhaseKind(AOT, "AOTAutograd"),
    "inductor_compile": PhaseKind(INDUCTOR, "Inductor (total)"),
    "GraphLowering.run": PhaseKind(INDUCTOR, "Inductor: lowering"),
    "Scheduler.__init__": PhaseKind(INDUCTOR, "Inductor: fusion"),
    "Scheduler.codegen": PhaseKind(INDUCTOR, "Inductor: codegen"),
    "PythonWrapperCodegen.generate": PhaseKind(INDUCTOR, "Inductor: wrapper"),
    COMPILE_FILE: PhaseKind(BUILD, "C++/Triton compile"),
    "async_compile.wait": PhaseKind(BUILD, "Wait for kernel compiles"),
    "PyCodeCache.load_by_key_path": PhaseKind(BUILD, "Load compiled module"),
}
# Fragments of lower-cased names, first match wins: the build and cache
# phases are claimed before the broad "inductor"/"compile" words.
_FRAGMENTS: tuple[tuple[Stage, tuple[str, ...]], ...] = (
    (
        AUTOTUNE,
        (
            "_template_autotuning",
            "_template_precompiling",
            "benchmark_all_configs",
            "coordinate_descent_tuning",
            "combo_sequential_autotune",
        ),
    ),
    (
        BUILD,
        (
            "compile_file",
            "async_compile",
            "codecache",
            "load_by_key",
            "triton",
            "cpp_",
            "autotune",
            "benchmark",
        ),
    ),
    (AOT, ("aotautograd", "backend_compile", "create_aot", "aot_", "min_cut", "autograd_cache")),
    (
        INDUCTOR,
        (
            "inductor",
            "graphlowering",
            "scheduler",
            "codegen",
            "code_gen",
            "wrapper",
            "fx_graph",
            "compile_fx",
            "_compiler_base",
            "grad_passes",
            "graph_passes",
            "pass.",
            "_recursive_",
            "fake_tensor_prop",
            "freezing",
        ),
    ),
    (
        DYNAMO,
        (
            "dynamo",
            "entire_frame_compile",
            "compile_attempt",
            "bytecode_tracing",
            "build_guards",
            "compile_inner",
            "deferred_runtime_asserts",
            "guard",
        ),
    ),
)

KEY_PHASES: list[tuple[str, str]] = [(k.label, n) for n, k in _EXACT.items() if k.label]
KEY_NAMES = frozenset(n for _, n in KEY_PHASES)
# Phases every view shows whatever their length: the key ones and the outer frame.
ALWAYS_SHOWN = KEY_NAMES | {"dynamo", "entire_frame_compile", "backend_compile"}
# A phase under this share of its compile is folded into one "shorter phases"
# line (a compile has ~60 phases, most a millisecond or two).
FOLD_SHARE = 0.01
FOLD_MIN_S = 0.005
# A discarded attempt: Dynamo restarted its analysis of the frame.
_ATTEMPT_RE = re.compile(r"^compile_attempt_(\d+)$")


def kind_of(name: str) -> PhaseKind:
    known = _EXACT.get(name)
    if known is not None:
        return known
    low = name.lower()
    for stage, fragments in _FRAGMENTS:
        if any(f in low for f in fragments):
            return PhaseKind(stage)
    return PhaseKind(OTHER)


def stage_of(name: str) -> Stage:
    return kind_of(name).stage


def is_minor(seconds: float, base: float) -> bool:
    """Too short to be worth its own row in a compile of ``base`` seconds."""
    return seconds < max(FOLD_MIN_S, base * FOLD_SHARE)


def nest_phases(phases: list[ev.PhaseEnded]) -> list[tuple[ev.PhaseEnded, int]]:
    """Phases in start order, each with its depth: how many phases of the same
    thread enclose it. Phases on other threads (g++ pool) start at depth 0."""
    out: list[tuple[ev.PhaseEnded, int]] = []
    stacks: dict[int, list[ev.PhaseEnded]] = {}
    for p in sorted(phases, key=lambda p: (p.start_t, -p.duration_s)):
        stack = stacks.setdefault(p.thread, [])
        while stack and stack[-1].end_t < p.end_t - 1e-9:
            stack.pop()
        out.append((p, len(stack)))
        stack.append(p)
    return out


def main_thread(phases: list[ev.PhaseEnded]) -> int | None:
    """The thread that compiled: the one holding the longest phase. The others
    are pool threads (g++ compiles, async work)."""
    if not phases:
        return None
    return max(phases, key=lambda p: (p.duration_s, -p.start_t)).thread


def phase_span(phases: list[ev.PhaseEnded]) -> float:
    if not phases:
        return 0.0
    return max(p.end_t for p in phases) - min(p.start_t for p in phases)


@data
class PhaseTotal:
    name: str
    total_s: float
    count: int
    depth: int  # the shallowest depth it was seen at
    threads: int  # distinct threads it ran on (>1: summed over a pool)
    pool: bool  # ran off the compiling thread

    @property
    def stage(self) -> Stage:
        return stage_of(self.name)


def phase_totals(run: Run) -> list[PhaseTotal]:
    """Time per phase name over all compiles of a run: the compiling thread's
    phases first, then pool-thread phases."""
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
        stack: list[tuple[ev.PhaseEnded, tuple[str, ...]]] = []
        for p in sorted(c.phases, key=lambda p: (p.start_t, -p.duration_s)):
            if p.thread != main:
                t = pool_acc.setdefault(p.name, PhaseTotal(p.name, 0.0, 0, 0, 0, True))
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


def share_base(run: Run, tree: list[PhaseTotal]) -> float:
    """What phase shares are a share of: the compile wall time, or the
    outermost phases when they ran longer (torch's wall excludes a few ms of
    the outer dynamo phase)."""
    roots = sum(t.total_s for t in tree if t.depth == 0 and not t.pool)
    return max(run.compile_wall_s, roots)


def split_minor(totals: list[PhaseTotal], base: float) -> tuple[list[PhaseTotal], list[PhaseTotal]]:
    """(phases worth a row, the short ones folded)."""
    major = [
        t for t in totals if t.name in ALWAYS_SHOWN or t.depth == 0 or not is_minor(t.total_s, base)
    ]
    return major, [t for t in totals if t not in major]


@data
class KeyPhase:
    label: str
    name: str
    seconds: float | None  # None: the compile never entered it
    count: int
    threads: int  # distinct threads it ran on (>1: seconds summed over a pool)


def key_phases(c: Compile) -> list[KeyPhase]:
    """The key phases of one compile, in pipeline order (g++ calls add up);
    phases of an attempt Dynamo threw away are not counted (see ``restarts``)."""
    kept = kept_phases(c)
    out = []
    for label, name in KEY_PHASES:
        ran = [p for p in kept if p.name == name]
        seconds = sum(p.duration_s for p in ran) if ran else None
        out.append(KeyPhase(label, name, seconds, len(ran), len({p.thread for p in ran})))
    return out


def summed(c: Compile) -> list[KeyPhase]:
    """The key phases of a compile whose seconds add up several threads' (and
    so may exceed its wall)."""
    return [k for k in key_phases(c) if k.threads > 1]


def attempt(name: str) -> int | None:
    """N of a ``compile_attempt_N`` phase (Dynamo's Nth try at a frame)."""
    m = _ATTEMPT_RE.match(name)
    return int(m.group(1)) if m else None


# --- restarts: attempts Dynamo threw away ------------------------------------------

_EXC_CLASS = re.compile(r"^<class '(?:[\w.]+\.)?(\w+)'>$")


@data
class Restarts:
    """Dynamo restarted its analysis of a frame: each discarded attempt, why, what it cost."""

    attempts: list[tuple[int, float]]  # (N of compile_attempt_N, seconds), the discarded ones
    reasons: list[str]  # torch's restart_reasons (a set: not tied to one attempt), worded
    cost_s: float  # torch's dynamo_time_before_restart_s, else the discarded attempts' sum

    @property
    def count(self) -> int:
        return max(len(self.attempts), len(self.reasons), 1)


def _discarded(c: Compile) -> list[ev.PhaseEnded]:
    """The ``compile_attempt_N`` phases before the last one: attempts thrown away."""
    tries = [p for p in c.phases if attempt(p.name) is not None]
    last = max((attempt(p.name) or 0 for p in tries), default=0)
    return sorted((p for p in tries if attempt(p.name) != last), key=lambda p: p.start_t)


def kept_phases(c: Compile) -> list[ev.PhaseEnded]:
    """A compile's phases outside the attempts Dynamo threw away (any thread:
    a compile runs one attempt at a time)."""
    dropped = [(p.start_t, p.end_t) for p in _discarded(c)]
    return [p for p in c.phases if not any(a <= p.start_t and p.end_t <= b for a, b in dropped)]


def restart_reason(reason: str, c: Compile) -> str:
    """One line: the exception's class name, or "graph break: <reason>" when
    Dynamo restarted to compile the frame up to a break."""
    line = next((ln.strip() for ln in reason.splitlines() if ln.strip()), reason.strip())
    m = _EXC_CLASS.match(line)
    if m:
        return m.group(1)
    if any(gb.reason == line for gb in c.graph_breaks):
        return f"graph break: {line}"
    return line


def restarts(c: Compile) -> Restarts | None:
    """None when Dynamo kept its first attempt."""
    metrics = c.record.metrics if c.record is not None else {}
    reasons = [restart_reason(str(r), c) for r in metrics.get("restart_reasons") or []]
    attempts = [(attempt(p.name) or 0, p.duration_s) for p in _discarded(c)]
    if not attempts and not reasons:
        return None
    before = metrics.get("dynamo_time_before_restart_s")
    cost = float(before) if before else sum(s for _, s in attempts)
    return Restarts(attempts, sorted(set(reasons)), cost)


# --- the words of the phases (the units are text's) ----------------------------

# Pool threads (g++ builds, Triton's workers) run beside the compiling thread:
# their seconds add up, so a phase's total can exceed the compile's wall.
SUMMED_NOTE = (
    "pool-thread phases such as g++ builds overlap the compiling thread and are summed over threads"
)


def pool_words(threads: int) -> str:
    """ "pool thread", or "summed over 3 pool threads"."""
    return "pool thread" if threads <= 1 else f"summed over {threads} pool threads"


def key_phase_words(k: KeyPhase) -> str:
    """ "20.08 s ×5, summed over 3 threads": a key phase's seconds in one compile."""
    if k.seconds is None:
        return text.NA
    many = f" ×{k.count}" if k.count > 1 else ""
    pool = f", summed over {k.threads} threads" if k.threads > 1 else ""
    return f"{text.secs(k.seconds)}{many}{pool}"


def summed_words(c: Compile) -> str | None:
    """ "C++/Triton compile 20.08 s ×5, summed over 3 threads", said under a
    compile's wall; None when no key phase ran on more than one thread."""
    ks = summed(c)
    return "; ".join(f"{k.label} {key_phase_words(k)}" for k in ks) if ks else None


# Where a compile's CPU seconds ran: (label, CompileCpuMeasured field), a row
# of the console's phases table (indented: part of the row above) and a column
# of the reports' compiles table.
CPU_PARTS = (
    ("CPU (process + compiler subprocesses)", "cpu_s"),
    ("  of it: compiler subprocesses", "compilers_s"),
    ("compile workers' CPU (apart)", "workers_s"),
)


NO_WORKERS = "no Inductor compile-worker process ran (or no /proc to read)"


def cpu_cells(c: Compile) -> list[str]:
    """``CPU_PARTS`` of one compile, each "n/a" where it was not measured."""
    parts = [getattr(c.cpu, field, None) if c.cpu else None for _, field in CPU_PARTS]
    return [text.secs(s) if s is not None else text.NA for s in parts]


def cpu_note(compiles: list[Compile]) -> str | None:
    """Why the compile workers' CPU reads n/a, under a table of ``cpu_cells``."""
    if any(c.cpu is not None and c.cpu.workers_s is None for c in compiles):
        return f"{CPU_PARTS[2][0]} n/a: {NO_WORKERS}"
    return None


def cpu_words(c: Compile) -> str | None:
    """ "CPU 12.31 s: this process 4.10 s, compiler subprocesses 8.21 s; compile
    workers 0.52 s": where a compile's CPU seconds ran, in and outside Python
    (None: not measured)."""
    cpu = c.cpu
    if cpu is None:
        return None
    if cpu.compilers_s is None:
        return f"CPU {text.secs(cpu.cpu_s)}"
    own = max(0.0, cpu.cpu_s - cpu.compilers_s)
    workers = text.secs(cpu.workers_s) if cpu.workers_s is not None else f"{text.NA} ({NO_WORKERS})"
    return (
        f"CPU {text.secs(cpu.cpu_s)}: this process {text.secs(own)}, compiler subprocesses "
        f"{text.secs(cpu.compilers_s)}; compile workers {workers}"
    )


def restarts_words(count: int, cost_s: float, reasons: list[str]) -> str:
    """ "1 restart threw away 2.89 s (TensorifyScalarRestartAnalysis)"."""
    why = f" ({'; '.join(reasons)})" if reasons else ""
    return f"{text.plural(count, 'restart')} threw away {text.secs(cost_s)}{why}"
