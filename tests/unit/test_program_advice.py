"""Advice for an attached program (dlcprof run -- CMD): a session folded from
events as the attached probe sends them (our own logic, no compile)."""

from __future__ import annotations

import dataclasses
import json
import subprocess
import sys

import pytest
from helpers.program import compile_finished, program_started

from dlcprof import events as ev
from dlcprof.console import make_console, program_summary
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.report import build_model, build_report, dumps_report
from dlcprof.session import Session

SIZE = "tensor 'x' size mismatch at index 1. expected 4, actual 6"
BREAK_AT = "/home/u/train.py:12"


def session(recompiles: int = 2, recompile_s: float = 4.0) -> Session:
    """A process whose frame 0 broke at train.py:12 (frame 1 resumes after it) and
    recompiled ``recompiles`` times on x's dim 1, ``recompile_s`` each."""
    events: list[ev.Event] = [
        *program_started(),
        ev.GraphBroken(
            run_id="pid7",
            compile_id="0/0",
            reason="Unsupported: print",
            location=BREAK_AT,
            hints=["move the print out"],
            t=1002.0,
        ),
        compile_finished("0/0", 1001.0, 3.0),
        # Torch names the frame a broken function resumes in after the function and line.
        compile_finished(
            "1/0",
            1005.0,
            2.0,
            frame=("torch_dynamo_resume_in_forward_at_12", "/home/u/train.py", 12),
        ),
    ]
    for i in range(1, recompiles + 1):
        t = 1010.0 + 10 * i
        events += [
            ev.RecompileTriggered(run_id="pid7", compile_id=f"0/{i}", reason=SIZE, t=t),
            compile_finished(f"0/{i}", t, recompile_s, reason=SIZE),
        ]
    events.append(
        ev.ProgramExited(
            returncode=0, signal=None, wall_s=100.0, message="the program exited", t=1100.0
        )
    )
    return Session.from_events(events)


def test_attached_program_gets_mark_dynamic_and_the_graph_break_not_tried():
    s = session()
    run = fat.advised_run(s)
    assert run is not None and run.run_id == "pid7"
    a = far.advise(s, run)
    assert [i.rule for i in a.items] == ["mark-dynamic", "graph-break"]
    dyn, brk = a.items
    # The two recompiles (8 s) go; the first compile (3 s), now dynamic, costs 2x.
    assert dyn.title == "mark x's dim 1 dynamic"
    assert (dyn.predicted.before_s, dyn.predicted.after_s) == (11.0, 6.0)
    assert dyn.evidence[0].startswith("2 recompiles on x dim 1 (8.00 s)")
    # The graph resumed after the break (frame 1) is its cost, not a recompile of frame 0.
    assert brk.where == BREAK_AT and "an extra graph compiled after it: 2.00 s" in brk.evidence
    # Removed, its ops join frame 0's graph: up to its own 2 s saved, as the shortest
    # other graph (a recompile, 4 s) bounds the per-graph overhead no lower.
    assert (brk.predicted.before_s, brk.predicted.after_s) == (13.0, 11.0)
    assert "overhead saved, 2.00 s, is its compile up to 4.00 s" in brk.predicted.how
    for item in a.items:
        assert item.options == {} and item.try_why == fat.PROGRAM_TRY_WHY
    assert "re-runs your program only with a graph break's setting" in fat.PROGRAM_TRY_WHY
    assert a.hidden == [far.PROGRAM_UNCHECKED]
    assert "no benchmark (no eager timing)" in far.PROGRAM_UNCHECKED


def test_one_recompile_that_costs_what_the_dynamic_compile_adds_is_not_shown():
    s = session(recompiles=1, recompile_s=2.0)  # 2 s go; the graph's 2 s × (2 - 1) come
    a = far.advise(s, s.runs["pid7"])
    assert [i.rule for i in a.items] == ["graph-break"]
    assert a.hidden[0].startswith("mark x's dim 1 dynamic: predicted 0 µs, inside")


def _backward(cid: str, start: float, wall: float) -> ev.CompileFinished:
    return dataclasses.replace(compile_finished(cid, start, wall), is_backward=True)


def test_the_recompiles_of_every_epoch_outweigh_what_one_dynamic_compile_adds():
    """Issue 40, item 8: a Lightning fit whose partial last batch recompiled the step
    once per epoch, forward and backward. Its figures as the rule saw them: a cold
    first compile of 125.46 s (the process's one-time work in it), three epochs'
    recompiles of 30 s each. The rule said "predicted to cost 35.46 s more"
    (125.46 s × 2 against 125.46 + 90 s); marking the dim dynamic measured 91.4 s
    less. What the dynamic compile adds is its graph's work, which a recompile
    times, not the whole cold first compile: all 90 s go, 30 s come."""
    reason = "tensor 'x' size mismatch at index 0. expected 32, actual 8"
    events: list[ev.Event] = [
        *program_started(),
        compile_finished("0/0", 1000.0, 100.46),
        _backward("0/0", 1101.0, 25.0),
    ]
    for epoch in range(1, 4):
        t = 1200.0 + 100 * epoch
        events += [
            ev.RecompileTriggered(run_id="pid7", compile_id=f"0/{epoch}", reason=reason, t=t),
            compile_finished(f"0/{epoch}", t, 18.0, reason=reason),
            _backward(f"0/{epoch}", t + 20, 12.0),
        ]
    s = Session.from_events(events)
    (item,) = [i for i in far.advise(s, s.runs["pid7"]).items if i.rule == "mark-dynamic"]
    p = item.predicted
    assert p is not None and p.before_s == pytest.approx(125.46 + 90.0)
    assert p.saving_s == pytest.approx(90.0 - 30.0)  # a saving, as measured: not a cost
    assert "3 recompiles on x's dim 0 (90.00 s" in p.how and "30.00 s as a recompile" in p.how


