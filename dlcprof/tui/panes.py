"""Every pane of the TUI, once: where it sits, its focus key, and which events
repaint it. The app's layout, its repaint and its focus keys all read this.

A pane is a widget whose id is its name and that repaints itself from a
``View`` (``show``); a bottom tab may also word its own tab label
(``tab_label``). Panes on another screen (the paper) repaint the same way
while that screen is open. Where a pane is laid out is data too: not in a
replay (``live_only``), only where dlcprof runs a workload (``workload``: not
on an attached program), only on an attached program (``program``).
"""

from __future__ import annotations

from textual.widget import Widget

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.tui.widgets.alarm import AlarmBanner
from dlcprof.tui.widgets.benchmark import BenchmarkPane
from dlcprof.tui.widgets.device import DevicePane
from dlcprof.tui.widgets.hotspots import HotspotsPane
from dlcprof.tui.widgets.kernels import KernelsPane
from dlcprof.tui.widgets.log import LogPane
from dlcprof.tui.widgets.modes import ModesPane
from dlcprof.tui.widgets.paper import PaperPane
from dlcprof.tui.widgets.phases import PhasesPane
from dlcprof.tui.widgets.program import ProgramPane
from dlcprof.tui.widgets.ranks import DivergenceBanner, RanksPane
from dlcprof.tui.widgets.recompiles import RecompilesPane
from dlcprof.tui.widgets.runs import RunSelector
from dlcprof.tui.widgets.settings_panel import SettingsPanel
from dlcprof.tui.widgets.workloads import WorkloadPicker


@data(frozen=True)
class Pane:
    name: str  # the widget's id, and what AFFECTS names
    widget: type[Widget]
    title: str  # its tab label, and what the help calls it
    place: str  # "side" | "top" | "main" | "tab" | "banner" | "paper" | "ranks" (own screens)
    key: str = ""  # the key that focuses it (a tab: brings it forward too)
    repaints: bool = True  # False: the user fills it (the workload picker)
    live_only: bool = False  # not in a replay (no worker to configure)
    workload: bool = False  # needs a workload: not on an attached program (it decides what runs)
    program: bool = False  # an attached program's own: only in its TUI

    def laid_out(self, replay: bool, attached: bool) -> bool:
        """Whether a session has what this pane needs: a worker (not a
        ``replay``), a workload (not ``attached`` to a program), a program."""
        if (self.live_only and replay) or (self.workload and attached):
            return False
        return attached or not self.program


PANES: tuple[Pane, ...] = (
    Pane("program", ProgramPane, "Program", "side", program=True),
    Pane(
        "workloads",
        WorkloadPicker,
        "Workload",
        "side",
        "0",
        repaints=False,
        live_only=True,
        workload=True,
    ),
    Pane("settings", SettingsPanel, "Settings", "side", live_only=True, workload=True),
    Pane("runs", RunSelector, "Runs", "side", "9"),
    Pane("alarm", AlarmBanner, "Alarm", "banner"),
    Pane("divergence", DivergenceBanner, "Divergence", "banner"),
    Pane("phases", PhasesPane, "Phases", "top", "1"),
    Pane("benchmark", BenchmarkPane, "Benchmark", "top", "2"),
    Pane("kernels", KernelsPane, "Kernels", "main", "3"),
    Pane("recompiles", RecompilesPane, "Recompiles", "tab", "4"),
    Pane("log", LogPane, "Log", "tab", "5"),
    Pane("device", DevicePane, "Device", "tab", "6"),
    Pane("hotspots", HotspotsPane, "Hotspots", "tab", "7"),
    Pane("modes", ModesPane, "Modes", "tab", "8"),
    Pane("paper", PaperPane, "Paper", "paper"),
    Pane("ranks", RanksPane, "Ranks", "ranks"),  # its own screen too (key R)
)
BY_NAME = {p.name: p for p in PANES}
REPAINTED = frozenset(p.name for p in PANES if p.repaints)
FOCUSABLE = tuple(p for p in PANES if p.key)

