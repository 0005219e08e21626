"""One run in the worker: load, compile (probes live), benchmark, sweep.

Every failure ends the same way: ``ErrorRaised(stage, one-line message,
traceback)``, then ``RunFinished(status="error")`` and exit status 1, with
everything captured before the failure already emitted.
"""

from __future__ import annotations

import contextlib
import dataclasses
import os
import platform
import sys
import time
import traceback
from typing import IO, Any

from dlcprof import allocator, text
from dlcprof import events as ev
from dlcprof.settings import AUTOTUNE_MODES, CUDAGRAPH_MODES, RunSettings
from dlcprof.trace_records.dispatcher import CompileCounts, TraceDispatcher
from dlcprof.trace_records.kernels import KernelCollector
from dlcprof.worker import bench, lifeline, steady
from dlcprof.worker.cores import usable_cores
from dlcprof.worker.fresh_lines import FreshLines
from dlcprof.worker.oom import oom_hint
from dlcprof.worker.probe_set import ProbeSet
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import caches as caches_probe
from dlcprof.worker.probes import compile_cost as compile_cost_probe
from dlcprof.worker.probes import cudagraphs as cudagraphs_probe
from dlcprof.worker.probes import dynamo as dynamo_probe
from dlcprof.worker.probes import freezing as freezing_probe
from dlcprof.worker.probes import guards as guards_probe
from dlcprof.worker.profile import KernelProfile
from dlcprof.worker.quiet import QuietWindow
from dlcprof.worker.remedies import BadRemedy, Remedies
from dlcprof.worker.sweep import run_sweep

DYNAMIC = {"auto": None, "true": True, "false": False}
# Writes the raw structured-trace records the probes consume (fixtures for tests).
TEE_ENV = "DLCPROF_TRACE_TEE"


class StageError(Exception):
    """A failure to report as ErrorRaised(stage, message, traceback)."""

    def __init__(self, stage: str, message: str, tb: str = "", bad_input: bool = False) -> None:
        super().__init__(message)
        self.stage = stage
        self.message = message
        self.tb = tb
        self.bad_input = bad_input  # the user's input was wrong (the CLI exits 2)


def one_line(e: BaseException) -> str:
    """One line: "ExcType: first line" (plus the next when the first only introduces it)."""
    lines = [ln.strip() for ln in str(e).splitlines() if ln.strip()]
    first = lines[0] if lines else ""
    if first.endswith(":") and len(lines) > 1:
        first = f"{first} {lines[1]}"
    name = type(e).__name__
    return (f"{name}: {first}" if first else name) + oom_hint(e)


def cpu_name() -> str:
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.lower().startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine() or "cpu"


def device_name(torch: Any, device: str) -> str:
    if device == "cuda":
        try:
            return str(torch.cuda.get_device_name(0))
        except Exception:  # noqa: BLE001
            return "cuda (name unavailable)"
    return cpu_name()


def worker_ready(torch: Any) -> ev.WorkerReady:
    cuda = bool(torch.cuda.is_available())
    return ev.WorkerReady(
        pid=os.getpid(),
        schema=ev.SCHEMA_VERSION,
        torch_version=str(torch.__version__),
        python_version=platform.python_version(),
        cuda_available=cuda,
        device_name=device_name(torch, "cuda" if cuda else "cpu"),
        cpu_count=usable_cores() or 1,
    )


def cpu_mode_note(mode: str, cudagraphs: bool, autotune: bool, freezing: bool) -> str | None:
    """What a mode does on the CPU, for the run's log; None for plain default."""
    parts = []
    if cudagraphs:
        parts.append("CUDA graphs are GPU-only, so Inductor skips them (the reason is shown)")
    if autotune and not freezing:
        parts.append("CPU matmuls are autotuned only with --freezing")
    if autotune and freezing:
        parts.append("each matmul's C++ GEMM template is benchmarked against MKL/aten")
    return f"mode {mode} on the CPU: " + "; ".join(parts) if parts else None


