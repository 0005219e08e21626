"""The monitors on one compiling process, as one unit: a run's worker
(engine.LiveRun) and each compiling process of an attached program
(monitors/program.py) get the same ones, started, paused and stopped alike.

Their events are stamped with the process's run. At the end py-spy's samples
are put in the compile phase each fell in (``HotFramesSampled`` with
``phase``), from the process's own ``PhaseEnded`` events, which the owner
passes to ``see``.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import cast

from dlcprof import events as ev
from dlcprof import scratch
from dlcprof.figures.phases import KEY_NAMES
from dlcprof.monitors.device import DeviceSampler
from dlcprof.monitors.hotspots import PySpySampler
from dlcprof.monitors.samples import attribute_phases, thread_samples

Emit = Callable[[ev.Event], None]
Monitor = DeviceSampler | PySpySampler
Monitored = (
    ev.DeviceSampled
    | ev.MonitorStatus
    | ev.HotFramesSampled
    | ev.ProfileSaved
    | ev.MonitorCostMeasured
)

# Compile phases py-spy samples are attributed to (each to the innermost).
HOTSPOT_PHASES = KEY_NAMES | {"entire_frame_compile"}


def monitors_on(
    pid: int, emit: Emit, cuda_index: int | None, device: bool = True, hotspots: bool = True
) -> list[Monitor]:
    """The monitors a process gets, not yet started (benchmarks/overhead.py
    measures these). ``cuda_index`` None: no GPU is sampled (a CPU run)."""
    out: list[Monitor] = []
    if device:
        out.append(DeviceSampler(pid, emit, cuda_index=cuda_index))
    if hotspots:
        path = scratch.new_folder("pyspy") / "pyspy.speedscope.json"
        out.append(PySpySampler(pid, emit, path))
    return out


class ProcessMonitors:
    """The device sampler and py-spy on process ``pid``, for run ``run_id``
    (given at ``start``: a worker's run id is known only once it started)."""

    def __init__(
        self,
        pid: int,
        emit: Emit,
        cuda_index: int | None,
        device: bool = True,
        hotspots: bool = True,
    ) -> None:
        self.pid = pid
        self.emit = emit
        self.run_id: str | None = None
        # The monitors emit Monitored events only.
        stamp = cast(Emit, self._stamp)
        self.monitors = monitors_on(pid, stamp, cuda_index, device, hotspots)
        self._profiler = next((m for m in self.monitors if isinstance(m, PySpySampler)), None)
        self._phases: list[tuple[str, float, float]] = []
        self._stopped = False

    def start(self, run_id: str | None) -> None:
        self.run_id = run_id
        for monitor in self.monitors:
            monitor.start()

    def _stamp(self, event: Monitored) -> None:
        """The monitors watch this process: their events belong to its run."""
        if event.run_id is None:
            event.run_id = self.run_id
        self.emit(event)

    def see(self, event: ev.Event) -> None:
        """An event of the process: its compile phases place py-spy's samples."""
        if isinstance(event, ev.PhaseEnded) and event.name in HOTSPOT_PHASES:
            self._phases.append((event.name, event.start_t, event.start_t + event.duration_s))

    def pause(self) -> bool:
        """Detach them (a timed window); True once none samples the process."""
        return all([monitor.pause() for monitor in self.monitors])

    def resume(self) -> None:
        for monitor in self.monitors:
            monitor.resume()

    def stop(self) -> None:
        """Stop them (their last events: the saved profile, the costs), then the
        final hot frames, each sample in the compile phase it fell in (None:
        outside any compile). Once; returns when done."""
        if self._stopped:
            return
        self._stopped = True
        for monitor in self.monitors:
            monitor.stop()
        p = self._profiler
        if p is None or not p.samples:
            return
        samples = p.samples
        self.emit(
            ev.HotFramesSampled(
                samples=p.ticks,
                rows=attribute_phases(samples, self._phases),
                run_id=self.run_id,
                threads=thread_samples(samples),
            )
        )
