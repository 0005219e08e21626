"""The dlcprof TUI: pick a workload, compile it in a worker, watch it live.
One idea past 600 lines: the app lays out panes, folds events and paints
them, and routes keys (those that change what the panes show to its
``ViewKeys``, tui/view_keys.py); the runs themselves (queue, standby worker,
cancel, save) belong to ``RunController``, an attached program (its start,
stop, detach, end) to ``ProgramController``: no Textual in either.
Which panes and keys a session offers is data (tui/panes.py, tui/actions.py).

Threading: the engine calls ``emit`` from a background thread for every event.
``emit`` only appends to a deque (thread-safe, never blocks); a 20 Hz timer on
the UI thread folds what is pending into the Session and repaints only the
panes those events touch. A flooding worker therefore costs one repaint per
pane per tick, and key presses are answered between ticks.
"""

from __future__ import annotations

import dataclasses
import os
import time
from collections import deque
from collections.abc import Iterable, Sequence
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, cast

from textual.actions import SkipAction
from textual.app import App, ComposeResult, SystemCommand
from textual.containers import Horizontal, Vertical
from textual.css.query import NoMatches
from textual.screen import Screen
from textual.widget import Widget
from textual.widgets import Footer, Static, TabbedContent, TabPane

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import observer as fo
from dlcprof.figures import outcome as fout
from dlcprof.figures import recompiles as fr
from dlcprof.figures import runs as fruns
from dlcprof.figures.job import lanes as rl
from dlcprof.figures.job.rank_runs import rank_runs
from dlcprof.session import Session
from dlcprof.settings import RunSettings, SettingsError
from dlcprof.signals import HANGUP, Stopped, input_hung_up
from dlcprof.tui import actions, focus
from dlcprof.tui.controller import NotRunnable, RunController, Severity, initial_settings
from dlcprof.tui.messages import (
    KernelChosen,
    RunChosen,
    SettingChanged,
    WorkloadChosen,
    WorkloadRejected,
)
from dlcprof.tui.ordering import Order
from dlcprof.tui.panes import AFFECTS, BY_NAME, PANES, REPAINTED, Pane
from dlcprof.tui.program_dialog import ask_stop_or_detach
from dlcprof.tui.screens import HelpScreen, KernelSourceScreen, PaperScreen, RanksScreen, SaveScreen
from dlcprof.tui.view import Shows, View, on_cpu
from dlcprof.tui.view_keys import ViewKeys, pane_of
from dlcprof.tui.widgets.advice import AdviceScreen, Trials
from dlcprof.tui.widgets.log import LogPane
from dlcprof.tui.widgets.settings_panel import SettingsPanel
from dlcprof.tui.widgets.sorted_table import OrderChanged
from dlcprof.tui.widgets.status_bar import StatusBar, device_words
from dlcprof.tui.widgets.workloads import WorkloadPicker

if TYPE_CHECKING:
    from dlcprof.engine import Engine
    from dlcprof.figures.advice.model import Advice
    from dlcprof.tui.attached import ProgramController

TICK_S = 1 / 20  # panes repaint at most this often
PROGRAM_TICKS = 10  # an attached program's timeline moves with the clock: twice a second
MAX_BATCH = 5000  # events folded per tick; the rest wait for the next one

# What to do next, per failing stage: the second half of a one-line error.
_REMEDY = {
    "load": "fix the workload file or pick another workload",
    "compile": "try another mode, or backend aot_eager to isolate Inductor; details in Log",
    "benchmark": "the compile data is kept; details in Log",
    "sweep": "the steps measured so far are kept; details in Log",
    "worker": "press r to retry; details in Log",
    "monitor": "the run goes on without this monitor",
}


