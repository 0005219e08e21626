"""The probes inside an attached program's process (installed by the bootstrap
once ``torch`` has finished importing).

The worker's shared probes (``worker/probe_set.py``), fed to a ``Channel``
instead of a pipe: the trace handler (phases, compile records, kernels with
provenance, recompile reasons, graph breaks, cache state), autotuning, torch's
raw trace for tlparse (under torch's per-rank name in a rank); then this
host's own: CUDA-graph status, the calls of each compiled graph and the kernel
times of a few, when the process group finished initializing (rendezvous.py),
DDP's buckets, a compile that raised into the program (probes/raised.py),
compile seconds by the program's functions and modules (probes/compile_cost.py,
sent at the process's end), and from the first recompile limit hit the calls
that ran eager (probes/guards.py).
The process stays silent until it compiles: the channel opens at the first
compile event. A forked child (a DataLoader worker) starts over as a process
of its own. At exit the totals are sent and the channel drained for at most a
moment.
"""

from __future__ import annotations

import atexit
import os
import platform
import socket
import sys
import time
import traceback
from collections.abc import Callable
from typing import Any

from dlcprof import events as ev
from dlcprof.attach_contract import (
    CACHE_ARTIFACTS_ENV,
    DYNAMIC_ENV,
    DYNAMIC_UNSET,
    EAGER_ENV,
    HATCH_ENV,
    HATCH_UNSET,
    SOCKET_ENV,
    STEPS_ENV,
)
from dlcprof.worker.attached import graph_calls, kernel_sample, rendezvous
from dlcprof.worker.attached.channel import Channel
from dlcprof.worker.attached.steps import Steps
from dlcprof.worker.cores import usable_cores
from dlcprof.worker.fresh_lines import FreshLines
from dlcprof.worker.probe_set import ProbeSet
from dlcprof.worker.probes import ProbeNotes, compile_calls, compile_cost, compile_workers
from dlcprof.worker.probes import cudagraphs as cudagraphs_probe
from dlcprof.worker.probes import ddp as ddp_probe
from dlcprof.worker.probes import guards as guards_probe
from dlcprof.worker.probes import raised as raised_probe
from dlcprof.worker.remedies import (
    BadRemedy,
    load_artifacts,
    save_artifacts,
    set_dynamic_sources,
    set_hatch,
)

# Events that open the channel: the process compiles (or has compiled code run).
# --eager-baseline's run compiles nothing: its timed steps open it.
_ARMING = (ev.PhaseStarted, ev.PhaseEnded, ev.CompileFinished, ev.GraphCallsTimed, ev.StepsTimed)


def _arms(e: ev.Event) -> bool:
    """A compile opens the channel; so does the end of a rank that never compiled
    (it is shown as such, not missing)."""
    return isinstance(e, _ARMING) or (isinstance(e, ev.RunFinished) and _is_rank())


_process: AttachedProcess | None = None


def install(torch: Any) -> None:
    """Called once per process by the bootstrap, right after ``import torch``."""
    global _process
    path = os.environ.get(SOCKET_ENV)
    if _process is not None or not path:
        return
    if os.environ.get(EAGER_ENV) == "1":
        _force_eager(torch)
    _process = AttachedProcess(torch, path)
    hatch = os.environ.get(HATCH_ENV)
    if hatch:
        _process.change(set_hatch, hatch, HATCH_UNSET)
    dynamic = os.environ.get(DYNAMIC_ENV)
    if dynamic:
        _process.change(set_dynamic_sources, dynamic, DYNAMIC_UNSET)
    os.register_at_fork(after_in_child=_process.forked)
    atexit.register(_process.finish)
    artifacts = os.environ.get(CACHE_ARTIFACTS_ENV)
    if artifacts:  # registered after finish: saved before it sends the totals
        _process.cache_artifacts(artifacts)
    previous = sys.excepthook

    def excepthook(kind, value, tb):
        _process.uncaught(kind, value, tb)
        previous(kind, value, tb)

    sys.excepthook = excepthook


