"""The probes every host installs, wired in one place.

A host is a process whose compiles dlcprof watches; each builds one
``ProbeSet`` (the shared probes), then installs its own extras:

- the worker's run (``run.py``): the tee of the trace records
  (``DLCPROF_TRACE_TEE``), the eager calls past the recompile limit (the
  dispatcher's ``on_limit``), CUDA-graph status, compile cost by the user's code;
- each process of an attached program (``attached/probe.py``): CUDA-graph
  status, each compiled graph's calls and a few calls' kernel times, the
  rendezvous, DDP's buckets, a compile that raised into the program
  (``probes/raised.py``), the eager calls past the recompile limit, the
  settings of each torch.compile call (``probes/compile_calls.py``), compile
  cost by the user's code;
- the pytest plugin's test process (``pytest_plugin/host.py``): a compile
  that raised into the test, the settings of each torch.compile call; a run
  per watched test (``follow`` again, after ``close``).

The shared set: Inductor's kernel provenance, the kernel collector (its
source lines re-anchored on the files as they are now), the structured-trace
dispatcher and its handler, torch's raw trace for tlparse, autotuning (fed
torch's timers of each op by the dispatcher), each compile's CPU seconds
(``probes/compile_cpu.py``), and each compile's record kept where torch could not
write its config (``probes/metrics_record.py``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import IO

from dlcprof import events as ev
from dlcprof.trace_records.dispatcher import DYNAMO_GRAPH, TraceDispatcher
from dlcprof.trace_records.kernels import KernelCollector
from dlcprof.worker.fresh_lines import FreshKernelLines, FreshLines
from dlcprof.worker.probes import ProbeNotes, compile_cpu, metrics_record, provenance, rawtrace
from dlcprof.worker.probes import autotune as autotune_probe
from dlcprof.worker.probes import trace as trace_probe
from dlcprof.worker.probes.kernels import aten_op_exists
from dlcprof.worker.probes.lazy import when_imported

# Not imported here: Inductor's config pulls in Dynamo (seconds), which a
# process that never compiles must not pay; provenance is set as it imports
# (at once in the worker, which imported it before its run).
INDUCTOR_CONFIG = "torch._inductor.config"


class ProbeSet:
    """The shared probes of one process, installed at construction."""

    def __init__(
        self,
        sink: ev.Sink,
        run_id: str,
        notes: ProbeNotes,
        fresh: FreshLines,
        tee: IO[str] | None = None,
        rank: int | None = None,
        replays_graphs: bool = False,
    ) -> None:
        self.sink = sink
        # The worker's kernel profile replays each Dynamo graph from its printed
        # text; elsewhere torch is spared printing it.
        self.unread = frozenset() if replays_graphs else frozenset({DYNAMO_GRAPH})
        self.follow(run_id, notes, fresh, tee, rank)
        # A hook in torch's registry: once; it outlives a fork and stays with the
        # first process's dispatcher (a forked child's autotuning is not timed).
        self.autotune = autotune_probe.AutotuneCollector(
            sink, run_id, lambda: self.dispatcher.last_compile_id
        )
        self.dispatcher.autotune = self.autotune
        self.autotune.timed = self.traced
        autotune_probe.install(self.autotune, notes)
        compile_cpu.install(
            compile_cpu.CompileCpu(sink, lambda: self.run_id, lambda: self.dispatcher.prefix), notes
        )
        metrics_record.install()

    def follow(
        self,
        run_id: str,
        notes: ProbeNotes,
        fresh: FreshLines,
        tee: IO[str] | None = None,
        rank: int | None = None,
    ) -> None:
        """This process's own part: provenance, the kernel collector, the trace
        dispatcher and handler, the raw trace (again in a forked child, after
        ``close``). ``rank`` names the raw trace as torch names a rank's."""
        self.run_id = run_id
        # Without provenance the kernel table still comes from the output code
        # (fused ops read back from kernel names).
        when_imported(INDUCTOR_CONFIG, lambda _: provenance.enable_provenance(notes))
        # Through FreshKernelLines: a cache hit's provenance cites the files as they were.
        self.kernels = KernelCollector(FreshKernelLines(self.sink, fresh), run_id, aten_op_exists())
        self.dispatcher = TraceDispatcher(
            self.sink, run_id, self.kernels, tee, live=True, unread=self.unread
        )
        self._uninstall = trace_probe.install(self.dispatcher, notes)
        self._close_raw: Callable[[], None] | None = rawtrace.install(
            self.sink, run_id, notes, rank=rank
        )

    @property
    def traced(self) -> bool:
        """Whether torch's structured trace reaches the dispatcher."""
        return self._uninstall is not None

    def close(self) -> None:
        """This process's part removed: the trace handler, then the raw trace closed."""
        uninstall, self._uninstall = self._uninstall, None
        if uninstall is not None:
            uninstall()
        self.close_raw_trace()

    def close_raw_trace(self) -> None:
        """Closed once (it says ``TraceSaved``)."""
        close, self._close_raw = self._close_raw, None
        if close is not None:
            close()