# What the ranks of a torchrun job show: their lanes, table and divergences.
_RANKS = {"ranks", "divergence"}
_RUN_END = {"phases", "kernels", "benchmark", "recompiles", "log", "runs", "modes", "paper"}
_RUN_END |= _RANKS

# Which panes an event can change: everything else stays untouched. Every
# event type is here or in REPAINT_FREE (a test checks both).
AFFECTS: dict[type[ev.Event], frozenset[str]] = {
    t: frozenset(names)
    for t, names in {
        ev.WorkerReady: {"settings"},
        ev.RunStarted: REPAINTED,
        ev.WorkloadLoaded: {"runs", "benchmark", "paper"},
        ev.RunFinished: _RUN_END,
        ev.WorkerExited: _RUN_END,
        ev.ErrorRaised: {"log", "paper"},
        ev.LogEmitted: {"log"},
        ev.ProbeUnavailable: {"log", "phases", "kernels", "benchmark", "modes"},
        ev.PhaseStarted: {"phases"} | _RANKS,
        ev.PhaseEnded: {"phases"} | _RANKS,
        ev.CompileFinished: {"phases", "recompiles", "modes", "paper"} | _RANKS,
        ev.KernelGenerated: {"kernels", "phases", "modes", "paper"} | _RANKS,
        ev.RecompileTriggered: {"recompiles", "log"} | _RANKS,
        ev.RecompileLimitHit: {"recompiles", "log", "alarm"},
        ev.EagerCallsCounted: {"log", "alarm"},
        ev.HeaderPrecompiled: {"phases", "benchmark"},
        ev.CacheLookedUp: {"phases"},
        ev.NothingCompiled: {"log", "alarm", "benchmark", "kernels", "runs", "modes"},
        ev.CompileRaised: {"log", "alarm"},
        ev.DimMadeDynamic: {"recompiles"},
        ev.GraphBroken: {"log", "phases"} | _RANKS,
        ev.BenchmarkMeasured: {"benchmark", "runs", "modes", "paper"},
        ev.SteadyAllocatorMeasured: {"benchmark"},
        ev.OpAutotuned: {"modes"},
        ev.CudagraphDecided: {"modes"},
        ev.CudagraphSkipped: {"modes", "log"},
        ev.CudagraphsCounted: {"modes"},
        ev.ProfilingStarted: {"kernels", "status"},
        ev.KernelsProfiled: {"kernels", "status", "paper"},
        ev.TimingStarted: {"status"},
        ev.TimingEnded: {"status", "benchmark"},
        ev.MonitorCostMeasured: {"status", "hotspots"},
        ev.ShapeStepMeasured: {"recompiles", "paper"},
        ev.SweepFinished: {"recompiles", "runs", "paper"},
        ev.DeviceSampled: {"device"},
        ev.MonitorStatus: {"device", "hotspots", "log"},
        ev.HotFramesSampled: {"hotspots"},
        ev.ProfileSaved: {"hotspots", "log"},
        ev.PaperPlanned: {"paper"},
        ev.ProgramStarted: {"status", "log"},
        ev.ProgramExited: _RUN_END | {"status"},
        ev.ProcessAttached: REPAINTED,
        ev.GraphCallsTimed: {"benchmark"},
        ev.CompileCalled: {"benchmark"},
        ev.ModuleCompileRan: {"benchmark"},
        ev.RankSummarized: _RANKS,
        ev.CompileThreadsRead: _RANKS,
        ev.StepsTimed: {"benchmark"},
    }.items()
}
REPAINT_FREE: frozenset[type[ev.Event]] = frozenset(
    {
        ev.TraceSaved,
        ev.CompileCostMeasured,
        ev.CompileCpuMeasured,
        ev.AdviceTried,
        ev.ProcessGroupJoined,
        ev.NodeMerged,
        ev.TraceImported,  # before any run: what it says shows with the ranks
        # The DDP events: the program pane repaints on the program's clock (tui/app.py).
        ev.GraphSplitForDDP,
        ev.CompileSettingsRead,
    }
)
