"""Every key of the main screen, once: the footer, the command palette, the
help screen, what a replay allows and what an attached program allows are
all read from ``ACTIONS``."""

from __future__ import annotations

from rich.table import Table
from rich.text import Text
from textual.actions import parse
from textual.binding import Binding, BindingType

from dlcprof.data import data
from dlcprof.tui.panes import FOCUSABLE


@data(frozen=True)
class Action:
    key: str  # Textual's key name
    action: str  # the app action it runs, with its arguments
    label: str  # the footer's word for it
    title: str  # the command palette's entry ("" for a second key of the row above)
    blurb: str  # the palette's line under the title
    help: str  # the help screen's line ("" for a second key of the row above)
    replay: bool  # allowed in a replay of a saved session (no worker there)
    footer: bool = True
    workload: bool = False  # needs a workload: not on an attached program (it decides what runs)
    ranks: bool = False  # needs a torchrun job's ranks: off, and out of the footer, without them
    main_screen: bool = False  # acts on the main screen's panes: off while a screen is on top
    # Run as the app dequeues the key (Textual's priority binding), not after it
    # went to the focused widget and back: the keys queued behind it (a paste)
    # are routed after it acted. Never while a text field has the focus (Textual
    # leaves out a binding of a key the field takes).
    at_once: bool = False

    @property
    def name(self) -> str:
        """The action method, without its arguments (what check_action gets)."""
        return self.action.split("(")[0]

    @property
    def display(self) -> str:
        return _DISPLAY.get(self.key, self.key)

    def offered(self, replay: bool, attached: bool, ranks: bool) -> bool:
        """Whether a session has what this key needs: a worker (not a
        ``replay``), a workload (not ``attached`` to a program), a job's ``ranks``."""
        if (replay and not self.replay) or (attached and self.workload):
            return False
        return ranks or not self.ranks


_DISPLAY = {
    "escape": "esc",
    "slash": "/",
    "question_mark": "?",
    "left_square_bracket": "[",
    "right_square_bracket": "]",
}

