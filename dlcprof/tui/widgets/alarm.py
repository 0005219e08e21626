"""The alarms: a compile that raised into the program, nothing compiled at all,
or the recompile limit hit (new shapes silently run eager); say it loudly."""

from __future__ import annotations

from textual.widgets import Static

from dlcprof.figures import outcome as fout
from dlcprof.figures import recompiles as fr
from dlcprof.tui.view import View


class AlarmBanner(Static):
    def show(self, view: View) -> None:
        run = view.run
        raised = run.compile_raised if run is not None else None
        if raised is not None:
            self.display = True
            self.update("⚠ " + "\n".join(fout.raised_lines(raised)))
            return
        refused = run.nothing_compiled if run is not None else None
        if refused is not None:
            self.display = True
            self.update("⚠ " + "\n".join([fout.headline(refused), *fout.hint_lines(refused, run)]))
            return
        hit = run.recompile_limit if run is not None else None
        self.display = hit is not None
        if hit is None or run is None:
            return
        self.update(
            f"⚠ RECOMPILE LIMIT HIT {fr.limit_line(hit)} ({fr.eager_cost(run)}). "
            f"fix: {fr.LIMIT_FIX} — try dynamic=true (key d)."
        )
