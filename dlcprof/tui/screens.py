"""Screens over the main one: a kernel's generated source, the paper, help, and
where to save."""

from __future__ import annotations

from typing import Protocol, cast

from rich.console import Group
from rich.text import Text
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.screen import ModalScreen, Screen
from textual.widgets import Footer, Input, Static

from dlcprof import events as ev
from dlcprof.figures import kernels as fk
from dlcprof.text import NA, NO_SOURCE_LINES, na
from dlcprof.tui import actions
from dlcprof.tui.widgets.paper import PaperPane
from dlcprof.tui.widgets.ranks import RanksPane


def source_lexer(source: str) -> str:
    """C++ for Inductor's CPU kernels, Python for Triton and wrappers."""
    head = source[:4000]
    if "#include" in head or 'extern "C"' in head or "cpp_fused" in head and "{" in head:
        return "cpp"
    return "python"


def source_lines(k: ev.KernelGenerated) -> Text:
    """The user's lines the kernel came from, as the reports show them: the file's
    name and line (the full path is in the report's JSON), then the code."""
    if not k.source_lines:
        return Text(na(NO_SOURCE_LINES), style="dim")
    out = Text()
    for i, line in enumerate(k.source_lines):
        where, code = fk.source_line(line)
        out.append("\n" if i else "")
        out.append(where, style="bold")
        out.append(f"  {code}" if where else code)
    return out


class _Repaints(Protocol):
    """The app (tui/app.py, which imports this module)."""

    def mark_dirty(self, name: str) -> None: ...


class KernelSourceScreen(Screen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
    ]

    def __init__(self, kernel: ev.KernelGenerated, figures: str = "") -> None:
        super().__init__()
        self.kernel = kernel
        self.figures = figures

    def compose(self) -> ComposeResult:
        from rich.syntax import Syntax  # Pygments: only once a kernel is opened

        k = self.kernel
        yield Static(
            Text.assemble(
                (f" {k.name} ", "bold reverse"),
                f"  {k.kind} · compile {k.compile_id} · position {k.order} in call() · "
                f"{len(k.fused_ops)} fused op(s)",
            ),
            id="kernel-title",
        )
        if self.figures:
            yield Static(Text(f" {self.figures}"), id="kernel-figures")
        with Horizontal(id="kernel-body"):
            with VerticalScroll(id="kernel-source"):
                if k.source.strip():
                    yield Static(
                        Syntax(
                            k.source,
                            source_lexer(k.source),
                            line_numbers=True,
                            word_wrap=False,
                            theme="monokai",
                        )
                    )
                else:
                    yield Static(f"source: {NA} (the probe captured none)")
            with Vertical(id="kernel-side"):
                with VerticalScroll(id="kernel-ops"):
                    yield Static(
                        Text("\n".join(k.fused_ops) if k.fused_ops else f"{NA} (none recorded)")
                    )
                with VerticalScroll(id="kernel-lines"):
                    yield Static(source_lines(k))
        yield Footer()

    def on_mount(self) -> None:
        self.query_one(
            "#kernel-source"
        ).border_title = f"generated {source_lexer(self.kernel.source)}"
        self.query_one("#kernel-ops").border_title = "aten ops fused"
        self.query_one("#kernel-lines").border_title = "from your source lines"


class PaperScreen(Screen[None]):
    """The paper's findings beside this machine's; its pane repaints like the
    main screen's, from the events folded."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("r", "app.paper(True)", "Run again"),
        Binding("c", "app.cancel", "Cancel"),
    ]

    def compose(self) -> ComposeResult:
        yield PaperPane(id="paper")
        yield Footer()

    def on_mount(self) -> None:
        cast(_Repaints, self.app).mark_dirty("paper")


class RanksScreen(Screen[None]):
    """The ranks of a torchrun job; repaints like the main screen's panes."""

    AUTO_FOCUS = "#ranks-table"  # o sorts it, / filters it at once
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Back"),
        Binding("q", "app.pop_screen", "Back", show=False),
        Binding("R", "app.pop_screen", "Back", show=False),
    ]

    def compose(self) -> ComposeResult:
        yield RanksPane(id="ranks")
        yield Footer()

    def on_mount(self) -> None:
        cast(_Repaints, self.app).mark_dirty("ranks")


HELP_HEAD = "[b]dlcprof[/b] — watch torch.compile work, one keystroke per question."

PANES_HELP = """\
[b]Phases[/b]: where compile time went, per compile id (bars to scale); its cache
layers (hit, miss, kernel builds) and why it missed.
[b]Kernels[/b]: the fused kernels, slowest first once profiled after the benchmark:
time per compiled call and share of it, the eager cost of the ops each fused and
the gain, GB/s and its share of a large copy's (over 100%: in cache); Enter: source.
[b]Benchmark[/b]: eager vs compiled, speedup, and the runs needed to pay back the
compile (break-even); every run of the session side by side.
[b]Recompiles[/b]: guard failures and what each cost; the sweep compares the
cumulative cost of new shapes with static vs dynamic shapes.
[b]Device[/b] / [b]Hotspots[/b]: utilization, and the compiler's hot frames (py-spy).
[b]Modes[/b]: what the mode autotuned and whether it used CUDA graphs (and why not);
after [b]a[/b], compile cost against steady latency for every mode.
[b]Ranks[/b] (R, a torchrun job): each rank's compiles on one time axis, so skew shows;
a red banner when ranks diverge; [b][[/b] / [b]][/b] pick the rank every pane shows.
A figure that is not known shows n/a, with the reason where known."""


class HelpScreen(ModalScreen[None]):
    """The keys and the panes; ``workloads`` False (an attached program):
    without the keys that run a workload; ``ranks`` False: without a job's."""

    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("q", "app.pop_screen", "Close", show=False),
        Binding("question_mark", "app.pop_screen", "Close", show=False),
    ]

    def __init__(self, workloads: bool = True, ranks: bool = True) -> None:
        super().__init__()
        self.workloads, self.ranks = workloads, ranks

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="help-body"):
            head, panes = Text.from_markup(HELP_HEAD), Text.from_markup(PANES_HELP)
            body = Group(
                head, Text(), actions.help_table(self.workloads, self.ranks), Text(), panes
            )
            yield Static(body, id="help-text")


class SaveScreen(ModalScreen[str | None]):
    """Where to write the report folder: Enter saves there, Escape keeps the session unsaved."""

    BINDINGS = [Binding("escape", "cancel", "Cancel")]
    AUTO_FOCUS = "#save-path"

    def __init__(self, suggestion: str, why: str | None = None) -> None:
        super().__init__()
        self.suggestion = suggestion
        self.why = why

    def compose(self) -> ComposeResult:
        with Vertical(id="save-body"):
            if self.why:
                yield Static(Text(self.why, style="bold"), id="save-why")
            yield Static("Save the session as a report folder here (a new folder):")
            yield Input(self.suggestion, id="save-path")
            yield Static(
                Text("Enter saves · Escape cancels (the session stays in memory)", style="dim")
            )

    def on_input_submitted(self, message: Input.Submitted) -> None:
        self.dismiss(message.value.strip() or None)

    def action_cancel(self) -> None:
        self.dismiss(None)