_MAIN: tuple[Action, ...] = (
    Action(
        "r",
        "compile",
        "Compile/run",
        "Compile and run",
        "Compile and benchmark",
        "compile and benchmark the workload with the settings on the left",
        replay=False,
        workload=True,
    ),
    Action(
        "m",
        "cycle('mode')",
        "Mode",
        "Cycle mode",
        "Next Inductor mode",
        "cycle the Inductor mode",
        replay=False,
        workload=True,
    ),
    Action(
        "d",
        "cycle('dynamic')",
        "Dynamic",
        "Cycle dynamic",
        "auto / true / false",
        "cycle dynamic shapes (auto / true / false)",
        replay=False,
        workload=True,
    ),
    Action(
        "f",
        "cycle('freezing')",
        "Freezing",
        "Toggle freezing",
        "off / on",
        "freezing off / on (CPU inference; lets max-autotune tune CPU matmuls)",
        replay=False,
        footer=False,
        workload=True,
    ),
    Action(
        "s",
        "sweep",
        "Shape sweep",
        "Shape sweep",
        "Static vs dynamic shapes",
        "shape sweep: the workload's sizes static, then dynamic; compares their costs",
        replay=False,
        workload=True,
    ),
    Action(
        "a",
        "all_modes",
        "All modes",
        "All modes",
        "Every Inductor mode side by side",
        "every Inductor mode, one run each, side by side in the Modes tab",
        replay=False,
        workload=True,
    ),
    Action(
        "c",
        "cancel",
        "Cancel",
        "Cancel run",
        "Kill the worker, keep data",
        "cancel: kill the worker, keep what was captured",
        replay=False,
        workload=True,
    ),
    Action(
        "escape", "cancel(True)", "Cancel", "", "", "", replay=False, footer=False, workload=True
    ),
    Action(
        "ctrl+s",
        "save",
        "Save report",
        "Save report",
        "Write the session to disk",
        "save the session as a report folder (after a failed save: asks where)",
        replay=True,
    ),
    Action(
        "S",
        "save_as",
        "Save to…",
        "Save report to…",
        "Choose the folder to write to",
        "save the session as a report folder you choose",
        replay=True,
        footer=False,
    ),
    Action(
        "P",
        "paper",
        "Paper",
        "Reproduce the paper",
        "arXiv 2611.04273's findings, measured here",
        "arXiv 2611.04273's findings beside this machine's (runs the quick set first)",
        replay=True,
        workload=True,
    ),
    Action(
        "A",
        "advice",
        "Advice",
        "Advice",
        "What to change, what it saves",
        "advice for the selected run: what to change and what it saves (a digit there tries it)",
        replay=True,
        footer=False,
    ),
    Action(
        "R",
        "ranks",
        "Ranks",
        "Ranks",
        "Every rank of a torchrun job on one time axis",
        "the ranks: one lane per rank, its compiles as bars, the divergences, a table",
        replay=True,
        ranks=True,
    ),
    Action(
        "left_square_bracket",
        "step_rank(-1)",
        "Prev rank",
        "Previous rank",
        "Every pane shows the rank before",
        "previous / next rank: every pane shows the selected rank",
        replay=True,
        ranks=True,
    ),
    Action(
        "right_square_bracket",
        "step_rank(1)",
        "Next rank",
        "Next rank",
        "Every pane shows the rank after",
        "",
        replay=True,
        ranks=True,
    ),
    Action(
        "v",
        "toggle_phases",
        "All phases",
        "Show all phases",
        "Unfold the short FX-pass phases",
        "every phase (short FX passes are folded by default)",
        replay=True,
        footer=False,
    ),
    Action(
        "t",
        "toggle_threads",
        "All threads",
        "Hot frames of every thread",
        "Not only the compiling thread",
        "hot frames of every thread (the compiling thread by default)",
        replay=True,
        footer=False,
    ),
    Action(
        "o",
        "sort(1)",
        "Sort",
        "Sort by the next column",
        "The focused table: o next column, O reverses, or click a header",
        "sort the focused table by the next column (marked ▼ or ▲; a click on a header "
        "sorts by it); kept per pane for the session",
        replay=True,
    ),
    Action(
        "O",
        "reverse",
        "Reverse",
        "Reverse the sort",
        "The focused table, the other way round",
        "",
        replay=True,
        footer=False,
    ),
    Action(
        "slash",
        "filter",
        "Filter",
        "Filter the focused table",
        "A substring, or re: then a regex",
        "filter the focused table or the Log: a substring, or re: then a regex; "
        "the title counts what shows (12 of 82); esc clears it",
        replay=True,
        at_once=True,  # the letters typed right behind / are the filter's
    ),
    Action(
        "p",
        "pause",
        "Pause",
        "Pause the display",
        "Events still fold in; p again catches up",
        "pause repainting while events are still collected (p again catches up at once)",
        replay=False,
    ),
    Action(
        "e",
        "edit",
        "Edit",
        "Open the row's file in $EDITOR",
        "At the line of the row under the cursor",
        "open the file:line of the row under the cursor in $VISUAL / $EDITOR",
        replay=True,
        footer=False,
    ),
)

_BY_KEY = sorted(FOCUSABLE, key=lambda p: (p.key == "0", p.key))  # 1…9, then 0


def _focus_help(workloads: bool = True) -> str:
    """The focus keys in one line: the tabs as one range (``workloads`` False:
    without the panes that need one)."""
    panes = [p for p in _BY_KEY if workloads or not p.workload]
    tabs = [p.key for p in panes if p.place == "tab"]
    named = [f"{p.key} {p.title}" for p in panes if p.place != "tab"]
    at = next(i for i, p in enumerate(panes) if p.place == "tab")
    named.insert(at, f"{tabs[0]}-{tabs[-1]} the tabs")
    return "go to a pane: " + ", ".join(named)