def _uncaught_unseen() -> tuple[type, BaseException, Any] | None:
    """The exception that ended the main thread when the excepthook missed it (a
    second signal, say torchrun passing on a Ctrl-C, can interrupt the hook before
    it runs). Python keeps it in ``sys.last_value`` before calling the hook; its
    traceback starts at the outermost frame, which one a test runner or a shell
    kept for post-mortem debugging does not."""
    value = getattr(sys, "last_exc", None) or getattr(sys, "last_value", None)
    tb = getattr(value, "__traceback__", None)
    if not isinstance(value, BaseException) or tb is None or tb.tb_frame.f_back is not None:
        return None
    return type(value), value, tb


def _force_eager(torch: Any) -> None:
    """--eager-baseline: every torch.compile'd call runs eager."""
    try:
        torch.compiler.set_stance("force_eager")
    except Exception as e:  # noqa: BLE001
        print(f"dlcprof: could not force eager ({e!r}): this run compiles", file=sys.stderr)


def _int_env(name: str) -> int | None:
    value = os.environ.get(name, "")
    return int(value) if value.strip().lstrip("-").isdigit() else None


def _is_rank() -> bool:
    """A rank of a launched job (torchrun sets RANK and LOCAL_RANK), not a
    DataLoader worker it spawned (which inherits them)."""
    if _int_env("RANK") is None or _int_env("LOCAL_RANK") is None:
        return False
    data = sys.modules.get("torch.utils.data")
    try:
        return data is None or data.get_worker_info() is None
    except Exception:  # noqa: BLE001
        return True


def _process_start() -> float | None:
    """When this process started, by the kernel's account (Linux), else None."""
    try:
        with open("/proc/self/stat") as f:
            ticks = int(f.read().rsplit(")", 1)[1].split()[19])
        with open("/proc/stat") as f:
            boot = next(int(ln.split()[1]) for ln in f if ln.startswith("btime "))
        return boot + ticks / os.sysconf("SC_CLK_TCK")
    except (OSError, ValueError, IndexError, StopIteration):
        return None


def _fresh_lines() -> FreshLines:
    """A cache hit cites the files of the compile that wrote the entry: the
    program's own files as they are now instead (the script's folder first)."""
    fresh = FreshLines()
    script = os.path.abspath(sys.argv[0]) if sys.argv and sys.argv[0] else ""
    fresh.home = os.path.dirname(script) if os.path.isfile(script) else os.getcwd()
    return fresh


def _importing_torch() -> bool:
    """A module of torch's other than Dynamo (whose import has just run, and
    which the probes install from) is still executing its import."""
    return any(
        name.startswith("torch.")
        and name != "torch._dynamo"
        and getattr(getattr(module, "__spec__", None), "_initializing", False)
        for name, module in list(sys.modules.items())
    )


def _inductor_cache_dir() -> str | None:
    """The Inductor cache folder this process uses (ranks on one host may share
    one): TORCHINDUCTOR_CACHE_DIR, else torch's default, read from the module
    Dynamo has imported by the first compile (never imported here)."""
    path = os.environ.get("TORCHINDUCTOR_CACHE_DIR")
    utils = sys.modules.get("torch._inductor.runtime.cache_dir_utils")
    try:
        path = path or (utils.default_cache_dir() if utils is not None else None)
    except Exception:  # noqa: BLE001 - a private API: unknown then
        return None
    return os.path.abspath(path) if path else None


# Set on torch by bootstrap/sitecustomize.py once torch imported: did
# TORCHINDUCTOR_CACHE_DIR exist? (Dynamo's import creates it, before the probes.)
CACHE_DIR_EXISTED = "__dlcprof_cache_dir_existed__"
# When ``import torch`` returned, by the bootstrap (the probes install later, at
# Dynamo's import).
LOADED_T = "__dlcprof_loaded_t__"


def _folder_state(torch: Any, path: str | None) -> str | None:
    """ "missing", "empty" or "filled": the cache folder before this process
    compiled (a new or empty one means every graph compiles cold); None unknown."""
    if path is None:
        return None
    if getattr(torch, CACHE_DIR_EXISTED, True) is False:
        return "missing"
    try:
        with os.scandir(path) as entries:
            return "filled" if next(entries, None) is not None else "empty"
    except FileNotFoundError:
        return "missing"
    except OSError:
        return None


