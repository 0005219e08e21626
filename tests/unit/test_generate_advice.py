"""Advice on a Hugging Face ``generate()`` program: its compiled forward
recompiles on the prompt's length and on its KV cache's, sizes no data collator
has a part in; and its first recompile, from the prompt to one-token steps, is
one no change removes (torch specializes a size of 1).

Real data: tests/fixtures/programs/hf_generate.jsonl, tests/programs/hf_generate.py
under ``dlcprof run`` (scripts/record_program_fixture.py): 5 prompts, 4 compiles."""

from __future__ import annotations

import pytest
from helpers.attached_run import line_of
from helpers.paths import PROGRAMS
from helpers.program import compile_finished, program_started
from helpers.recorded import load_fixture

from dlcprof import events as ev
from dlcprof.figures.advice import compile_rules as cr
from dlcprof.figures.job import program as fprog
from dlcprof.session import Session

PROGRAM = PROGRAMS / "hf_generate.py"
GENERATE = "/v/lib/python3.11/site-packages/transformers/generation/utils.py:3239"


def test_the_recompile_from_the_prompt_to_one_token_steps_is_not_counted():
    session = Session.from_events(load_fixture("programs/hf_generate"))
    (run,) = session.runs.values()
    first, cache, prompt = (rc.reason for rc in run.recompiles)
    assert "'kwargs['input_ids']' size mismatch at index 1. expected 5, actual 1" in first
    assert cr.avoidable_sizes(first) == {}
    assert list(cr.avoidable_sizes(cache)) == [("kwargs['cache'].layers[0].keys", 2)]
    # The newest entry the 9-token prompt tried was a one-token step's; the 5-token
    # prompt's behind it is the one a dynamic dim would have served.
    assert prompt.startswith(
        "0/2: tensor 'kwargs['input_ids']' size mismatch at index 1. expected 1"
    )
    assert cr.avoidable_sizes(prompt) == {
        ("input_ids", 1): "0/0: tensor 'kwargs['input_ids']' size mismatch at index 1. "
        "expected 5, actual 9"
    }
    item = cr.mark_dynamic_recompiles(session, run, 1000)
    assert item is not None and item.predicted is not None
    assert item.evidence[0].startswith("1 recompile on input_ids dim 1 (")
    assert item.evidence[0].endswith("expected 5, actual 9")
    assert any("called by transformers/generation/utils.py" in e for e in item.evidence)
    # The prompt's length is its positions' too: torch made both dynamic.
    assert any("together: input_ids dim 1, position_ids dim 1" in e for e in item.evidence)
    # A generate() call's prompts, not a data collator's batches.
    assert item.change.startswith("pad the prompts to a few lengths: tokenizer(")
    assert "collator" not in item.change and item.where.endswith(
        f"hf_generate.py:{line_of(PROGRAM, 'the user')}"
    )
    assert item.cost.startswith("padding computes tokens for nothing")
    assert "no longer happens;" in item.predicted.how


def test_the_compiled_forward_is_said_to_have_compiled():
    """transformers wraps the forward (``functools.wraps``): Dynamo compiles the
    wrapper's frame, and the call was once said to have compiled nothing."""
    (run,) = Session.from_events(load_fixture("programs/hf_generate")).runs.values()
    (line,) = fprog.compiled_with(run)
    assert line.endswith("backend=aot_eager") and len(run.compiles) == 4


def _generated(reason: str) -> Session:
    """A process whose frame 0 recompiled once, reached through generate()."""
    return Session.from_events(
        [
            *program_started(),
            compile_finished("0/0", 1001.0, 3.0),
            ev.RecompileTriggered(
                run_id="pid7",
                compile_id="0/1",
                reason=reason,
                called_at="/home/u/chat.py:20",
                through=GENERATE,
                t=1010.0,
            ),
            compile_finished("0/1", 1010.0, 4.0, reason=reason),
        ]
    )


def test_a_kv_caches_length_gets_a_static_cache_and_a_static_prediction():
    cache = (
        "0/0: tensor 'kwargs['past_key_values'][0]' size mismatch at index 2. expected 5, actual 6"
    )
    s = _generated(cache)
    item = cr.mark_dynamic_recompiles(s, s.run("pid7"), 1000)
    assert item is not None and item.predicted is not None
    assert item.change.startswith('a static KV cache: generate(..., cache_implementation="static"')
    assert item.cost.startswith("the cache holds N positions")
    # One cache size: the recompile goes and the compile stays static (no premium).
    assert (item.predicted.before_s, item.predicted.after_s) == pytest.approx((7.0, 3.0))
    assert item.predicted.how.endswith("the compiles stay static, each costing what it did")


def test_the_cache_positions_are_a_prompts_length_not_the_caches():
    s = _generated(
        "0/0: tensor 'kwargs['cache_position']' size mismatch at index 0. expected 5, actual 9"
    )
    item = cr.mark_dynamic_recompiles(s, s.run("pid7"), 1000)
    assert item is not None and item.change.startswith("pad the prompts to a few lengths")


def test_generates_batch_of_prompts_gets_no_framework_option():
    s = _generated(
        "0/0: tensor 'kwargs['input_ids']' size mismatch at index 0. expected 4, actual 3"
    )
    item = cr.mark_dynamic_recompiles(s, s.run("pid7"), 1000)
    assert item is not None
    assert item.change.startswith("if the tensor is one your code passes in, mark its dim 0")
    assert item.title == "mark input_ids's dim 0 dynamic"


def test_a_size_of_0_or_1_on_either_side_is_no_dynamic_dims_to_make():
    assert cr.avoidable_sizes("tensor 'x' size mismatch at index 0. expected 1, actual 4") == {}
    assert cr.avoidable_sizes("tensor 'x' size mismatch at index 0. expected 4, actual 0") == {}
    # Sizes torch did not give: counted, as before.
    assert list(cr.avoidable_sizes("tensor 'x' size mismatch at index 3")) == [("x", 3)]
