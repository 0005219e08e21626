"""torchtitan attached as its users run it (issue 41): 2 CPU ranks, FSDP2 over
gloo, each transformer block compiled with ``module.compile()`` and the loss
with ``torch.compile``, flex_attention compiled at torchtitan's import and
never called.

tests/fixtures/programs/torchtitan_fsdp2.jsonl: a real `dlcprof check
--max-graph-breaks 0 --max-cache-misses 0 --max-recompiles 0 --json F --
torchrun --nproc-per-node 2 examples/stacks/torchtitan_cpu.py --module
torchtitan_cpu --config tiny` on a new Inductor cache (torchtitan 0.3.0 in a
venv of its own, examples/stacks/README.md), turned into a recording by
``scripts/record_program_fixture.py torchtitan_fsdp2 --report``. What tlparse
said of the same run: benchmarks/RESULTS.md §23."""

from __future__ import annotations

from helpers.recorded import load_fixture

from dlcprof.figures import compile_cost as fc
from dlcprof.figures.check.budgets import Budgets, judge
from dlcprof.figures.check.findings import findings_of
from dlcprof.figures.job import ddp as fddp
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import program as fprog
from dlcprof.figures.job import ranks as franks
from dlcprof.figures.job.divergence import divergences
from dlcprof.session import Session

LAUNCHER = "/home/user/dlcprof/examples/stacks/torchtitan_cpu.py"


def _session() -> Session:
    return Session.from_events(load_fixture("programs/torchtitan_fsdp2"))


def test_fsdp2_is_named_as_such_on_every_rank():
    runs = fprog.attached_runs(_session())
    assert len(runs) == 2
    for run in runs:
        assert fddp.lines(run)[0].startswith("FSDP2 compile settings: ")


def test_each_compile_call_says_whether_it_compiled_and_who_made_it():
    """The per-block ``module.compile()`` compiled (frame 0/0, in the
    checkpoint wrapper's forward); flex_attention's and create_block_mask's
    calls, made as torchtitan is imported, compiled nothing, credited to the
    launcher's import line, flex_attention's with its options."""
    for run in fprog.attached_runs(_session()):
        lines = fprog.compiled_with(run)
        assert len(lines) == 4
        assert all(line.startswith(f"{LAUNCHER}:") for line in lines)
        idle = [line for line in lines if line.endswith("nothing compiled from it")]
        assert len(idle) == 2 and any(
            "options={'wrap_inductor_compiled_regions'" in i for i in idle
        )
        (blocks,) = [line for line in lines if "fullgraph=True" in line]
        assert "nothing compiled" not in blocks


def test_both_rank_tables_count_the_cache_from_one_record():
    """Issue 41, 7: the groups said 0/5 where the Ranks table said 0/3."""
    s = _session()
    rows = franks.rank_rows(s, divergences(s))
    assert [f"{r.cache_hits}/{r.cache_misses}" for r in rows] == ["0/4", "0/4"]
    (group,) = fgroups.rank_groups(s)
    assert fgroups.group_cells(group, 1)[5] == "0/4"


def test_compile_cost_names_the_launchers_call_and_the_blocks_paths():
    for run in fprog.attached_runs(_session()):
        cost = fc.compile_cost(run)
        (row,) = fc.function_rows(cost)
        (lib,) = cost.libraries
        assert {"torch", "torchtitan"} <= set(lib.packages) and row[0].startswith("library code: ")
        assert row[1] == f"reached from {LAUNCHER}:91"  # main(), as recorded
        paths = [m.module for m in cost.modules]
        assert "_checkpoint_wrapped_module.attention.rope" in paths
        assert not any("__dict__" in p for p in paths)


def test_a_cold_caches_misses_are_said_once_at_the_launchers_call():
    """The gate's cache misses are torchtitan's frames: one violation listing
    them, at the program's line whose call reached them (they had no place);
    a backward's miss says it is one."""
    for run in fprog.attached_runs(_session()):
        misses = findings_of(run)["cache_misses"]
        assert len(misses) == 4
        backward = [f for f in misses if f.compile_id.endswith(" (bwd)")]
        assert len(backward) == 2 and all(f.reason.startswith("the backward of ") for f in backward)
        _, violations = judge(run, Budgets(cache_misses=0), "")
        (v,) = violations
        assert v.where == f"{LAUNCHER}:91"  # main(), as recorded
        assert v.message.startswith(
            "4 cache misses only inside libraries, at no line of yours "
            "(your call that reached them)"
        )
