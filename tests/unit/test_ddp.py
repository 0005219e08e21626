"""DDPOptimizer's split, replayed from a real rank's structured trace, and the
ends of an attached program's processes (figures/job/ddp.py, figures/outcome.py).

tests/fixtures/trace/ddp_split.jsonl: rank 0 of `torchrun --nproc-per-node 2
tests/programs/ddp_train.py --width 512 --depth 4 --bucket-cap-mb 1 --steps 2`
on torch 2.13 (TORCH_TRACE, the records the dispatcher reads).
tests/fixtures/trace/ddp_split_recompile.jsonl: rank 1's records of its recompile
4/1 in the same job with ``--diverge-rank 1 --steps 3`` (a batch of 6 at step 2:
Dynamo recompiles with a dynamic batch), payloads read only for kernels or a
cache lookup's key left out.
tests/fixtures/programs/ddp_eager_rank.jsonl: what dlcprof saw of `dlcprof run --
torchrun --nproc-per-node 2 tests/programs/ddp_train.py --eager-rank 1 --steps 2`
(scripts/record_program_fixture.py). The real jobs: tests/e2e/test_torchrun.py,
tests/e2e/test_rank_faults.py.
"""

from __future__ import annotations

import json
import subprocess
import sys
from typing import Any

from helpers.eager_rank import eager_and_compiled
from helpers.paths import FIXTURES
from helpers.program import compile_finished, process_attached, program_started
from helpers.recorded import load_fixture
from rich.console import Console

from dlcprof import events as ev
from dlcprof.attach_contract import BOOTSTRAP_DIR
from dlcprof.console import attach_line, run_summary
from dlcprof.figures import outcome as fout
from dlcprof.figures.job import ddp as fddp
from dlcprof.report.markdown import render_markdown
from dlcprof.report.model import build as build_model
from dlcprof.report.schema import build_report
from dlcprof.session import Session
from dlcprof.trace_records.dispatcher import DDP_SPLIT, TraceDispatcher
from dlcprof.trace_records.payloads import record_name
from dlcprof.worker.emit import ListEmitter

TRACE = FIXTURES / "trace" / "ddp_split.jsonl"
RECOMPILE = FIXTURES / "trace" / "ddp_split_recompile.jsonl"
MIB = 1024 * 1024
# Linear(512, 512): weight and bias, 4-byte floats, as DDPOptimizer counts them.
BUCKET = (512 * 512 + 512) * 4


def replayed(buckets: bool = True, trace=TRACE) -> list[ev.Event]:
    sink = ListEmitter()
    d = TraceDispatcher(sink, "pid7")
    for line in trace.read_text().splitlines():
        rec = json.loads(line)
        if buckets and record_name(rec["metadata"]) == DDP_SPLIT:
            # What probes/ddp.py hands over when DDPOptimizer prints its buckets.
            d.ddp_buckets(MIB, [BUCKET] * 4, [[f"layers_{i}_weight"] for i in range(4)])
        d.feed(rec["metadata"], rec["payload"], rec["thread"])
    return sink.events


def test_a_real_split_is_one_event_with_its_pieces_before_the_compile_it_split():
    events = replayed()
    splits = [e for e in events if isinstance(e, ev.GraphSplitForDDP)]
    assert len(splits) == 1
    s = splits[0]
    assert (s.compile_id, s.pieces) == ("4/0", [f"submod_{i}" for i in range(4)])
    assert s.forward_graphs == 4 and s.bucket_cap_bytes == MIB and s.bucket_bytes == [BUCKET] * 4
    after = events[events.index(s) + 1]
    assert isinstance(after, ev.CompileFinished) and after.compile_id == "4/0"
    assert not after.is_backward and after.graph_op_count == 8


def test_the_split_in_every_view_counts_pieces_and_sums_the_backward():
    session = Session.from_events([*program_started(rank=0)[1:], *replayed()])
    run = session.run("pid7")
    backward = run.compiles[ev.backward_id("4/0")]
    assert len(backward.records) == 4  # one per piece, all under 4/0
    assert backward.wall_s == sum(r.wall_s for r in backward.records)
    assert backward.wall_s > backward.record.wall_s  # no longer the last piece alone
    (split,) = fddp.splits(run)
    assert (split.pieces, split.backward_graphs) == (4, 4)
    assert fddp.graphs(run) == 8  # 4 + 4 Inductor graphs; Dynamo counts 1
    line = split.line
    assert "graph 4/0 was split into 4 pieces at DDP bucket boundaries" in line
    assert "bucket_cap_mb 1: buckets of 1, 1, 1, 1 MiB" in line
    assert "4 forward + 4 backward Inductor graphs, while Dynamo counts 1 graph" in line

    console = Console(width=400, record=True)
    console.print(run_summary(run, session))
    shown = console.export_text()
    assert line in shown and "DDP compile settings" not in shown  # not read: no probe here
    model = build_model(session)
    (r,) = build_report(model)["runs"]
    assert r["ddp"]["splits"][0]["pieces"] == 4 and r["ddp"]["inductor_graphs"] == 8
    assert r["ddp"]["splits"][0]["bucket_bytes"] == [BUCKET] * 4
    assert line in render_markdown(model)


