"""The alarms: nothing compiled at all, or the recompile limit hit (new shapes
silently run eager); say it loudly."""

from __future__ import annotations

from textual.widgets import Static

from dlcprof import text
from dlcprof.figures import outcome as fout
from dlcprof.tui.view import View


class AlarmBanner(Static):
    def show(self, view: View) -> None:
        run = view.run
        refused = run.nothing_compiled if run is not None else None
        if refused is not None:
            self.display = True
            self.update("⚠ " + "\n".join([fout.headline(refused), *fout.hint_lines(refused, run)]))
            return
        hit = run.recompile_limit if run is not None else None
        self.display = hit is not None
        if hit is None:
            return
        limit = f"limit {hit.limit}" if hit.limit is not None else "limit n/a"
        counted = f" ({text.eager_calls(run.eager_calls)})" if run.eager_calls is not None else ""
        self.update(
            f"⚠ RECOMPILE LIMIT HIT in {hit.function} ({limit}): new shapes now run EAGER, "
            f"not compiled{counted}. {hit.message} — try dynamic=true (key d)."
        )