class DlcprofApp(App[None]):
    AUTO_FOCUS = None  # on_mount picks the focus (the workload list only for a bundled target)
    CSS_PATH = Path(__file__).with_name("app.tcss")  # absolute: subclasses live elsewhere
    TITLE = "dlcprof"
    BINDINGS = actions.bindings()

    def __init__(
        self,
        target: str | None = None,
        settings: RunSettings | None = None,
        session: Session | None = None,
        replay: bool = False,
        start_standby: bool = True,
        deterministic: bool | None = None,
        engine: Engine | None = None,
        command: Sequence[str] | None = None,
        hotspots: bool = True,
        theme: str | None = None,
    ) -> None:
        """``command``: the TUI on that program (``dlcprof -- CMD``), started on
        mount; ``hotspots`` False: no py-spy on its processes; ``theme``: Textual's."""
        super().__init__()
        if theme is not None:
            self.theme = theme
        self.session = session if session is not None else Session()
        self.replay = replay
        if deterministic is None:
            deterministic = os.environ.get("DLCPROF_DETERMINISTIC") == "1"
        # Deterministic: no wall-clock text anywhere (tests, snapshots, screenshots).
        self.deterministic = deterministic
        latest = self.session.latest_run
        base = initial_settings(target, settings, self.session)
        self.target = base.target
        self._pending: deque[ev.Event] = deque()
        self.program: ProgramController | None = None
        if command is not None:
            from dlcprof.tui.attached import ProgramController

            self.program = ProgramController(self.session, self.emit, command, hotspots, engine)
        standby = start_standby and not replay and self.program is None
        self.runs = RunController(self.session, self.emit, engine, standby=standby, settings=base)
        self._selected: str | None = latest.run_id if latest else None
        self._follow = True  # a new run gets selected as it starts
        self._notes: list[ev.LogEmitted] = []  # UI-side notes (bad path, save): not session data
        self._message: str | None = None  # the last error, for the status bar
        self._message_topic = ""  # what it was about, when a notice said it
        self._dirty: set[str] = set(REPAINTED)
        self._standby_shown = False
        self._ticks = 0
        # Stop signals noted by dlcprof.signals (SIGTERM, SIGHUP, SIGINT): the tick exits.
        self.stops: list[Stopped] = []
        self.trials = Trials()  # advice tried from the Advice screen, until they finish
        self.orders: dict[str, Order] = {}  # each table's sort and filter, by its id
        self.paused: int | None = None  # p: events folded since (the app's tick counts)
        self.view_keys = ViewKeys(self, self.repaint_pane)  # o O / e v t

    # --- layout -----------------------------------------------------------------

    def compose(self) -> ComposeResult:
        with Horizontal(id="body"):
            with Vertical(id="sidebar", classes="-replay" if self.replay else ""):
                if self.replay:
                    yield Static(
                        "Replay of a saved session: read-only. Pick a run below.", id="replay-note"
                    )
                yield from self._made("side")
            with Vertical(id="main"):
                yield from self._made("banner")
                with Horizontal(id="top"):
                    yield from self._made("top")
                yield from self._made("main")
                with TabbedContent(id="tabs"):
                    for p in PANES:
                        if p.place == "tab":
                            with TabPane(p.title, id=f"tab-{p.name}"):
                                yield p.widget(id=p.name)
        yield StatusBar(id="status")
        yield Footer()

    def laid_out(self, p: Pane) -> bool:
        """Whether this session has what pane ``p`` needs (tui/panes.py)."""
        return p.laid_out(self.replay, self.program is not None)

    def offers(self, a: actions.Action) -> bool:
        """Whether this session has what key ``a`` needs (tui/actions.py)."""
        return a.offered(self.replay, self.program is not None, self.has_ranks)

    def _made(self, place: str) -> Iterable[Widget]:
        """The panes registered at ``place``, in registry order."""
        for p in PANES:
            if p.place != place or not self.laid_out(p):
                continue
            if p.name == "workloads":
                yield WorkloadPicker(self.target, id=p.name)
            elif p.name == "settings":
                yield SettingsPanel(self.runs.settings, id=p.name)
            else:
                yield p.widget(id=p.name)

    def on_mount(self) -> None:
        self.set_interval(TICK_S, self._tick)
        # After the first frame: it imports the engine and starts a worker.
        self.call_after_refresh(self.runs.prepare_standby)
        if self.program is not None:
            self.program.start()
        self._repaint()
        picker = next(iter(self._home.query(WorkloadPicker)), None)
        if picker is not None and picker.bundled_target:
            self._home.query_one("#workload-list").focus()
        else:
            self._home.query_one("#kernels-table").focus()

    @property
    def selected_run_id(self) -> str | None:
        """The run the panes show."""
        return self._selected

    @property
    def has_ranks(self) -> bool:
        """The session's processes carry ranks (a torchrun job): the rank keys apply."""
        return bool(rank_runs(self.session))

    @property
    def pending_events(self) -> int:
        """Events emitted but not folded yet (the next tick folds them)."""
        return len(self._pending)

    @property
    def _home(self) -> Screen:
        """The main screen: panes repaint under a kernel or help screen too."""
        return self.screen_stack[0]

    # --- the event pump -----------------------------------------------------------

    def emit(self, event: ev.Event) -> None:
        """Called from the engine's thread: queue only, the UI thread folds."""
        self._pending.append(event)

    def _tick(self) -> None:
        if self.is_web and not self.stops and HANGUP is not None and input_hung_up():
            self.stops.append(Stopped(HANGUP))  # dlcprof serve's server is gone
        if self.stops:
            self.exit(return_code=1)  # the caller stops the worker and saves the session
            return
        if not self.screen_stack:
            return  # closing: the screens are gone
        try:
            self._fold_and_paint()
        except NoMatches:
            pass  # the app is closing and its panes are gone: nothing left to paint

    def _fold_and_paint(self) -> None:
        self._ticks += 1
        n = min(len(self._pending), MAX_BATCH)
        for _ in range(n):
            e = self._pending.popleft()
            self.runs.apply(e)
            self._dirty |= AFFECTS.get(type(e), frozenset())
            self.react(e)
        while self.runs.notices:
            notice = self.runs.notices.popleft()
            if notice.topic and notice.topic == self._message_topic:
                self._message = None  # e.g. a save that worked after one that failed
            self._report(notice.message, notice.severity, note=not notice.logged)
            if notice.severity == "error":
                self._message_topic = notice.topic
        if self.runs.standby_ready != self._standby_shown:
            self._standby_shown = self.runs.standby_ready
            self._dirty.add("status")
        live_run = self.runs.live_run()
        if n or (live_run is not None and self._ticks % 2 == 0):
            # Elapsed figures move while a run is live: 10 Hz is plenty.
            self._dirty.add("status")
            if live_run is not None and live_run.open_phases and not self.deterministic:
                self._dirty.add("phases")
        if self.program is not None and self._ticks % PROGRAM_TICKS == 0:
            self._dirty.add("program")
            if self.program.running and not self.deterministic:
                self._dirty |= {"ranks", "divergence"}  # the ranks' axis ends at now
        if self.paused is not None:
            self.paused += n  # folded, not painted: p catches up
            self._paint_status(self._view())
            return
        if self._dirty:
            self._repaint()
        self._flush_log()

    def react(self, e: ev.Event) -> None:
        """What one event does beyond its fold and repaint (the controllers
        reacted in ``apply`` already): selection, notifications, closing."""
        if isinstance(e, ev.RunStarted) and self._follow:
            self._select(e.run_id)
        elif isinstance(e, ev.ProcessAttached):
            if e.rank is not None:
                self.refresh_bindings()  # the rank keys come into the footer
            if self.program is not None and self._follow:
                self._select(e.run_id)  # the newest process of the program
        elif isinstance(e, ev.ProgramExited) and self.program is not None:
            self.notify(e.message, timeout=10)
            if self.program.ended(e):
                self.exit()
        elif isinstance(e, ev.ErrorRaised):
            remedy = _REMEDY.get(e.stage, "details in Log")
            severity: Severity = "warning" if e.stage == "monitor" else "error"
            self._report(f"{e.stage} failed: {e.message} — {remedy}", severity, note=False)
        elif isinstance(e, ev.RecompileLimitHit):
            self._report(f"RECOMPILE LIMIT HIT {fr.limit_line(e)}", "error", note=False)
        elif isinstance(e, ev.CompileRaised):
            self._report(fout.raised_headline(e), "error", note=False)
        elif isinstance(e, ev.WorkerExited) and self.runs.live is not None:
            self._follow = True  # the controller started the next queued run
        said = self.trials.fold(e, self.session)
        if said is not None:
            self.notify(said, timeout=20)

    # --- painting -------------------------------------------------------------------

    def _view(self) -> View:
        run = self.session.runs.get(self._selected) if self._selected else None
        now = None if (self.deterministic or self.replay) else time.time()
        return View(
            self.session,
            run,
            now,
            self.replay,
            live=self.runs.live_run(),
            notes=self._notes,
            on_cpu=on_cpu(self.session, self.runs.live_run() or self.session.latest_run),
        )

    def _repaint(self) -> None:
        dirty, self._dirty = self._dirty, set()
        view = self._view()
        for name in (p.name for p in PANES if p.repaints and p.name in dirty):
            for screen in self.screen_stack:  # the paper pane lives on its own screen
                try:  # by id: a CSS query over every widget was most of a streaming tick
                    pane = cast(Shows, screen.get_widget_by_id(name))  # p.repaints
                except NoMatches:
                    continue
                pane.show(view)
                label = getattr(pane, "tab_label", None)  # a count in the tab's label
                if label is not None:
                    tab = self._home.query_one(TabbedContent).get_tab(f"tab-{name}")
                    if str(tab.label) != (words := label(view)):
                        tab.label = words
        self._paint_status(view)

    def repaint_pane(self, name: str) -> None:
        """Repaint pane ``name`` now (a table sorted or filtered); while paused, on p."""
        self._dirty.add(name)
        if self.paused is None:
            self._repaint()
            self._flush_log()

    def on_order_changed(self, message: OrderChanged) -> None:
        """A table sorted or filtered: its pane repaints (its title counts what shows)."""
        pane = pane_of(message.widget)
        if pane is not None:
            self.repaint_pane(pane)

    @property
    def paused_words(self) -> str | None:
        """The status bar's mark while paused."""
        if self.paused is None:
            return None
        return f"paused: {text.plural(self.paused, 'event')} waiting (p)"

    def action_pause(self) -> None:
        """Hold the panes still while events still fold in; again: catch up at once."""
        if self.paused is None:
            self.paused = 0
            self._paint_status(self._view())
            self.notify("paused: events still fold in; p catches up", timeout=2)
            return
        waited, self.paused = self.paused, None
        self._repaint()
        self._flush_log()
        self.notify(f"caught up: {text.plural(waited, 'event')}", timeout=2)

    def mark_dirty(self, name: str) -> None:
        """Repaint pane ``name`` on the next tick (a screen that just opened)."""
        self._dirty.add(name)

    def _flush_log(self) -> None:
        """Draw queued log lines while the Log tab shows (time-boxed per tick)."""
        log = self._home.query_one(LogPane)
        if log.has_pending and self._home.query_one(TabbedContent).active == "tab-log":
            log.flush()

    def on_tabbed_content_tab_activated(self, event: TabbedContent.TabActivated) -> None:
        if event.pane.id == "tab-log":
            self._flush_log()

    def worker_state(self) -> tuple[str, str]:
        """(state, detail) for the status bar."""
        if self.replay:
            return "replay", f"{fruns.runs_counted(self.session)} from a saved session"
        now = None if self.deterministic else time.time()
        return self.program.state(now) if self.program is not None else self.runs.state(now)

    def _paint_status(self, view: View) -> None:
        state, detail = self.worker_state()
        rank = rl.shown_words(self.session, view.run)
        if rank is not None:
            detail = f"{rank} shown ([ ]) · {detail}" if detail else f"{rank} shown ([ ])"
        run = self.runs.live_run() or view.run
        watched = fo.short(run) if run is not None else None
        shown = self.runs.live_run() or self.session.runs.get(self._selected or "")
        device = device_words(self.session, shown, self.replay)
        bar = self._home.query_one(StatusBar)
        bar.show(state, detail, device, self._message, watched, self.paused_words)

    # --- selection ------------------------------------------------------------------

    def _select(self, run_id: str | None) -> None:
        if run_id != self._selected:
            self._selected = run_id
            self._dirty |= REPAINTED

    def select_run(self, run_id: str) -> None:
        """Show ``run_id`` in the panes (as picking it in the Runs list does)."""
        self.post_message(RunChosen(run_id))

    def show_tab(self, name: str) -> None:
        """Bring a bottom tab forward: recompiles, log, device, hotspots or modes."""
        self._home.query_one(TabbedContent).active = f"tab-{name}"

    async def action_focus(self, name: str) -> None:  # App's, which is async
        """Go to a pane (its key in the registry): a tab is brought forward first."""
        if BY_NAME[name].place == "tab":
            self.show_tab(name)
        widget = next(iter(self._home.query(f"#{name}")), None)
        # At once, so the next key already reaches the pane (a tab brought forward
        # is displayed at once); what cannot take it yet takes it after the refresh.
        if widget is not None and not focus.focus_inside(self._home, widget):
            self.call_after_refresh(focus.focus_inside, self._home, widget)

    def action_maximize(self) -> None:
        """The pane that holds the focus fills the screen; again restores it."""
        focus.toggle_maximized(self._home)

    def on_run_chosen(self, message: RunChosen) -> None:
        latest = self.session.latest_run
        self._follow = latest is not None and message.run_id == latest.run_id
        self._select(message.run_id)
        self._repaint()

    def on_kernel_chosen(self, message: KernelChosen) -> None:
        self.push_screen(KernelSourceScreen(message.kernel, message.figures))

    def on_workload_chosen(self, message: WorkloadChosen) -> None:
        self.target = message.target
        self._message = None
        self._dirty.add("status")

    def on_workload_rejected(self, message: WorkloadRejected) -> None:
        self._report(message.message, "error")

    def on_setting_changed(self, message: SettingChanged) -> None:
        self._dirty.add("status")

    # --- actions ----------------------------------------------------------------------

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        a = actions.find(action, parameters)
        if a is not None and not self.offers(a):
            return False
        if self.replay and action == "paper" and parameters:
            return False  # the paper screen's r runs the plan again: no worker in a replay
        if a is not None and a.at_once and self._types(a):
            return False  # the field's: a regex, a path
        return a is None or not a.main_screen or len(self.screen_stack) == 1

    def _types(self, a: actions.Action) -> bool:
        """Whether the focused widget takes ``a``'s key as text (a regex, a path)."""
        return self.focused is not None and self.focused.check_consume_key(a.key, a.display)

    # The keys that change what the panes show (tui/view_keys.py).
    def action_sort(self, step: int) -> None:
        self.view_keys.sort(step)

    def action_reverse(self) -> None:
        self.view_keys.reverse()

    async def action_filter(self) -> None:
        if self.screen.is_modal:
            raise SkipAction()  # a dialog keeps its keys (a priority binding reaches past it)
        await self.view_keys.filter()

    def action_edit(self) -> None:
        self.view_keys.edit()

    def action_toggle_phases(self) -> None:
        self.view_keys.toggle_phases()

    def action_toggle_threads(self) -> None:
        self.view_keys.toggle_threads()

    def action_compile(self) -> None:
        if self._busy():
            return
        settings = self.settings_for_run()
        if settings is not None:
            self._start([settings])

    def action_sweep(self) -> None:
        if self._busy():
            return
        static = self.settings_for_run(sweep=True, dynamic="false", benchmark=False)
        if static is not None:
            self._start([static, dataclasses.replace(static, dynamic="true")])
            self.notify("shape sweep: static shapes first, then dynamic")

    def action_all_modes(self) -> None:
        """Every mode, one after another, each in its own worker, then side by side."""
        if self._busy():
            return
        settings = self.settings_for_run()
        if settings is not None and settings.backend != "inductor":
            self._report(text.modes_need_inductor(settings.backend), "warning")
        elif settings is not None:
            self._start(settings.each_mode())
            self.show_tab("modes")
            self.notify("all four modes, one after another: the Modes tab compares them")

    def action_cycle(self, name: str) -> None:
        value = self._home.query_one(SettingsPanel).cycle(name)
        note = " (applies to the next run)" if self.runs.busy else ""
        self.notify(f"{name} = {value}{note}", timeout=2)

    def action_cancel(self, quiet: bool = False) -> None:
        if not self.runs.cancel("cancelled by user"):
            if not quiet:
                self.notify("nothing to cancel: no run in progress", timeout=2)
            return
        self._dirty.add("status")

    def action_save(self) -> None:
        if self.runs.save_failed and self.session.events:
            self.action_save_as(self.runs.save_failed)
        else:
            self.runs.save()

    def action_save_as(self, why: str | None = None) -> None:
        """Ask where to write the report folder, then save there."""
        if not self.session.events:
            self.runs.save()  # says there is nothing to save yet
            return

        def chosen(path: str | None) -> None:
            if path:
                self.runs.save(Path(path).expanduser())

        self.push_screen(SaveScreen(str(self.runs.save_suggestion()), why), chosen)

    def fold_pending(self) -> None:
        """Fold events still queued (after the app closed: a stopped run's last ones)."""
        while self._pending:
            self.runs.apply(self._pending.popleft())

    def action_paper(self, again: bool = False) -> None:
        """The paper's findings beside this machine's: runs the quick set of
        ``dlcprof paper`` first (the device and size of the settings panel) when
        the session has none yet, or ``again``."""
        from dlcprof.paper import PlanError, make_plan

        if (again or self.session.paper is None) and not self.replay and not self._busy():
            s = self.settings_for_run()
            try:
                plan = make_plan(quick=True, device=s.device, size=s.size) if s else None
            except (PlanError, SettingsError) as e:
                self._report(str(e), "error")
                plan = None
            if plan is not None:
                self.emit(plan.event)
                self._start(plan.runs)
        if not isinstance(self.screen, PaperScreen):
            self.push_screen(PaperScreen())
        self.mark_dirty("paper")

    def action_ranks(self) -> None:
        """Every rank on one time axis, the divergences, the per-rank table."""
        if not isinstance(self.screen, RanksScreen):
            self.push_screen(RanksScreen())
        self.mark_dirty("ranks")

    def action_step_rank(self, delta: int) -> None:
        """Show the rank before (-1) or after (1) the one shown, round the ranks."""
        ids = [r.run_id for r in rank_runs(self.session)]
        if not ids:
            return
        if self._selected in ids:
            at = ids.index(self._selected) + delta
        else:
            at = 0 if delta > 0 else -1
        self.select_run(ids[at % len(ids)])

    def action_advice(self) -> None:
        run = self.session.runs.get(self._selected or "")
        if run is None or run.live:
            self.notify("advice comes with a finished run: press r first", severity="warning")
        elif not isinstance(self.screen, AdviceScreen):
            self.push_screen(AdviceScreen(self.session, run))

    def try_advice(self, settings: RunSettings, advised_run: str, item: Advice) -> bool:
        """Run one advice item's change (the Advice screen's digit keys)."""
        if self.replay or self._busy():
            return False
        run_id = self.runs.start([settings])
        if run_id is None:
            return False
        self.trials.started(run_id, advised_run, item)
        self._follow = True
        self._select(run_id)
        self.notify(f"trying: {getattr(item, 'title', '')}")
        return True

    def action_help(self) -> None:
        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen(workloads=self.program is None, ranks=self.has_ranks))

    async def action_quit(self) -> None:
        """Quit; while an attached program runs, ask first: stop it, or detach."""
        if self.program is None or not self.program.running:
            self.exit()
        else:
            ask_stop_or_detach(self, self.program)

    def get_system_commands(self, screen: Screen) -> Iterable[SystemCommand]:
        for c in super().get_system_commands(screen):
            if c.title not in ("Quit", "Maximize", "Minimize"):  # ours have keys
                yield c
        for a, title in actions.palette():
            if self.offers(a):
                yield SystemCommand(title, a.blurb, partial(self.run_action, a.action))

    # --- running ------------------------------------------------------------------------

    def _busy(self) -> bool:
        if self.runs.busy:
            self.notify("a run is in progress: press c to cancel it first", severity="warning")
            return True
        return False

    def settings_for_run(self, **overrides: object) -> RunSettings | None:
        """The next run's settings from the sidebar; None when refused (said why)."""
        picker = self._home.query_one(WorkloadPicker)
        values = self._home.query_one(SettingsPanel).values()
        try:
            return self.runs.settings_for(picker.target, values, **overrides)
        except NotRunnable as e:
            if e.bad_path:
                picker.set_error(e.why)
            self._report(str(e), "error")
            return None

    def _start(self, queue: list[RunSettings]) -> None:
        run_id = self.runs.start(queue)
        if run_id is not None:
            self._message = None
            self._follow = True
            self._select(run_id)
        self._dirty.add("status")

    def _report(self, message: str, severity: Severity = "error", note: bool = True) -> None:
        """A one-line problem: a notification, the status bar, and the Log pane.

        ``note`` False when the message came from the session (it is logged there)."""
        self.notify(message, severity=severity, timeout=10)
        if severity == "error":
            self._message, self._message_topic = message, ""
        if note:
            self._notes.append(
                ev.LogEmitted(run_id=None, level=severity, source="dlcprof", message=message)
            )
            self._dirty.add("log")
        self._dirty.add("status")

    def on_unmount(self) -> None:
        self.runs.close()
