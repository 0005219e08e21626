"""A recompile on an input's size is advised at the program's
own call that reached the compiled code, never at a library's local variable.

- a plain-torch loop that calls a compiled module through a "library" module
  installed in a site-packages folder: the item names the loop's line;
- a loop that calls the compiled code itself, passing a dict's item to a
  ``*args`` wrapper (the compiled code's ``args[0]``): the snippet names the
  item, and pasted above the call it leaves one compile; ``dlcprof try`` makes
  the same change by torch's names of the dims, and measures one compile;
- (``slow``) tests/programs/hf_varlen.py, a real HF ``Trainer`` whose batches change
  length: the item offers the collator's ``pad_to_multiple_of`` and names the
  program's ``trainer.train()`` line;
- (``slow``) tests/programs/hf_generate.py, ``generate()`` on prompts of several
  lengths: the item offers generation's own option (padding the prompts, or a
  static KV cache), not a collator's, at the program's ``generate`` line, and
  counts no recompile from the prompt to one-token steps.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
import textwrap

import pytest
import torch
from helpers.attached_run import line_of, run_attached
from helpers.paths import PROGRAMS

from dlcprof import text
from dlcprof.attach_contract import DYNAMIC_UNSET
from dlcprof.figures.check.baseline import beyond_noise
from dlcprof.worker.remedies import BadRemedy, set_dynamic_sources

LIBRARY = """
def step(model, batch):
    return model(batch)
"""

LOOP = """
import sys

import torch

sys.path.insert(0, {site!r})
import steplib


class Head(torch.nn.Module):
    def forward(self, x):
        return (x * 2).sum(-1)


model = torch.compile(Head(), backend="eager")
for length in (4, 6, 8, 10):
    steplib.step(model, torch.ones(2, length))  # the user's call
print("done")
"""


# A wrapper that takes ``*args`` (as accelerate's and many others' do): the compiled
# code names the tensors ``args[0]`` and ``kwargs['mask']``, the program's line
# ``batch["pixels"]`` and ``batch["mask"]``; one's length is the other's.
DIRECT = """
import functools
import sys

import torch

compiles = []


def count(gm, example_inputs):
    compiles.append(gm)
    return gm.forward


def wrapped(fn):
    @functools.wraps(fn)
    def forward(*args, **kwargs):
        return fn(*args, **kwargs)

    return forward


head = torch.compile(wrapped(lambda x, mask: (x * mask).sum(-1)), backend=count)
for length in (4, 6, 8, 10):
    batch = {{"pixels": torch.ones(2, length), "mask": torch.ones(2, length)}}
    out = head(batch["pixels"], mask=batch["mask"]).sum()  # the user's call