def test_a_recompile_that_made_the_dim_dynamic_counts_as_its_static_graph():
    """A Lightning fit with automatic dynamic shapes (the default): the partial last
    batch recompiles once, and that recompile compiles the dynamic graph, its
    backward inside it (tests/programs/lightning_partial_batch.py, as recorded).
    Its 51.06 s are already a dynamic compile's: the first compile, made dynamic,
    adds that graph's static work × (premium - 1), 51.06 / 2 × 1, not 51.06 s."""
    reason = "0/0: tensor 'batch[0]' size mismatch at index 0. expected 16, actual 6"
    events: list[ev.Event] = [
        *program_started(),
        compile_finished("0/0", 1000.0, 36.11),
        _backward("0/0", 1040.0, 26.44),
        ev.RecompileTriggered(run_id="pid7", compile_id="0/1", reason=reason, t=1100.0),
        ev.DimMadeDynamic(
            run_id="pid7", compile_id="0/1", symbol="s71", source="L['batch'][0].size()[0]"
        ),
        compile_finished("0/1", 1100.0, 51.06, reason=reason),
    ]
    s = Session.from_events(events)
    (item,) = [i for i in far.advise(s, s.runs["pid7"]).items if i.rule == "mark-dynamic"]
    assert item.title == "mark batch[0]'s dim 0 dynamic"
    p = item.predicted
    assert p is not None and p.before_s == pytest.approx(36.11 + 26.44 + 51.06)
    assert p.saving_s == pytest.approx(51.06 - 51.06 / 2)
    assert "÷ the premium where that recompile made the dim dynamic" in p.how


def test_program_advice_in_the_console_and_the_json():
    s = session()
    console = make_console(width=200, record=True)
    console.print(program_summary(s))
    out = console.export_text()
    assert "1. mark x's dim 1 dynamic" in out and "2. graph break at" in out
    assert out.count("cannot be tried for you: dlcprof re-runs your program only with") == 2
    advice = json.loads(dumps_report(build_report(build_model(s))))["advice"]
    assert advice["run_id"] == "pid7"
    assert [i["rule"] for i in advice["items"]] == ["mark-dynamic", "graph-break"]
    assert {i["try_why"] for i in advice["items"]} == {fat.PROGRAM_TRY_WHY}
    assert advice["hidden"] == [far.PROGRAM_UNCHECKED]


def test_try_on_an_attached_session_refuses_a_code_change_in_one_line(tmp_path):
    path = tmp_path / "s.json"
    path.write_text(dumps_report(build_report(build_model(session()))))
    p = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "try", str(path), "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode == 2
    assert p.stderr.strip().count("\n") == 0
    assert "advice 1 (mark x's dim 1 dynamic) cannot be tried for you" in p.stderr
    assert "re-runs your program only with a graph break's setting" in p.stderr


def test_an_attached_program_keeps_a_break_setting_to_try():
    """An .item() break's hatch is a setting: `dlcprof try` can make it for the
    program (tests/e2e/test_graph_break_ids.py runs it); the other items cannot."""
    s = session()
    s.apply(
        ev.GraphBroken(
            run_id="pid7",
            compile_id="0/0",
            reason="Unsupported Tensor.item() call with capture_scalar_outputs=False",
            location="/home/u/train.py:14",
            gb_id="GB0124",
            t=1003.0,
        )
    )
    a = far.advise(s, s.runs["pid7"])
    tried = {i.options.get("hatch") for i in a.items if i.options}
    assert tried == {"capture_scalar_outputs"}
    assert all(i.try_why == fat.PROGRAM_TRY_WHY for i in a.items if not i.options)
    # Logs `dlcprof import` read have no command dlcprof started: nothing to run again.
    s.imported = ev.TraceImported(sources=["logs"], files=1, bytes=1, processes=1, kept=[])
    assert not any(i.options for i in far.advise(s, s.runs["pid7"]).items)


def _recompiled_at(
    called_at: str,
    through: str,
    frame_file: str = "/home/u/train.py",
    reason: str = SIZE,
    call: str = "",
) -> Session:
    """A process whose frame 0 (in ``frame_file``) recompiled once on x's dim 1,
    reached from the program's ``called_at`` (its ``call``; through a library's
    ``through``)."""
    return Session.from_events(
        [
            *program_started(),
            compile_finished("0/0", 1001.0, 3.0, frame=("forward", frame_file, 5)),
            ev.RecompileTriggered(
                run_id="pid7",
                compile_id="0/1",
                reason=reason,
                called_at=called_at,
                through=through,
                call=call,
                t=1010.0,
            ),
            compile_finished("0/1", 1010.0, 4.0, reason=reason),
        ]
    )


