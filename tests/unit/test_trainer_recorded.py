"""A program that only drives a library's trainer (issue 41): compile cost by
your code names the user's code, the libraries' functions together under its
own line whose call reached the compiles, not forty functions it cannot
change; the trainer's torch.compile call and what it passed, in every table.

tests/fixtures/programs/hf_trainer.jsonl: a real `dlcprof run -- python
tests/programs/hf_trainer.py` (a Hugging Face ``Trainer(torch_compile=True)``,
scripts/record_program_fixture.py): every function Dynamo traced is
transformers', torch's or Python's."""

from __future__ import annotations

import io

from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof.advice_tables import compile_cost_view
from dlcprof.figures import compile_cost as fc
from dlcprof.figures.check.budgets import Budgets, judge
from dlcprof.figures.job import program as fprog
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import build_report
from dlcprof.session import Session

CALL = "/home/user/dlcprof/tests/programs/hf_trainer.py:39"  # trainer.train()


def _run():
    s = Session.from_events(load_fixture("programs/hf_trainer"))
    (run,) = s.runs.values()
    return s, run


def test_a_trainers_compiles_are_the_cost_of_the_users_call():
    _, run = _run()
    cost = fc.compile_cost(run)
    (lib,) = cost.libraries
    assert lib.called_at == CALL
    assert set(lib.packages) == {"transformers", "torch", "python"}
    # Every traced function is counted once, under the call: the rows add up.
    assert lib.functions == len(cost.functions)
    assert lib.traced == sum(f.traced for f in cost.functions)
    assert abs(lib.self_s - cost.traced_s) < 1e-9
    (row,) = fc.function_rows(cost)
    assert row[0].startswith("library code: transformers") and row[1].endswith(
        "reached from /home/user/dlcprof/tests/programs/hf_trainer.py:39"
    )


def test_the_users_own_functions_keep_their_rows_beside_the_libraries():
    _, run = _run()
    cost = fc.compile_cost(run)
    assert cost is not None
    mine = fc.FunctionCost("my_loss", "/home/u/train.py:12", 3, 99.0, 120.0)
    rows = fc.function_rows(
        fc.CompileCost(
            [mine, *cost.functions],
            cost.modules,
            cost.dynamo_s,
            cost.lowering_s,
            cost.own_s,
            cost.guards_s,
            cost.libraries,
        )
    )
    assert [r[0] for r in rows][:1] == ["my_loss"]
    assert len(rows) == 2  # no library function by itself


def test_the_json_keeps_every_function_and_the_groups():
    s, run = _run()
    report = build_report(build_model(s))
    (saved,) = report["runs"]
    cost = saved["compile_cost"]
    assert len(cost["functions"]) == len(fc.compile_cost(run).functions)
    (lib,) = cost["libraries"]
    assert lib["called_at"] == CALL


def test_no_lowering_is_said_in_a_line_not_an_empty_table():
    """The trainer's backend is aot_eager: Inductor lowered nothing."""
    s, run = _run()
    cost = fc.compile_cost(run)
    assert cost.modules == [] and fc.module_rows(cost) == []
    assert fc.lowering_line(cost).startswith("Inductor lowered no FX node")
    md = render_markdown(build_model(s))
    assert "Inductor lowered no FX node" in md and "| module |" not in md
    # The TUI's view: the line, and no tree of nothing under it.
    console = Console(width=120, record=True, file=io.StringIO())
    console.print(compile_cost_view(run, tree=True))
    shown = console.export_text()
    assert "Inductor lowered no FX node" in shown and "(top level)" not in shown


def test_the_trainers_compile_call_is_in_the_runs_table_and_compiled():
    """Accelerate's torch.compile call for transformers' Trainer: its mode and
    dynamic in the report's runs table (not a bare n/a), and its module ran."""
    s, run = _run()
    (row,) = [r.summary_row() for r in build_model(s).runs]
    assert row[2:4] == ["default", "auto"]
    (line,) = fprog.compiled_with(run)
    assert line.startswith("transformers/trainer.py:1788 through accelerate compiled with")
    assert "nothing compiled" not in line


def test_the_trainers_compiles_are_one_violation_at_the_users_call():
    """Every compiled frame is the trainer's, and no torch.compile call is the
    program's: the gate says them once, at the program's line whose call
    reached them (on the diff), not at no place."""
    _, run = _run()
    _, violations = judge(run, Budgets(compiles=0), "")
    (v,) = violations
    assert v.where == CALL
    assert "only inside libraries, at no line of yours (your call that reached them)" in v.message