print(f"compiles {{len(compiles)}}")
"""


hugging_face = pytest.mark.skipif(
    importlib.util.find_spec("transformers") is None, reason="transformers not installed"
)


def _advice(program, tmp_path) -> list[dict]:
    p, report = run_attached(program, tmp_path)
    assert p.returncode == 0, p.stderr[-2000:]
    return report["advice"]["items"]


def test_a_recompile_through_a_library_is_advised_at_the_users_call(tmp_path):
    site = tmp_path / "venv" / "lib" / "site-packages"
    site.mkdir(parents=True)
    (site / "steplib.py").write_text(textwrap.dedent(LIBRARY))
    loop = tmp_path / "loop.py"
    loop.write_text(LOOP.format(site=str(site)))
    (item,) = [i for i in _advice(loop, tmp_path) if i["rule"] == "mark-dynamic"]
    call = f"{loop}:{line_of(loop, 'the user')}"
    assert item["where"] == call and f"before your call at {call}" in item["change"]
    assert "dim 1 dynamic" in item["change"] and "steplib" not in item["change"]
    assert any("called by" in e and "steplib.py" in e for e in item["evidence"])


def test_the_snippet_names_what_the_call_passed_runs_there_and_try_measures_it(tmp_path):
    loop = tmp_path / "direct.py"
    loop.write_text(DIRECT.format())
    items = _advice(loop, tmp_path)
    (n,) = [k for k, i in enumerate(items, 1) if i["rule"] == "mark-dynamic"]
    item = items[n - 1]
    # `dlcprof try` makes the change without an edit: the dims by torch's names.
    assert item["options"] == {"dynamic_sources": "L['args'][0]:1,L['kwargs']['mask']:1"}
    tried = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "try", "r.json", str(n)],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path,
    )
    try:
        set_dynamic_sources(torch, item["options"]["dynamic_sources"], DYNAMIC_UNSET)
    except BadRemedy:  # a torch whose dynamic_sources marks every dim: refused, said
        assert tried.returncode != 0 and "cannot mark one dim of a tensor" in tried.stderr
    else:
        assert tried.returncode == 0, tried.stderr[-2000:]
        (done,) = [
            e
            for e in json.loads((tmp_path / "r.json").read_text())["events"]
            if e["type"] == "AdviceTried"
        ]
        assert (done["graphs_before"], done["graphs_after"]) == (2, 1)
        # One compile fewer is the change; its seconds are a speed figure, a
        # result only past what two runs of one command differ by.
        before, after = done["measured_before_s"], done["measured_after_s"]
        if beyond_noise(before, after):
            assert after < before
        else:
            assert text.NO_DIFFERENCE in tried.stdout
        assert "graphs 2 → 1" in tried.stdout
    finally:
        torch.compiler.config.dynamic_sources = ""
    at = line_of(loop, "the user")
    assert item["where"] == f"{loop}:{at}"
    # Both: torch made them dynamic together, and one marked alone raises.
    assert item["snippet"].splitlines() == [
        'torch._dynamo.mark_dynamic(batch["pixels"], 1)',
        'torch._dynamo.mark_dynamic(batch["mask"], 1)',
    ]
    assert item["title"] == 'mark batch["pixels"]\'s dim 1 dynamic'
    assert "tensor 'args[0]' size mismatch" in item["evidence"][0]
    # Pasted above the call, as the item says: it runs there, and one compile serves.
    lines = loop.read_text().splitlines()
    indent = lines[at - 1][: len(lines[at - 1]) - len(lines[at - 1].lstrip())]
    lines[at - 1 : at - 1] = [indent + line for line in item["snippet"].splitlines()]
    loop.write_text("\n".join(lines))
    p = subprocess.run([sys.executable, str(loop)], capture_output=True, text=True, timeout=300)
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.split() == ["compiles", "1"]


@hugging_face
@pytest.mark.slow
def test_an_hf_trainers_changing_lengths_get_the_collators_padding(tmp_path):
    program = PROGRAMS / "hf_varlen.py"
    (item,) = [i for i in _advice(program, tmp_path) if i["rule"] == "mark-dynamic"]
    assert item["title"] == "fewer sizes of input_ids's dim 1"
    assert item["change"].startswith("pad_to_multiple_of where the batch is padded: the data")
    call = f"{program}:{line_of(program, 'trainer.train()')}"
    assert item["where"] == call and call in item["change"]


@hugging_face
@pytest.mark.slow
def test_hf_generate_gets_generations_own_option_at_the_users_call(tmp_path):
    program = PROGRAMS / "hf_generate.py"
    (item,) = [i for i in _advice(program, tmp_path) if i["rule"] == "mark-dynamic"]
    # The prompt's length or the KV cache's, whichever cost more on this torch
    # (one recompile each on 2.13: their seconds decide).
    assert item["change"].startswith(("pad the prompts to a few lengths", "a static KV cache"))
    call = f"{program}:{line_of(program, 'the user')}"
    assert item["where"] == call and call in item["change"]
    # Never the prompt-to-one-token recompile (a size of 1: no change removes it).
    assert item["evidence"][0].startswith("1 recompile on ")
    assert "expected 1," not in item["evidence"][0] and "actual 1" not in item["evidence"][0]
