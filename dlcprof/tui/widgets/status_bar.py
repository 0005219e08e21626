"""Status bar: worker state, the phase running now, what watches the worker, the device."""

from __future__ import annotations

from rich.text import Text
from textual.widgets import Static

from dlcprof.figures.runs import is_imported
from dlcprof.session import Run, Session

STATE_STYLES = {
    "standby ready": "green",
    "starting worker": "yellow",
    "compiling": "bold yellow",
    "benchmarking": "bold cyan",
    "sweeping shapes": "bold cyan",
    "profiling kernels": "bold cyan",
    "running": "yellow",
    "cancelling": "magenta",
    "idle": "",
    "crashed": "bold white on red",
    "failed": "bold white on red",
    "replay": "cyan",
    "run complete": "bold green",
    "run cancelled": "magenta",
    "program exited": "bold green",
}


def device_words(session: Session, run: Run | None, replay: bool = False) -> str:
    """The device and torch of ``run`` (else of the worker that reported); an
    attached program's process, which picks its own device: its host and torch."""
    if run is not None and run.settings is not None:
        s = run.settings
        return f"{s.device}: {s.device_name} · torch {s.torch_version}"
    w = session.worker
    if w is not None:
        kind = "cuda" if w.cuda_available else "cpu"
        return f"{kind}: {w.device_name} · torch {w.torch_version}"
    if run is not None and (p := run.process) is not None:
        # An imported log names no host (its folder stands in) and may name no
        # torch (no torch_version record).
        where = f"logs' folder {p.host}" if is_imported(run) and p.host else p.host
        return " · ".join(part for part in (where, f"torch {p.torch_version or 'n/a'}") if part)
    return "device: not in this report" if replay else "device: known once a worker reports"


class StatusBar(Static):
    def show(
        self,
        state: str,
        detail: str,
        device: str,
        message: str | None = None,
        observer: str | None = None,
        paused: str | None = None,
    ) -> None:
        out = Text(no_wrap=True, overflow="ellipsis")
        if paused:
            out.append(f" ⏸ {paused} ", style="bold reverse")
        out.append(f" ● {state} ", style=STATE_STYLES.get(state, ""))
        if detail:
            out.append(f"│ {detail} ")
        if observer:
            out.append(f"│ {observer} ", style="dim")
        out.append(f"│ {device} ", style="dim")
        if message:
            out.append("│ ")
            out.append(message, style="bold red")
        # One line, docked (height 1): its size never changes, so no layout pass.
        # It repaints at 10 Hz while a run is live (the elapsed time), and a
        # layout pass each time was most of the TUI's CPU on an attached program
        # (benchmarks/RESULTS.md section 13).
        self.update(out, layout=False)