def test_a_backward_compiled_with_its_forward_is_counted_as_the_backward():
    """A recompile with a dynamic batch: AOTAutograd compiles each piece's
    backward inside the forward compile (Inductor's ``inductor_compile`` ends
    with ``is_backward`` true there), so no backward record of its own follows.
    Its 8 Inductor graphs are 4 forward and 4 backward, the backward compiled."""
    ends = [json.loads(line) for line in RECOMPILE.read_text().splitlines()]
    phases = [json.loads(e["payload"]) for e in ends if "chromium_event" in e["metadata"]]
    inductor = [
        p["args"]["is_backward"]
        for p in phases
        if p["name"] == "inductor_compile" and p["ph"] == "E"
    ]
    assert inductor == [False, True] * 4
    session = Session.from_events([*program_started(rank=1)[1:], *replayed(trace=RECOMPILE)])
    run = session.run("pid7")
    assert ev.backward_id("4/1") not in run.compiles
    (split,) = fddp.splits(run)
    assert (split.event.compile_id, split.pieces) == ("4/1", 4)
    assert (split.event.forward_graphs, split.backward_graphs) == (4, 4)
    assert fddp.graphs(run) == 8
    assert "4 forward + 4 backward Inductor graphs (the backward's compiled with the forward)" in (
        split.line
    )


def test_without_the_bucket_hook_the_split_says_why_buckets_are_missing():
    session = Session.from_events(replayed(buckets=False))
    (split,) = fddp.splits(session.run("pid7"))
    assert "n/a (DDPOptimizer's buckets not readable on this torch)" in split.line
    assert split.pieces == 4


def test_settings_line_and_unavailable():
    events = [*program_started(rank=1)[1:]]
    session = Session.from_events(events)
    run = session.run("pid7")
    run.process.world_size = 2
    assert fddp.lines(run) == []  # no settings read yet: nothing to say
    session.apply(
        ev.CompileSettingsRead(run_id="pid7", optimize_ddp="ddp_optimizer", compiled_autograd=False)
    )
    # No wrapper seen (a rank need not wrap its model): no wrapper named.
    assert fddp.lines(run) == [
        "distributed compile settings: optimize_ddp ddp_optimizer, compiled autograd off"
    ]
    # Issue 41, 6: FSDP2 is named as FSDP2, never as DDP.
    session.apply(
        ev.CompileSettingsRead(
            run_id="pid7", optimize_ddp="ddp_optimizer", compiled_autograd=False, wrappers=["FSDP2"]
        )
    )
    # DDPOptimizer splits only DDP's graphs: not said to act on FSDP2's.
    assert fddp.lines(run)[0] == (
        "FSDP2 compile settings: optimize_ddp ddp_optimizer (it splits DDP's graphs only: "
        "not this process's), compiled autograd off"
    )
    session.apply(
        ev.CompileSettingsRead(
            run_id="pid7", optimize_ddp=None, compiled_autograd=None, unavailable="gone"
        )
    )
    assert fddp.settings_line(run) == "optimize_ddp n/a (gone), compiled autograd n/a (gone)"


def test_a_frame_dynamo_skipped_without_a_graph_is_no_graph():
    """torch 2.13 writes graph_op_count null for a frame it skipped (DDP's resume
    frame): a process whose frames all did so compiled nothing."""
    sink = ListEmitter()
    d = TraceDispatcher(sink, "pid7")
    for i, ops in enumerate((0, None)):
        d._metrics({"compile_id": f"{i}/0", "graph_op_count": ops}, False, {}, f"{i}/0")
    e = d.nothing_compiled()
    assert e is not None and e.frames == 2
    d._metrics({"compile_id": "2/0"}, False, {}, "2/0")  # no such field: an older torch
    assert d.nothing_compiled() is None


def test_a_ddp_wrapped_model_that_compiled_nothing_gets_the_ddp_hint():
    broke = ev.GraphBroken(
        run_id="pid7",
        compile_id="0/0",
        reason="Unsupported method call",
        location="/w/ddp_nothing.py:16",
        detail="/venv/torch/nn/parallel/distributed.py:1757",
    )
    nothing = ev.NothingCompiled(run_id="pid7", frames=4, fail_type=None, fail_reason=None)
    session = Session.from_events([*program_started(rank=0), broke, nothing])
    run = session.run("pid7")
    assert fout.hint_lines(nothing, run) == [f"hint: {fout.DDP_HINT}"]
    assert fout.hint_lines(nothing) == []
    assert "NOTHING COMPILED" in attach_line(nothing, session).plain