_FOCUS_HELP = _focus_help()
_FOCUS: tuple[Action, ...] = tuple(
    Action(
        p.key,
        f"focus('{p.name}')",
        p.title,
        f"Go to {p.title}",
        "Focus this pane",
        _FOCUS_HELP if i == 0 else "",
        replay=not p.live_only,
        footer=False,
        workload=p.workload,
        main_screen=True,
        at_once=True,  # the key typed right behind it reaches the new pane
    )
    for i, p in enumerate(_BY_KEY)
)

_END: tuple[Action, ...] = (
    Action(
        "z",
        "maximize",
        "Maximize",
        "Maximize pane",
        "The focused pane fills the screen",
        "maximize the focused pane (z or esc restores it)",
        replay=True,
        main_screen=True,
    ),
    Action(
        "question_mark",
        "help",
        "Help",
        "Help",
        "Keys and panes",
        "this help (ctrl+p: every command by name)",
        replay=True,
    ),
    Action("q", "quit", "Quit", "Quit", "Quit dlcprof", "quit", replay=True),
)

ACTIONS: tuple[Action, ...] = _MAIN + _FOCUS + _END


def bindings() -> list[BindingType]:
    return [
        Binding(
            a.key,
            a.action,
            a.label,
            show=a.footer,
            key_display=_DISPLAY.get(a.key),
            priority=a.at_once,
        )
        for a in ACTIONS
    ]


def find(name: str, parameters: tuple[object, ...]) -> Action | None:
    """The row of a key's action (what check_action gets): the one with these
    arguments, else the first of that name (the paper screen's r: paper(True))."""
    named = [a for a in ACTIONS if a.name == name]
    exact = [a for a in named if parse(a.action)[2] == parameters]
    return (exact or named)[0] if named else None


def _grouped(field: str, workloads: bool = True, ranks: bool = True) -> list[tuple[Action, str]]:
    """(row, its keys) for each row with ``field`` set; a row without it is
    another key of the row above, and a run of digits reads as one range.
    ``workloads`` False: without the rows that need one (an attached program);
    ``ranks`` False: without the rows of a job's ranks."""
    groups: list[tuple[Action, list[str]]] = []
    dropped = False  # the row above was left out: so are its other keys
    for a in ACTIONS:
        left_out = (a.workload and not workloads) or (not ranks and a.ranks)
        if getattr(a, field):
            dropped = left_out
            if not left_out:
                groups.append((a, [a.display]))
        elif not (left_out or dropped):
            groups[-1][1].append(a.display)
    return [(a, _keys(keys)) for a, keys in groups]


def palette() -> list[tuple[Action, str]]:
    """The command palette's entries: (the action, its title with its keys)."""
    return [(a, f"{a.title} ({keys})") for a, keys in _grouped("title")]


def help_rows(workloads: bool = True, ranks: bool = True) -> list[tuple[str, str]]:
    """The help screen's lines: (keys, what they do); ``workloads`` False: on
    an attached program, without the keys that run a workload; ``ranks``
    False: without the keys of a job's ranks."""
    return [
        (keys, _focus_help(workloads) if a.name == "focus" else a.help)
        for a, keys in _grouped("help", workloads, ranks)
    ]


def _keys(keys: list[str]) -> str:
    if len(keys) > 2 and all(k.isdigit() for k in keys):
        return f"{min(keys)}-{max(keys)}"
    return " / ".join(keys)


def help_table(workloads: bool = True, ranks: bool = True) -> Table:
    """The keys, aligned: each line wraps inside its own column."""
    t = Table.grid(padding=(0, 2))
    t.add_column(no_wrap=True, style="bold")
    t.add_column()
    for keys, line in help_rows(workloads, ranks):
        t.add_row(keys, Text(line))
    return t