def test_a_recompile_is_advised_at_the_programs_own_call():
    """Issue 41, 4: the item names the user's call that reached the compiled code."""
    s = _recompiled_at("/home/u/train.py:30", "", call="model(batch['ids'])")
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    # The snippet names what the call passed, not the compiled code's own x.
    snippet = "torch._dynamo.mark_dynamic(batch['ids'], 1)"
    assert dyn.where == "/home/u/train.py:30" and dyn.snippet == snippet
    assert dyn.change.startswith(f"call {snippet} before the compiled call at /home/u/train.py:30")
    # The call not known (an older session, Python 3.10): the compiled code's name
    # in words, no snippet that may not run at the program's line.
    s = _recompiled_at("/home/u/train.py:30", "")
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    assert dyn.snippet == "" and "as the compiled code's x dynamic" in dyn.change
    # The ids' length is the mask's: torch made both dynamic in the recompile, and
    # both are marked (one alone is specialized to the other's size: torch raises).
    kw = "tensor 'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 9"
    s = _recompiled_at("/home/u/train.py:30", "", reason=kw, call="model(**enc)")
    for source in ("L['kwargs']['attention_mask'].size()[1]", "L['kwargs']['input_ids'].size()[1]"):
        s.apply(ev.DimMadeDynamic(run_id="pid7", compile_id="0/1", symbol="s0", source=source))
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    assert dyn.snippet.splitlines() == [
        "torch._dynamo.mark_dynamic(enc['input_ids'], 1)",
        "torch._dynamo.mark_dynamic(enc['attention_mask'], 1)",
    ]
    assert "together: input_ids dim 1, attention_mask dim 1" in dyn.evidence[-1]
    # One tensor passed as two arguments and on to a frame after a graph break
    # (GPT-2's ``model(input_ids=ids, labels=ids)``): one dim, marked once.
    s = _recompiled_at(
        "/home/u/train.py:30", "", reason=kw, call="model(input_ids=ids, labels=ids)"
    )
    after = "tensor 'input_ids' size mismatch at index 1. expected 5, actual 9"
    for e in (
        ev.DimMadeDynamic(
            run_id="pid7",
            compile_id="0/1",
            symbol="s0",
            source="L['kwargs']['input_ids'].size()[1]",
        ),
        compile_finished("2/0", 1003.0, 1.0, frame=("forward", "/v/modeling_gpt2.py", 9)),
        ev.RecompileTriggered(
            run_id="pid7",
            compile_id="2/1",
            reason=after,
            called_at="/home/u/train.py:30",
            call="model(input_ids=ids, labels=ids)",
            t=1020.0,
        ),
        compile_finished("2/1", 1020.0, 4.0, reason=after),
        ev.DimMadeDynamic(
            run_id="pid7", compile_id="2/1", symbol="s1", source="L['input_ids'].size()[1]"
        ),
    ):
        s.apply(e)
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    assert dyn.snippet == "torch._dynamo.mark_dynamic(ids, 1)"
    assert dyn.change.startswith(f"call {dyn.snippet} before the compiled call")
    assert not any("together" in line for line in dyn.evidence)
    # `dlcprof try` still names both frames' sources: torch's names differ.
    assert dyn.options == {"dynamic_sources": "L['kwargs']['input_ids']:1,L['input_ids']:1"}
    # A new tensor at each call: bound to a name first, which the snippet cannot do.
    s = _recompiled_at("/home/u/train.py:30", "", call="model(torch.randn(4, n))")
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    assert dyn.snippet == "" and "passes torch.randn(4, n) as the compiled code's x" in dyn.change
    # Called by a framework that pads: its own option first, the library named as
    # evidence only, and no snippet naming the compiled code's own variable.
    hf = "/v/lib/python3.11/site-packages/transformers/models/gpt2/modeling_gpt2.py"
    s = _recompiled_at("/home/u/train.py:40", "/v/site-packages/accelerate/ops.py:9", hf)
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    assert dyn.where == "/home/u/train.py:40" and dyn.snippet == ""
    assert dyn.change.startswith("pad_to_multiple_of where the batch is padded: the data collator")
    assert "before your call at /home/u/train.py:40" in dyn.change
    assert "accelerate" not in dyn.change and "accelerate/ops.py:9" in dyn.evidence[-1]
    assert dyn.cost.startswith("padding computes tokens for nothing")
    # A partial last batch (dim 0): the trainer's drop_last, not padding.
    last = "tensor 'x' size mismatch at index 0. expected 4, actual 2"
    s = _recompiled_at("/home/u/train.py:40", "/v/site-packages/accelerate/ops.py:9", hf, last)
    (dyn,) = [i for i in far.advise(s, s.run("pid7")).items if i.rule == "mark-dynamic"]
    assert dyn.change.startswith("TrainingArguments(dataloader_drop_last=True)")
    assert dyn.cost.startswith("the partial last batch's examples are left out")
