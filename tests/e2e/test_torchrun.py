"""Real ``dlcprof run -- torchrun --standalone --nproc-per-node 2`` jobs of
tests/programs, 2 ranks on gloo: one job whose DDPOptimizer splits the model
at its buckets (each split shown per rank, alike on both: no alarm) and whose
rank 1 alone recompiles (under ``dlcprof check``, which follows a job as run
does, then fails the rank over its recompile budget); a DDP model that
captures nothing (``slow``:
tests/unit/test_ddp.py reads its frames and words its hint). (A job's faults:
test_rank_faults.py; nodes merged into one job: test_merge.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS
from helpers.proc import failure

from dlcprof.figures import outcome as fout
from dlcprof.figures.job.rank_runs import forward_compiles
from dlcprof.report.load import load_session

# The module's real run is shared by its tests: one process runs them all.
pytestmark = pytest.mark.xdist_group("test_torchrun")

DDP_TRAIN = PROGRAMS / "ddp_train.py"
MIB = 1024 * 1024
# Linear(512, 512): weight and bias, 4-byte floats, as DDPOptimizer counts them.
BUCKET = (512 * 512 + 512) * 4
# Several DDP buckets: DDPOptimizer splits the model in 4 (rank 1 diverges at step 2).
SPLIT = ("--width", "512", "--depth", "4", "--bucket-cap-mb", "1", "--steps", "3")


def trace_compile_ids(folder: Path, rank: int) -> set[str]:
    """Forward compile ids in rank ``rank``'s own TORCH_TRACE file (torch names it
    dedicated_log_torch_trace_rank_N_*.log once the process group is up)."""
    (path,) = folder.glob(f"dedicated_log_torch_trace_rank_{rank}_*.log")
    ids = set()
    for line in path.read_text().splitlines():
        if not line.startswith("\t") and "] {" in line:
            record = json.loads(line.split("] ", 1)[1])
            if "compilation_metrics" in record:
                ids.add(f"{record['frame_id']}/{record['frame_compile_id']}")
    return ids


def dlcprof_torchrun(
    out: Path,
    program: Path,
    *options: str,
    env: dict[str, str] | None = None,
    verb: str = "run",
) -> subprocess.CompletedProcess[str]:
    """``dlcprof VERB --json OUT -- torchrun --standalone --nproc-per-node 2
    PROGRAM OPTIONS`` (the options before a ``--`` go to dlcprof)."""
    ours = list(options[: options.index("--")]) if "--" in options else []
    theirs = list(options[options.index("--") + 1 :]) if "--" in options else list(options)
    argv = [sys.executable, "-m", "dlcprof.cli", verb, "--json", str(out), *ours, "--"]
    argv += [str(Path(sys.executable).parent / "torchrun"), "--standalone"]
    argv += ["--nproc-per-node", "2", str(program), *theirs]
    return subprocess.run(argv, env=env, capture_output=True, text=True, timeout=900)


@pytest.fixture(scope="module")
def diverged_job(tmp_path_factory) -> tuple[subprocess.CompletedProcess[str], Path, Path, Path]:
    """``dlcprof check --max-recompiles 0`` of a job whose model DDPOptimizer
    splits in 4 at its buckets and whose rank 1 alone recompiles, TORCH_TRACE
    set for it too: the process, the JSON, torch's logs, the report (one job
    for both: each torchrun job imports torch three times)."""
    tmp = tmp_path_factory.mktemp("diverged")
    out, trace, folder = tmp / "s.json", tmp / "trace", tmp / "report"
    env = {**os.environ, "TORCH_TRACE": str(trace), "GITHUB_ACTIONS": ""}
    proc = dlcprof_torchrun(
        out,
        DDP_TRAIN,
        "--max-recompiles",
        "0",
        "--report",
        str(folder),
        "--",
        "--diverge-rank",
        "1",
        *SPLIT,
        env=env,
        verb="check",
    )
    return proc, out, trace, folder


def test_torchrun_two_ranks_one_diverges(diverged_job):
    """The job as ``dlcprof run`` shows it (check follows it alike, then judges)."""
    proc, out, trace, folder = diverged_job
    assert out.exists(), failure(proc.stderr)
    report = json.loads(out.read_text())
    rows = report["ranks"]["rows"]
    assert [r["rank"] for r in rows] == [0, 1]
    assert {r["cache_dir"] for r in rows} == {os.environ["TORCHINDUCTOR_CACHE_DIR"]}
    alarms = [d for d in report["ranks"]["divergences"] if d["alarm"]]
    recompiled = [d for d in alarms if d["check"] == "compile_ids" and d["rank"] == 1]
    # First (the banner's), the user's frame (forward at ddp_train.py:24) and its
    # guard failure; torch's wrapper frame around it, if recompiled too, after.
    first = alarms[0]
    assert first in recompiled, alarms
    assert f"forward at {DDP_TRAIN}:" in first["headline"], alarms
    assert "tensor 'x' size mismatch at index 0. expected 4, actual 6" in first["headline"]
    assert all(d["rank"] == 1 for d in alarms)
    # What both ranks did alike (the split, the compiles before step 2) raises none.
    warned = [ln for ln in proc.stderr.splitlines() if ln.startswith("⚠")]
    assert warned and all("rank 1" in ln for ln in warned), warned
    # Each rank's compiles are those of its own TORCH_TRACE.
    session = load_session(out)
    for row in rows:
        run = session.runs[row["run_id"]]
        ids = {c.compile_id for c in forward_compiles(run)}
        assert ids == trace_compile_ids(trace, row["rank"])
        assert row["compiles"] == len(ids)
    assert rows[1]["recompiles"] > rows[0]["recompiles"] == 0
    assert report["program"]["returncode"] == 0
    # Live, on stderr, the moment it appeared; then the table.
    live = proc.stderr.index("⚠ rank 1 recompiled")
    assert live < proc.stderr.index("■ the program exited") < proc.stderr.index("Ranks")
    assert "## Ranks" in (folder / "report.md").read_text()
    # Both ranks on this host build kernels on Inductor's default pool, sized to
    # every core as if each were alone: 2 × cores > cores, said and advised.
    cores = len(os.sched_getaffinity(0))
    line = f"2 processes × {min(32, cores)} compile workers (Inductor's compile_threads)"
    assert any(line in n and f"on {cores} core" in n for n in report["ranks"]["notes"]), report[
        "ranks"
    ]["notes"]
    items = [i for i in report["advice"]["items"] if i["rule"] == "compile-workers"]
    assert items and f"TORCHINDUCTOR_COMPILE_THREADS={max(1, cores // 2)}" in items[0]["change"]


def test_the_rank_over_its_recompile_budget_fails_the_check_and_is_named(diverged_job):
    proc = diverged_job[0]
    assert proc.returncode == 1, failure(proc.stderr)
    bad = [ln for ln in proc.stderr.splitlines() if ln.startswith("✗")]
    assert bad and all(ln.endswith(", rank 1)]") for ln in bad), bad
    assert "recompile:" in bad[0] and "expected 4, actual 6" in bad[0]
    assert "2 processes judged" in proc.stderr


def test_a_real_split_is_shown_per_rank_with_its_pieces_and_buckets(diverged_job):
    proc, out, _, _ = diverged_job
    report = json.loads(out.read_text())
    runs = {r["process"]["rank"]: r for r in report["runs"]}
    assert sorted(runs) == [0, 1]
    for rank, r in runs.items():
        ddp = r["ddp"]
        assert (ddp["optimize_ddp"], ddp["compiled_autograd"]) == ("ddp_optimizer", False)
        # Rank 1's recompile (step 2) is split in 4 again, its batch dynamic: each
        # piece's backward compiled with the forward (tests/unit/test_ddp.py).
        split, *again = splits = ddp["splits"]
        assert [(s["pieces"], s["forward_graphs"], s["backward_graphs"]) for s in again] == (
            [] if rank == 0 else [(4, 4, 4)]
        ), splits
        assert split["pieces"] == 4 and split["piece_names"][-1] == "submod_3"
        assert (split["forward_graphs"], split["backward_graphs"]) == (4, 4)
        assert split["bucket_cap_bytes"] == MIB and split["bucket_bytes"] == [BUCKET] * 4
        assert "4 forward + 4 backward Inductor graphs, while Dynamo counts 1" in split["line"]
        assert ddp["inductor_graphs"] == 8 * len(splits)
        # Dynamo's graph of the model: a forward compile with ops each time, split in 4.
        graphs = [c for c in r["compiles"] if c["graph_op_count"] and not c["is_backward"]]
        assert [c["compile_id"] for c in graphs] == [s["compile_id"] for s in splits]
    assert proc.stderr.count("was split into 4 pieces at DDP bucket boundaries") >= 4


# Its logic, in the default run: tests/unit/test_ddp.py's frames without a graph
# (test_a_frame_dynamo_skipped_without_a_graph_is_no_graph) and its DDP hint
# (test_a_ddp_wrapped_model_that_compiled_nothing_gets_the_ddp_hint).
@pytest.mark.slow
def test_a_ddp_model_that_captured_nothing_says_so_loudly_per_rank(tmp_path):
    out = tmp_path / "s.json"
    proc = dlcprof_torchrun(out, PROGRAMS / "ddp_nothing.py")
    assert proc.returncode == 0, failure(proc.stderr)
    report, stdout, stderr = json.loads(out.read_text()), proc.stdout, proc.stderr
    assert "rank 0 unique_graphs 0" in stdout and "rank 1 unique_graphs 0" in stdout
    assert sorted(r["process"]["rank"] for r in report["runs"]) == [0, 1]
    for r in report["runs"]:
        nothing = r["nothing_compiled"]
        assert nothing is not None and nothing["frames"] >= 1
        assert f"hint: {fout.DDP_HINT}" in nothing["lines"]
        assert r["ddp"]["splits"] == []
    assert stderr.count("NOTHING COMPILED") >= 4  # each rank: live, then its table
