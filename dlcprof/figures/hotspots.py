"""The compiler's hot frames (py-spy on the worker), per run.

By default the views show the compiling thread: torch.compile compiles on the
thread that calls the compiled function, the worker's main thread. Other
threads (Inductor's compile pool, a workload's helper threads such as tqdm's
monitor) mostly wait; they are one switch away. A share is of the samples of
its own thread, so one thread's shares never add up past 100%.
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import scratch, text
from dlcprof.data import data
from dlcprof.figures import runs as fruns
from dlcprof.figures.device import finite
from dlcprof.session import Run

KEYS = ("function", "file", "line", "thread", "own", "total", "phase")
COMPILING_THREAD = "main"
WAITING = (text.WAITING_COMPILER, text.WAITING_WORKERS, text.WAITING_PROCESS, text.WAITING_QUIET)
# The program's own work, named apart from the compiler's frames (monitors/samples.py).
PROGRAM_WORK = (
    text.RUNNING_COMPILED,
    text.RUNNING_OPTIMIZER,
    text.KERNEL_SAMPLER,
    text.DLCPROF_PROBES,
)


@data
class HotRow:
    function: str  # or what the thread waits on (text.WAITING_*)
    file: str
    line: int | str
    thread: str
    own: float | None  # share of the thread's samples spent in the function itself
    total: float | None  # ... with its callees
    phase: str | None  # the compile phase the samples fell in (None: not compiling)

    @property
    def waiting(self) -> bool:
        return self.function in WAITING

    @property
    def program_work(self) -> bool:
        return self.function in PROGRAM_WORK


def share(value: object, samples: int) -> float | None:
    """A sample count as a fraction of ``samples``."""
    if not finite(value) or samples <= 0:
        return None
    return float(value) / samples


def why_none(run: Run) -> str | None:
    """Why a run shows no hot frames although py-spy may have sampled it."""
    if fruns.is_imported(run):
        return fruns.NOT_IN_LOG
    if not run.live and not run.compiles:
        return f"the run ended ({run.status}) before compiling: py-spy saw only its start-up"
    return None


def thread_samples(run: Run) -> dict[str, int]:
    """Samples per thread; empty for reports written before threads were counted."""
    return dict(run.hot_frames.threads) if run.hot_frames else {}


def shown_thread(run: Run, all_threads: bool = False) -> str | None:
    """The thread the views show (None: all): the compiling one when it was sampled."""
    if all_threads or run.hot_frames is None:
        return None
    threads = {r.get("thread") for r in run.hot_frames.rows}
    return COMPILING_THREAD if COMPILING_THREAD in threads else None


def hot_rows(run: Run, limit: int = 20, all_threads: bool = False) -> list[HotRow]:
    """The heaviest frames first (rows come grouped by phase) of the compiling
    thread, or of every thread; none for a run that never compiled."""
    hot = run.hot_frames
    if hot is None or why_none(run) is not None:
        return []
    thread = shown_thread(run, all_threads)
    per_thread = thread_samples(run)
    raw = [r for r in hot.rows if thread is None or r.get("thread") == thread]
    raw.sort(key=lambda r: (-(r.get("own") or 0), -(r.get("total") or 0)))
    out = []
    for r in raw[:limit]:
        name = str(r.get("thread", ""))
        samples = per_thread.get(name, hot.samples)
        out.append(
            HotRow(
                function=str(r.get("function", "?")),
                file=str(r.get("file", "?")),
                line=r.get("line", "?"),
                thread=name,
                own=share(r.get("own"), samples),
                total=share(r.get("total"), samples),
                phase=r.get("phase") or None,
            )
        )
    return out


def samples_shown(run: Run, all_threads: bool = False) -> int:
    """The samples the shown shares are of (the shown thread's, or every tick)."""
    hot = run.hot_frames
    if hot is None:
        return 0
    thread = shown_thread(run, all_threads)
    return thread_samples(run).get(thread, hot.samples) if thread else hot.samples


def other_threads(run: Run, all_threads: bool = False) -> dict[str, int]:
    """Samples of the threads not shown, heaviest first."""
    thread = shown_thread(run, all_threads)
    if thread is None:
        return {}
    others = {t: n for t, n in thread_samples(run).items() if t != thread}
    return dict(sorted(others.items(), key=lambda kv: -kv[1]))


# --- the words of the hot frames (the units are text's) ------------------------


def samples(n: int) -> str:
    return f"{text.count(n)} sample" + ("" if n == 1 else "s")


def hot_scope(thread: str | None, n: int) -> str:
    """What a hot-frame table covers and what its shares are of."""
    if thread is None:
        return f"every thread, {text.count(n)} sampling ticks; shares of each thread's samples"
    return f"the compiling thread ({thread}), {samples(n)}"


def threads_not_shown(by_thread: dict[str, int]) -> str:
    """The threads a hot-frame table leaves out, with their samples."""
    return "not shown: " + ", ".join(f"{t} ({samples(n)})" for t, n in by_thread.items())


def profile_line(p: ev.ProfileSaved) -> str:
    """Where the py-spy profile is; one in the scratch folder is said to be
    temporary, since it goes when this dlcprof exits unless a save copies it."""
    line = f"{p.format} profile ({p.samples} samples): {p.path}"
    if scratch.holds(p.path):
        line += (
            " (temporary, gone when dlcprof exits: ctrl+s copies the latest run's into the report)"
        )
    return line