class WorkerRun:
    """One run inside the worker: load, compile, measure, emit its events."""

    def __init__(
        self, sink: ev.Sink, run_id: str, settings: RunSettings, control: IO[str] | None = None
    ) -> None:
        self.sink = sink
        self.run_id = run_id
        self.settings = settings
        self.quiet = QuietWindow(sink, run_id, control)
        self.notes = ProbeNotes(sink, run_id)
        self.dispatcher: TraceDispatcher | None = None
        self.cudagraphs = cudagraphs_probe.CudagraphProbe(sink, run_id, self.notes, self._prefix)
        # The sweep times each size's calls itself, eager ones included: no
        # profile hook in its timings.
        self.eager = guards_probe.EagerCalls(self.notes, timed=False)
        self.cost = compile_cost_probe.CompileCostProbe(sink, run_id, self.notes, self._prefix)
        self.remedies = Remedies(settings, self.log)
        self.kernels: KernelCollector | None = None
        self.fresh_lines = FreshLines()
        self.probes: ProbeSet | None = None
        self._tee: IO[str] | None = None

    # Entry ------------------------------------------------------------------------

    def execute(self) -> int:
        t0 = time.time()
        status = "ok"
        try:
            self._run()
        except StageError as e:
            self._flush_probes()
            self.emit(ev.ErrorRaised(self.run_id, e.stage, e.message, e.tb, bad_input=e.bad_input))
            status = "error"
        except Exception as e:  # noqa: BLE001 - a harness bug still ends the run cleanly
            self._flush_probes()
            self.emit(
                ev.ErrorRaised(
                    self.run_id,
                    "worker",
                    f"dlcprof worker failed: {one_line(e)}",
                    traceback.format_exc(),
                )
            )
            status = "error"
        finally:
            self._flush_probes()
            if self.settings.mode in CUDAGRAPH_MODES and self.settings.backend == "inductor":
                self.emit(self.cudagraphs.counted(cudagraphs_probe.skip_count(self.notes)))
            self.cudagraphs.uninstall()
            self._count_eager_calls()
            if self.probes is not None:
                self.probes.close()
            if self._tee is not None:
                self._tee.close()
        self.emit(ev.RunFinished(run_id=self.run_id, status=status, wall_s=time.time() - t0))
        return 0 if status == "ok" else 1

    def emit(self, event: ev.Event) -> None:
        self.sink.emit(event)

    def _count_eager_calls(self) -> None:
        counted = self.eager.counted(self.run_id, self._counts())
        if counted is not None:
            self.emit(counted)

    def log(self, message: str, level: str = "info") -> None:
        self.emit(ev.LogEmitted(run_id=self.run_id, level=level, source="dlcprof", message=message))

    # Stages -----------------------------------------------------------------------

    def _run(self) -> None:
        import torch

        s = self.settings
        device = s.device
        if device == "auto":
            device = "cuda" if torch.cuda.is_available() else "cpu"
        # Before anything is compiled or timed: the thread count is a guarded global.
        torch.set_num_threads(s.threads)
        self.emit(
            ev.RunStarted(
                run_id=self.run_id,
                target=s.target,
                workload=_workload_name(s.target),
                mode=s.mode,
                dynamic=s.dynamic,
                backend=s.backend,
                device=device,
                device_name=device_name(torch, device),
                dtype=s.dtype,
                size=s.size,
                cache=s.cache,
                threads=torch.get_num_threads(),
                iters=s.iters,
                shapes=list(s.shapes or []),
                torch_version=str(torch.__version__),
                reps=s.reps,
                sweep=s.sweeping,
                benchmark=s.benchmark,
                freezing=s.freezing,
                regional=s.regional,
                mark_dynamic=s.mark_dynamic,
                hatch=s.hatch,
                cache_artifacts=s.cache_artifacts,
                calls=s.calls,
            )
        )
        if device == "cuda" and not torch.cuda.is_available():
            raise StageError(
                "worker",
                f"--device cuda: no CUDA device available to torch {torch.__version__} "
                "(use --device cpu, or install a CUDA build of torch)",
                bad_input=True,
            )
        self._install_probes()

        workload = self._load()
        dtype = getattr(torch, s.dtype)
        fn, args = self._build(workload, device, dtype)
        timer = bench.Timer(device)

        # Everything below runs under one grad mode, no_grad: it is guarded, so a
        # change would make the harness itself trigger a recompile; and no_grad
        # measures inference, not autograd bookkeeping (eager) or a forward that
        # saves activations for a backward nobody runs (compiled). A training
        # step turns grad on itself (torch.enable_grad()), as training-step does.
        with torch.no_grad():
            # One eager call first: it checks the workload runs at all, and it warms
            # the runtime (thread pools, allocator), so that "first compiled call
            # minus a steady call" is the compile and not one-time eager setup.
            try:
                timer.one_call_s(fn, args, bench.LastOutput())
            except Exception as e:  # noqa: BLE001
                hint = ""
                if "requires_grad" in str(e) or "does not require grad" in str(e):
                    hint = " (dlcprof runs workloads under torch.no_grad(): wrap a training "
                    hint += "step in torch.enable_grad())"
                raise StageError(
                    "load",
                    f"workload {workload.name} raised when called eagerly: {one_line(e)}{hint}",
                    traceback.format_exc(),
                ) from e
            before = self.dispatcher.snapshot().wall_s if self.dispatcher else 0.0
            headers = caches_probe.HeaderWatch(self.notes)
            compiled, first_s = self._compile(torch, fn, args, timer, device)
            for path in headers.built():
                self.emit(ev.HeaderPrecompiled(run_id=self.run_id, path=path))
            # torch's own account of the first call's compiles, to cross-check.
            compile_sum = self.dispatcher.snapshot().wall_s - before if self.dispatcher else None
            refused = self.dispatcher.nothing_compiled() if self.dispatcher else None
            if refused is not None:
                # The "compiled" function is the eager one: timing it against itself
                # would state a speedup of nothing.
                self.emit(refused)
                return
            settled = self._compiles()
            if s.benchmark:
                self._benchmark(fn, compiled, args, timer, first_s, compile_sum)
                if self.kernels is not None and s.backend == "inductor":
                    with self.quiet("kernel profile"):
                        KernelProfile(
                            self.sink, self.run_id, self.notes, self.kernels, s.reps, s.iters
                        ).run(fn, compiled, args, timer)
                # Last: pinning the allocator cannot be undone.
                self._steady_allocator(fn, compiled, args, timer)
            else:
                sink = bench.LastOutput()
                bench.warm_up(compiled, args, timer, sink)
                steady_s = bench.steady_call_s(compiled, args, timer, sink)
                self._log_compile(first_s, steady_s, compile_sum)
            if self._compiles() != settled:
                # Same args, same grad mode, same threads: this should never happen.
                self.log(
                    f"{self._compiles() - settled} compile(s) happened after the first call "
                    "(a guard the workload changes between calls?): timings include them",
                    level="warning",
                )
            if s.sweeping:
                self._sweep(torch, fn, workload, device, dtype, timer)

    def _install_probes(self) -> None:
        """The shared probes (probe_set.py), then the worker's own."""
        tee_path = os.environ.get(TEE_ENV)
        if tee_path:
            self._tee = open(tee_path, "w", encoding="utf-8")  # noqa: SIM115
        probes = self.probes = ProbeSet(
            self.sink, self.run_id, self.notes, self.fresh_lines, self._tee, replays_graphs=True
        )
        self.kernels = probes.kernels
        dispatcher = probes.dispatcher
        dispatcher.on_limit = lambda where: self.eager.start(dispatcher.counts, where)
        if probes.traced:
            self.dispatcher = dispatcher
        # Both hook in when torch imports their modules, so no import moves
        # out of the compile being measured.
        self.cudagraphs.install()
        self.cost.install()

    def _prefix(self) -> str:
        return self.dispatcher.prefix if self.dispatcher else ""

    def _flush_probes(self) -> None:
        if self.dispatcher is not None:
            self.dispatcher.flush()
        self.cost.flush()

    def _load(self) -> Any:
        from dlcprof import workloads
        from dlcprof.worker.load import load

        s = self.settings
        try:
            workload = load(workloads.resolve(s.target))
        except workloads.WorkloadError as e:
            raise StageError("load", str(e), e.traceback, e.bad_input) from e
        except Exception as e:  # noqa: BLE001
            raise StageError(
                "load", f"cannot load workload {s.target}: {one_line(e)}", traceback.format_exc()
            ) from e
        if workload.spec.path:
            self.fresh_lines.home = os.path.dirname(os.path.abspath(workload.spec.path))
        has_inputs_for = workload.inputs_for is not None
        self.emit(
            ev.WorkloadLoaded(
                run_id=self.run_id,
                name=workload.name,
                description=workload.description,
                sizes=workload.sizes(s.size),
                has_inputs_for=has_inputs_for,
            )
        )
        if s.sweeping:
            # Say it now, not after a compile and a benchmark the user waited for.
            try:
                workloads.check_sweep(
                    dataclasses.replace(
                        workload.spec,
                        has_inputs_for=has_inputs_for,
                        has_sizes=bool(workload.sizes(s.size)),
                    ),
                    s.shapes,
                )
            except workloads.WorkloadError as e:
                raise StageError("sweep", str(e), bad_input=True) from e
        return workload

    def _build(self, workload: Any, device: str, dtype: Any) -> tuple[Any, tuple]:
        from dlcprof import workloads

        try:
            return workload.build(device, dtype, self.settings.size)
        except workloads.WorkloadError as e:
            raise StageError("load", str(e), e.traceback, e.bad_input) from e
        except Exception as e:  # noqa: BLE001
            raise StageError(
                "load",
                f"workload {workload.name} build failed: {one_line(e)}",
                traceback.format_exc(),
            ) from e

    def _compile_kwargs(self, device: str) -> dict[str, Any]:
        s = self.settings
        kwargs: dict[str, Any] = {"dynamic": DYNAMIC[s.dynamic], "backend": s.backend}
        if s.backend == "inductor":
            kwargs["mode"] = None if s.mode == "default" else s.mode
        elif s.mode != "default":
            self.log(
                f"mode {s.mode!r} applies to the inductor backend only: compiling with "
                f"backend {s.backend!r} and no mode"
            )
        return kwargs

    def _compile(
        self, torch: Any, fn: Any, args: tuple, timer: bench.Timer, device: str
    ) -> tuple[Any, float]:
        s = self.settings
        kwargs = self._compile_kwargs(device)
        if s.freezing and s.backend == "inductor":
            freezing_probe.enable(self.notes)
        note = cpu_mode_note(
            s.mode, s.mode in CUDAGRAPH_MODES, s.mode in AUTOTUNE_MODES, s.freezing
        )
        if device == "cpu" and note and s.backend == "inductor":
            self.log(note)
        try:
            self.remedies.mark(torch, fn, args)
            self.remedies.load_artifacts(torch)
            compiled = self.remedies.compile(torch, fn, kwargs)
            # The first call is where Dynamo traces and Inductor compiles; the probes
            # stream phases, kernels and compile records while it runs.
            first_s = timer.one_call_s(compiled, args, bench.LastOutput())
            self.remedies.save_artifacts(torch)
        except BadRemedy as e:
            raise StageError("compile", str(e), bad_input=True) from e
        except Exception as e:  # noqa: BLE001
            self._flush_probes()
            user, inside = dynamo_probe.failure_frames(e)
            user = user or (self.dispatcher.failed_at if self.dispatcher else "")
            where = [f"at {user}"] if user else []
            where += [f"inside {text.short_path(inside)}"] if inside else []
            at = f" ({', '.join(where)})" if where else ""
            raise StageError(
                "compile", f"compile failed: {one_line(e)}{at}", traceback.format_exc()
            ) from e
        self._flush_probes()
        return compiled, first_s

    def _benchmark(
        self,
        fn: Any,
        compiled: Any,
        args: tuple,
        timer: bench.Timer,
        first_s: float,
        compile_sum: float | None,
    ) -> None:
        s = self.settings
        try:
            with self.quiet("benchmark"):
                r = bench.benchmark(fn, compiled, args, s.iters, s.reps, timer)
        except Exception as e:  # noqa: BLE001
            raise StageError(
                "benchmark", f"benchmark failed: {one_line(e)}", traceback.format_exc()
            ) from e
        steady_s = r["compiled_ms"] / 1e3
        compile_s = max(0.0, first_s - steady_s)
        try:
            load = list(os.getloadavg())
        except OSError:
            load = []
        self.emit(
            ev.BenchmarkMeasured(
                run_id=self.run_id,
                compile_s=compile_s,
                threads=_threads(),
                load_avg=load,
                allocator=allocator.current().label,
                **r,
            )
        )
        self._log_compile(first_s, steady_s, compile_sum)

    def _steady_allocator(self, fn: Any, compiled: Any, args: tuple, timer: bench.Timer) -> None:
        """The benchmark again with the allocator held steady: last, as it cannot be undone."""
        try:
            with self.quiet("steady allocator"):
                measured = steady.measure(self.run_id, fn, compiled, args, self.settings, timer)
            self.emit(measured)
        except steady.NotMeasured as e:
            self.notes.unavailable("steady_allocator", str(e))
        except Exception as e:  # noqa: BLE001 - the default benchmark stands without it
            why = f"the second benchmark failed: {one_line(e)}"
            self.notes.unavailable("steady_allocator", why)

    def _log_compile(self, first_s: float, steady_s: float, compile_sum: float | None) -> None:
        msg = (
            f"compile {max(0.0, first_s - steady_s):.3f} s = first compiled call "
            f"{first_s:.3f} s - steady call {steady_s * 1e3:.3f} ms"
        )
        if compile_sum is not None:
            msg += f"; torch's compilation_metrics sum to {compile_sum:.3f} s"
        self.log(msg)

    def _sweep(
        self, torch: Any, fn: Any, workload: Any, device: str, dtype: Any, timer: bench.Timer
    ) -> None:
        s = self.settings
        sizes = list(s.shapes or workload.sizes(s.size))
        # A fresh Dynamo state: the sweep's function compiles from scratch and owns
        # the whole recompile budget. torch restarts compile ids at 0/0 after a
        # reset, so the sweep's ids carry a prefix.
        dynamo_probe.reset(self.notes)
        if self.dispatcher is not None:
            self.dispatcher.new_generation(ev.SWEEP)
        # Every transition pays its real compile (see probes/caches.py).
        restore_caches = caches_probe.bypass_graph_caches(self.notes)
        inputs_for = workload.inputs_for

        def on_step(**step: Any) -> None:
            self.emit(ev.ShapeStepMeasured(run_id=self.run_id, **step))

        from dlcprof import workloads

        try:
            compiled = self.remedies.compile(torch, fn, self._compile_kwargs(device))
            total, compiles = run_sweep(
                compiled,
                lambda n: self.remedies.mark(torch, fn, inputs_for(n, device, dtype)),
                sizes,
                timer,
                self._counts,
                on_step,
                s.iters,
                s.reps,
            )
        except workloads.WorkloadError as e:
            self._flush_probes()
            raise StageError("sweep", str(e), e.traceback) from e
        except Exception as e:  # noqa: BLE001
            self._flush_probes()
            raise StageError(
                "sweep", f"shape sweep failed: {one_line(e)}", traceback.format_exc()
            ) from e
        finally:
            restore_caches()
        self._flush_probes()
        self.emit(
            ev.SweepFinished(run_id=self.run_id, cumulative_transition_s=total, compiles=compiles)
        )

    def _compiles(self) -> int:
        if self.dispatcher is None:
            return 0
        c = self.dispatcher.snapshot()
        return c.compiles + c.backward_compiles + c.failures

    def _counts(self) -> CompileCounts:
        """Compiles so far (torch's trace, else Dynamo's counter) and eager calls."""
        if self.dispatcher is not None:
            c = self.dispatcher.snapshot()
        else:
            c = CompileCounts(compiles=dynamo_probe.frames_compiled(self.notes) or 0)
        c.eager_calls = self.eager.count(c) or 0
        return c