def test_the_ends_of_ranks_crashed_ended_never_compiled():
    def rank(pid: int, r: int) -> ev.ProcessAttached:
        return process_attached(pid, argv=["ddp_train.py"], rank=r, world_size=3)

    events: list[Any] = [  # one changed below, by its field
        ev.ProgramStarted(argv=["torchrun", "ddp_train.py"], cwd="/", pid=1),
        rank(10, 0),
        rank(11, 1),
        rank(12, 2),
        compile_finished("0/0", 1.0, 1.0),
        ev.ErrorRaised(run_id="pid11", stage="program", message="uncaught RuntimeError: boom"),
        ev.RunFinished(run_id="pid11", status="crashed", wall_s=3.0),
        ev.RunFinished(run_id="pid10", status="ended", wall_s=3.5),
        ev.RunFinished(run_id="pid12", status="ok", wall_s=3.5),
    ]
    events[4].run_id = "pid10"
    session = Session.from_events(events)
    r0, r1, r2 = (session.run(f"pid{p}") for p in (10, 11, 12))
    assert fout.end_line(r1, session) == "crashed: uncaught RuntimeError: boom"
    assert fout.end_line(r0, session) == (
        f"ended: {fout.ENDED_WHY}; ddp_train.py (pid 11, rank 1) crashed first, "
        "and torchrun stops the other ranks when one fails"
    )
    assert fout.end_line(r2, session) is None
    assert fout.status(r2) == fout.NEVER_COMPILED and fout.status(r0) == "ended"
    assert "never compiled" in attach_line(events[-1], session).plain


def test_a_recorded_rank_that_never_compiled_is_shown_as_such():
    """The job tests/e2e/test_rank_faults.py runs (slow): rank 1 steps eagerly."""
    events = load_fixture("programs/ddp_eager_rank")
    session = Session.from_events(events)
    eager, _ = eager_and_compiled(session)
    (end,) = [e for e in events if isinstance(e, ev.RunFinished) and e.run_id == eager.run_id]
    assert attach_line(end, session).plain == f"■ {eager.name}: never compiled"
    assert session.program_exit is not None and session.program_exit.returncode == 0


def test_the_adapter_reads_torchs_settings_and_degrades_without_the_bucket_hook():
    import types

    import torch._dynamo  # noqa: F401 - the probe reads it once the program imported it

    from dlcprof.worker.probes import ProbeNotes
    from dlcprof.worker.probes import ddp as ddp_probe

    s = ddp_probe.settings("pid7")
    assert (s.optimize_ddp, s.compiled_autograd, s.unavailable) == ("ddp_optimizer", False, "")
    sink = ListEmitter()
    got: list[tuple] = []
    printed: list[int] = []
    module = types.SimpleNamespace(pretty_print_buckets=lambda b, cap: printed.append(cap))
    ddp_probe._wrap(module, lambda *b: got.append(b), ProbeNotes(sink, "pid7"))
    bucket = types.SimpleNamespace(size=BUCKET, params=["w0", "b0"])
    module.pretty_print_buckets([bucket, bucket], MIB)
    assert got == [(MIB, [BUCKET, BUCKET], [["w0", "b0"], ["w0", "b0"]])] and printed == [MIB]
    ddp_probe._wrap(types.SimpleNamespace(), lambda *a: got.append(a), ProbeNotes(sink, "pid7"))
    (note,) = [e for e in sink.events if isinstance(e, ev.ProbeUnavailable)]
    assert note.probe == "ddp" and "pretty_print_buckets not found" in note.reason


WRAPPERS_SCRIPT = """
import importlib.util, sys
import torch, torch.distributed as dist
# The attach bootstrap as a module (no DLCPROF_ATTACH_SOCKET: it installs nothing).
spec = importlib.util.spec_from_file_location("boot", sys.argv[2])
boot = importlib.util.module_from_spec(spec)
spec.loader.exec_module(boot)
from dlcprof.worker.probes import ddp
boot._mark_wrappers()  # at torch's import: DDP's module is loaded, FSDP's is not
dist.init_process_group("gloo", init_method=sys.argv[1], rank=0, world_size=1)
print(ddp.wrappers())
from torch.distributed.fsdp import FullyShardedDataParallel, fully_shard
fully_shard(torch.nn.Linear(2, 2))
print(ddp.wrappers())
torch.nn.parallel.DistributedDataParallel(torch.nn.Linear(2, 2))
print(ddp.wrappers())
FullyShardedDataParallel(torch.nn.Linear(2, 2), device_id=torch.device("cpu"))
print(ddp.wrappers())
print(sum(type(f).__name__ == "_WaitFor" for f in sys.meta_path))
dist.destroy_process_group()
"""


def test_the_wrappers_a_process_built_are_read_from_torch(tmp_path):
    """Issue 41, 6: FSDP2 (fully_shard), DDP and FSDP told apart on this torch,
    one process of a gloo group of 1; the constructors are marked in one place,
    the attach bootstrap, FSDP's as its module loads after torch's."""
    init = f"file://{tmp_path / 'store'}"
    p = subprocess.run(
        [sys.executable, "-c", WRAPPERS_SCRIPT, init, str(BOOTSTRAP_DIR / "sitecustomize.py")],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert p.returncode == 0, p.stderr[-2000:]
    assert p.stdout.splitlines() == [
        "[]",
        "['FSDP2']",
        "['DDP', 'FSDP2']",
        "['DDP', 'FSDP', 'FSDP2']",
        "0",  # the waiter for FSDP's module left once it marked it
    ]
