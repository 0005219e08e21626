"""The Advice screen (key A): the selected run's compile cost by the user's code
and its advice; a digit tries that item (as ``dlcprof try``): the change runs in
a fresh worker and, when it finishes, its measured effect joins the session
beside the prediction (``Trials``)."""

from __future__ import annotations

from typing import Protocol, cast

from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import VerticalScroll
from textual.screen import ModalScreen
from textual.widgets import Static

from dlcprof import events as ev
from dlcprof.advice_tables import advice_view, compile_cost_view
from dlcprof.figures.advice import model as fam
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.session import Run, Session
from dlcprof.settings import RunSettings


class _Tries(Protocol):
    """The app (tui/app.py, which imports this module)."""

    def try_advice(self, settings: RunSettings, advised_run: str, item: fam.Advice) -> bool: ...


class Trials:
    """Trial runs started from the Advice screen, until they finish."""

    def __init__(self) -> None:
        self._pending: dict[str, tuple[str, fam.Advice]] = {}  # trial run -> (advised run, item)

    def started(self, trial_run: str, advised_run: str, item: fam.Advice) -> None:
        self._pending[trial_run] = (advised_run, item)

    def fold(self, e: ev.Event, session: Session) -> str | None:
        """On a trial's RunFinished: the measured effect into the session, and its line."""
        if not isinstance(e, ev.RunFinished) or e.run_id not in self._pending:
            return None
        advised_id, item = self._pending.pop(e.run_id)
        advised, trial = session.runs.get(advised_id), session.runs.get(e.run_id)
        if e.status != "ok" or advised is None or trial is None:
            return f"{item.title}: the trial did not finish ({e.status})"
        tried = fat.tried(advised, trial, item)
        session.apply(tried)
        return f"{item.title}: {fat.tried_text(tried)}"


class AdviceScreen(ModalScreen[None]):
    BINDINGS = [
        Binding("escape", "app.pop_screen", "Close"),
        Binding("A", "app.pop_screen", "Close", show=False),
        *(Binding(str(n), f"try_item({n})", f"Try {n}", show=False) for n in range(1, 10)),
    ]

    def __init__(self, session: Session, run: Run) -> None:
        super().__init__()
        self.session, self.run = session, run

    def compose(self) -> ComposeResult:
        with VerticalScroll(id="advice-body"):
            cost = compile_cost_view(self.run, tree=True)
            if cost is not None:
                yield Static(cost)
            yield Static(advice_view(self.session, self.run))

    def action_try_item(self, n: int) -> None:
        items = far.advise(self.session, self.run).items
        if not 1 <= n <= len(items):
            return
        item = items[n - 1]
        if not item.options:
            self.notify(f"cannot be tried for you: {item.try_why}", severity="warning")
            return
        if self.run.process is not None:  # the program runs again: from the shell
            self.notify(fat.PROGRAM_TRY_FROM_SHELL, severity="warning")
            return
        settings = RunSettings.from_dict(fat.trial_settings(self.run, item)).validate()
        started = cast(_Tries, self.app).try_advice(settings, self.run.run_id, item)
        if started:
            self.app.pop_screen()
