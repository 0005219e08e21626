"""The advice's sections of a report: the advice for the latest advised run with
every `dlcprof try` of it, and each run's compile cost by the user's code.
Figures and words come from figures/advice/ and figures/compile_cost.py."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.figures import compile_cost as fcc
from dlcprof.figures.advice import model as fam
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.session import Run, Session

# Rows a report shows of each compile cost table (the JSON keeps them all).
COST_ROWS = 8


@data
class CompileCostSection:
    cost: fcc.CompileCost
    dynamo_line: str
    lowering_line: str
    probe_line: str
    functions: list[tuple[str, ...]]  # fcc.FUNCTION_COLUMNS, the costliest COST_ROWS
    modules: list[tuple[str, ...]]  # fcc.MODULE_COLUMNS
    function_columns = fcc.FUNCTION_COLUMNS
    module_columns = fcc.MODULE_COLUMNS


def compile_cost_section(run: Run) -> CompileCostSection | None:
    cost = fcc.compile_cost(run)
    if cost is None:
        return None
    return CompileCostSection(
        cost,
        fcc.dynamo_line(cost),
        fcc.lowering_line(cost),
        fcc.probe_line(cost),
        fcc.function_rows(cost, COST_ROWS),
        fcc.module_rows(cost, COST_ROWS),
    )


@data
class AdviceItem:
    number: int
    advice: fam.Advice
    predicted: str  # fam.predicted_text


@data
class Tried:
    event: ev.AdviceTried
    text: str  # fat.tried_text
    prediction_error: float | None


@data
class AdviceSection:
    advice: fam.AdviceList
    items: list[AdviceItem]
    tried: list[Tried]  # every `dlcprof try` in the session

    @property
    def run_id(self) -> str:
        return self.advice.run_id


def advice_section(session: Session) -> AdviceSection | None:
    run = fat.advised_run(session)
    if run is None:
        return None
    a = far.advise(session, run)
    return AdviceSection(
        a,
        [
            AdviceItem(i, item, fam.predicted_text(item.predicted, item.predicted_why))
            for i, item in enumerate(a.items, 1)
        ],
        [Tried(t, fat.tried_text(t), fat.prediction_error(t)) for t in session.tried],
    )
