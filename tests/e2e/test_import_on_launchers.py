"""docs/import.md's examples, run on the launchers they name: each node's one
process ``dlcprof import --node-summary`` of that node's logs (its summary named
by the launcher's node number), then ``dlcprof merge`` of the shared folder: the
session ``dlcprof import`` of both nodes' logs gives. torchrun: two ``--nnodes 2
--nproc-per-node 1`` launchers on a loopback rendezvous. Slurm: ``srun
--ntasks-per-node=1`` on a two-node cluster of the test's own (skipped where Slurm
is not installed)."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from helpers import slurm
from helpers.torch_trace import one_rank_apart

from dlcprof import events as ev
from dlcprof.report.load import load_session
from dlcprof.trace_import.nodes import NODE_VARS

CLI = [sys.executable, "-m", "dlcprof.cli"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _events(folder: Path) -> list[dict]:
    out = []
    for e in load_session(folder).events:
        d = ev.to_dict(e)
        if isinstance(e, ev.TraceImported):
            d = {k: v for k, v in d.items() if k not in ("wall_s", "nodes")}
        out.append(d)
    return out


def _two_nodes(tmp_path: Path) -> list[Path]:
    """An 8-rank job's logs, one rank apart, four ranks on each node's disk."""
    wide = one_rank_apart(tmp_path / "job", 8, 5)
    nodes = [tmp_path / "node0", tmp_path / "node1"]
    for k, node in enumerate(nodes):
        node.mkdir()
        for r in range(4 * k, 4 * k + 4):
            log = wide / f"dedicated_log_torch_trace_rank_{r}_wide.log"
            log.rename(node / log.name)
    return nodes


def _merged_as_whole(tmp_path: Path, nodes: list[Path], shared: Path) -> None:
    """Each node wrote its own summary; their merge is the import of every log."""
    assert sorted(p.name for p in shared.iterdir()) == [
        "node-0.dlcnode.json",
        "node-1.dlcnode.json",
    ]
    merged = subprocess.run(
        [*CLI, "merge", str(shared), "-o", str(tmp_path / "merged")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert merged.returncode == 0, merged.stderr
    assert "on 2 nodes (the slowest node's read, then the merge)" in merged.stdout
    whole = subprocess.run(
        [*CLI, "import", *map(str, nodes), "-o", str(tmp_path / "whole")],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert whole.returncode == 0, whole.stderr
    assert _events(tmp_path / "merged") == _events(tmp_path / "whole")
    session = load_session(tmp_path / "merged")
    assert len(session.rank_summaries) == 8


def test_torchrun_one_process_per_node_then_merge(tmp_path):
    nodes = _two_nodes(tmp_path)
    shared = tmp_path / "shared"
    port = _free_port()
    torchrun = str(Path(sys.executable).parent / "torchrun")
    env = {k: v for k, v in os.environ.items() if k not in NODE_VARS}
    procs = []
    for k, node in enumerate(nodes):
        argv = [torchrun, "--nnodes", "2", "--nproc-per-node", "1", "--node-rank", str(k)]
        argv += ["--rdzv-backend", "c10d", "--rdzv-endpoint", f"127.0.0.1:{port}"]
        # Both launchers are on the rendezvous host: say which one serves the store.
        argv += ["--rdzv-conf", f"is_host={int(k == 0)}"]
        argv += ["-m", "dlcprof.cli", "import", str(node), "--node-summary", str(shared)]
        procs.append(
            subprocess.Popen(
                argv, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
            )
        )
    outs = [p.communicate(timeout=300)[0] for p in procs]
    assert [p.returncode for p in procs] == [0, 0], outs[0][-3000:] + outs[1][-3000:]
    # torchrun's c10d rendezvous numbers the nodes in arrival order: each its own.
    _merged_as_whole(tmp_path, nodes, shared)


@pytest.mark.skipif(slurm.missing() is not None, reason=str(slurm.missing()))
def test_srun_one_task_per_node_then_merge(tmp_path):
    nodes = _two_nodes(tmp_path)
    shared = tmp_path / "shared"
    # Each task reads its own node's folder, as /local/trace is each node's own disk.
    task = f'exec {" ".join(CLI)} import "{tmp_path}/node$SLURM_NODEID" --node-summary {shared}'
    with slurm.local_cluster(tmp_path / "slurm", nodes=2) as env:
        env = {k: v for k, v in env.items() if k not in NODE_VARS}
        done = subprocess.run(
            ["srun", "--nodes", "2", "--ntasks-per-node", "1", "bash", "-c", task],
            env=env,
            capture_output=True,
            text=True,
            timeout=300,
        )
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    # Each summary named by the node's SLURM_NODEID.
    _merged_as_whole(tmp_path, nodes, shared)