class AttachedProcess:
    def __init__(self, torch: Any, path: str) -> None:
        self.loaded_t: float | None = getattr(torch, LOADED_T, None)
        self.torch = torch
        # Read before the first compile writes to it (a forked child keeps its parent's).
        self.cache_dir = _inductor_cache_dir()
        self.cache_dir_state = _folder_state(torch, self.cache_dir)
        self.channel = Channel(path, self._hello, _arms)
        self._restart()
        self.probes = ProbeSet(
            self.channel, self.run_id, self.notes, _fresh_lines(), rank=_int_env("RANK")
        )
        # This host's extras. Hooks on torch's classes and registries: once; they
        # outlive a fork.
        cudagraphs_probe.CudagraphProbe(
            self.channel, self.run_id, self.notes, lambda: self.probes.dispatcher.prefix
        ).install()
        self.sampler = kernel_sample.KernelSampler(
            self.run_id, self.channel.emit, lambda: self.probes.kernels, lambda: self.notes
        )
        self.calls = graph_calls.GraphCalls(self.run_id, self.channel.emit, self.sampler)
        graph_calls.install(self.calls, self.notes)
        rendezvous.install(self.channel, lambda: self.run_id, self.notes)
        ddp_probe.install(lambda *b: self.probes.dispatcher.ddp_buckets(*b), self.notes)
        self.raised = raised_probe.RaisedCompiles(self.channel, lambda: self.run_id)
        raised_probe.install(self.raised, self.notes)
        # Compile seconds by the program's functions and modules (its bookkeeping
        # timed too: about 0.1% of the compile, benchmarks/RESULTS.md), sent at the end.
        self.cost = compile_cost.CompileCostProbe(
            self.channel, self.run_id, self.notes, lambda: self.probes.dispatcher.prefix
        )
        self.cost.install()
        self.steps = Steps(torch.compiler.is_compiling)
        timed = self.steps.wrap if os.environ.get(STEPS_ENV) == "1" else None
        compile_calls.install(lambda: self.run_id, self.channel, self.notes, timed)
        self._watch_limit()

    def _watch_limit(self) -> None:
        """From the first recompile limit hit on, count the calls that run eager."""
        self.eager = guards_probe.EagerCalls(self.notes)
        dispatcher = self.probes.dispatcher
        dispatcher.on_limit = lambda where: self.eager.start(dispatcher.counts, where)

    def _restart(self) -> None:
        """This process's own state: its id, clock and notes."""
        self.run_id = f"pid{os.getpid()}"
        self.t0 = time.time()
        self.finished = False
        self.crash: tuple[str, str] | None = None  # (status, one line) of an uncaught exception
        self.notes = ProbeNotes(self.channel, self.run_id)

    def _hello(self) -> list[ev.Event]:
        rank = _int_env("RANK")
        try:  # the process group's rank, once initialized (torchrun sets RANK anyway)
            dist = sys.modules.get("torch.distributed")
            if rank is None and dist is not None and dist.is_initialized():
                rank = int(dist.get_rank())
        except Exception:  # noqa: BLE001
            pass
        return [
            ev.ProcessAttached(
                run_id=self.run_id,
                pid=os.getpid(),
                ppid=os.getppid(),
                argv=list(sys.argv),
                host=socket.gethostname(),
                started_t=_process_start(),
                torch_version=str(self.torch.__version__),
                python_version=platform.python_version(),
                rank=rank,
                local_rank=_int_env("LOCAL_RANK"),
                world_size=_int_env("WORLD_SIZE"),
                cache_dir=self.cache_dir,
                cache_dir_state=self.cache_dir_state,
                cpu_count=usable_cores(),
                torch_loaded_t=self.loaded_t,
            ),
            ddp_probe.settings(self.run_id),
        ]

    def change(self, make: Callable[[Any, str, str], str], value: str, said: str) -> None:
        """`dlcprof try`: the item's change (a graph break's setting, dims made
        dynamic) made by ``make`` before the program compiles; said in the
        process's log (a warning, starting with ``said``, when this torch lacks it)."""
        try:
            line, level = make(self.torch, value, said), "info"
        except BadRemedy as e:
            line, level = f"{e}: the program ran without it", "warning"
        except Exception as e:  # noqa: BLE001 - the setting's own failure: never the program's
            line, level = f"{said} {value}: {e!r}: the program ran without it", "warning"
        self._log(line, level)

    def cache_artifacts(self, path: str) -> None:
        """`dlcprof try` of Mega-Cache: the artifacts file loaded before the
        program compiles, when it exists, and saved at exit; each said in the
        process's log (a warning when torch refused: the program ran on).
        Loaded now, or at the start of the first compile (before its cache
        lookups) while one of torch's imports is still running: torch 2.11
        imports Dynamo from inside ``torch._inductor``'s import, and the load's
        own imports re-enter that half-run module and fail."""
        if not os.path.exists(path):
            atexit.register(self._save_artifacts, path)
        handler = getattr(self.torch._dynamo, "callback_handler", None)
        if handler is None or not _importing_torch():
            self._load_artifacts(path)
            return
        loaded = False

        def start(_args: Any) -> None:
            nonlocal loaded
            # Never removed from the handler: removing one while it runs the list skips the next.
            if not loaded:
                loaded = True
                self._load_artifacts(path)

        handler.register_start_callback(start)

    def _load_artifacts(self, path: str) -> None:
        try:
            load_artifacts(self.torch, path, self._log)
        except Exception as e:  # noqa: BLE001 - torch's failure: never the program's
            self._log(f"cache artifacts: {path} not loaded: {e!r}", "warning")

    def _save_artifacts(self, path: str) -> None:
        try:
            save_artifacts(self.torch, path, self._log)
        except Exception as e:  # noqa: BLE001
            self._log(f"cache artifacts: {path} not saved: {e!r}", "warning")

    def _log(self, message: str, level: str = "info") -> None:
        self.channel.emit(
            ev.LogEmitted(run_id=self.run_id, level=level, source="dlcprof", message=message)
        )

    def uncaught(self, kind: type, value: BaseException, tb: Any) -> None:
        """The program's main thread raised to the top: this process crashed
        (or was interrupted); said at exit, with the traceback."""
        try:
            status = "cancelled" if issubclass(kind, KeyboardInterrupt) else "crashed"
            line = f"{kind.__name__}: {value}".strip().rstrip(":")
            self.crash = (status, line)
            self.channel.emit(
                ev.ErrorRaised(
                    run_id=self.run_id,
                    stage="program",
                    message=f"uncaught {line}",
                    traceback="".join(traceback.format_exception(kind, value, tb)),
                )
            )
        except Exception:  # noqa: BLE001 - the program's own hook must still run
            pass

    def forked(self) -> None:
        """In a forked child (a DataLoader worker): a process of its own. The
        parent's handlers go (silently: the connection is the parent's), then
        the child follows itself on a fresh channel."""
        self.channel.quiet = True
        self.loaded_t = None  # the parent imported torch
        self.probes.close()
        self.channel.reset()
        self._restart()
        self.probes.follow(self.run_id, self.notes, _fresh_lines(), rank=_int_env("RANK"))
        self.calls.restart(self.run_id)
        self.sampler.restart(self.run_id)
        self.raised.said.clear()
        self.cost.follow(self.run_id, self.notes)
        self.eager.stop()  # the parent's count
        self._watch_limit()
        self.steps.forget()  # the parent's calls

    def finish(self) -> None:
        """At exit: the last kernels and totals, the raw trace closed, the end."""
        if self.finished:
            return
        self.finished = True
        try:
            if self.crash is None and (last := _uncaught_unseen()) is not None:
                self.uncaught(*last)
            self.probes.dispatcher.flush()
            self.cost.flush()
            self.calls.report()
            nothing = self.probes.dispatcher.nothing_compiled()
            # A compile that raised did not run eager: CompileRaised said what it did.
            if nothing is not None and nothing.frames and not self.raised.said:
                self.channel.emit(nothing)  # every frame ran eager: said loudly
            counted = self.eager.counted(self.run_id, self.probes.dispatcher.snapshot())
            if counted is not None:
                self.channel.emit(counted)
            self.channel.emit(compile_workers.read(self.run_id))
            for steps in self.steps.timed(self.run_id, eager=os.environ.get(EAGER_ENV) == "1"):
                self.channel.emit(steps)
            self.sampler.report(final=True)
            self.probes.close_raw_trace()
            status = self.crash[0] if self.crash else "ok"
            self.channel.emit(
                ev.RunFinished(run_id=self.run_id, status=status, wall_s=time.time() - self.t0)
            )
        finally:
            self.channel.close()