def _workload_name(target: str) -> str:
    """The display name, found without running the workload (load() reports errors)."""
    from dlcprof import workloads

    try:
        return workloads.resolve(target).name
    except Exception:  # noqa: BLE001
        return target


def _threads() -> int:
    import torch

    return int(torch.get_num_threads())


def serve(sink: ev.Sink, stdin: IO[str] | None = None, control: IO[str] | None = None) -> int:
    """Import torch, say ready, take one request from stdin, run it; ``control``
    carries the parent's answers when the run asks for a quiet window."""
    import json

    from dlcprof.settings import SettingsError

    try:
        import torch
    except BaseException as e:  # noqa: BLE001 - report even a crash of the import itself
        sink.emit(
            ev.ErrorRaised(
                None, "worker", f"cannot import torch: {one_line(e)}", traceback.format_exc()
            )
        )
        return 1
    with contextlib.suppress(Exception):  # a broken Inductor says so when it compiles
        # The compiler's own imports (seconds) before "ready": a standby worker then
        # compiles the moment the user asks (benchmarks/tui_latency.py).
        import torch._inductor.compile_fx  # noqa: F401
    sink.emit(worker_ready(torch))
    line = (stdin or sys.stdin).readline()
    if not line.strip():
        return 0  # a standby worker that was not needed
    run_id = None
    try:
        request = json.loads(line)
        run_id = str(request["run_id"])
        settings = RunSettings.from_dict(request["settings"]).validate()
    except (ValueError, KeyError, TypeError, SettingsError) as e:
        sink.emit(ev.ErrorRaised(run_id, "worker", f"bad run request: {one_line(e)}"))
        if run_id is not None:
            sink.emit(ev.RunFinished(run_id=run_id, status="error", wall_s=0.0))
        return 1
    if stdin is None:
        # stdin stays open as the lifeline to the parent; the workload reads /dev/null.
        lifeline.watch(lifeline.take_stdin())
    quiet = request.get("quiet") is True
    return WorkerRun(sink, run_id, settings, control if quiet else None).execute()
