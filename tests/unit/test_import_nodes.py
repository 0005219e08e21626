"""``dlcprof import --node-summary`` on each node of a job, then ``dlcprof merge`` of
the nodes' summaries, against ``dlcprof import`` of every node's logs in one
place: a real 2-rank gloo job's logs widened with per-process addresses
(tests/helpers/torch_trace.py), one rank apart, split into nodes as a
cluster's local disks hold them. The merged session is the same session."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers.torch_trace import apart_rank, one_rank_apart

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import ranks as fr
from dlcprof.report.load import load_session
from dlcprof.trace_import.job import FULL_RANKS
from dlcprof.trace_import.nodes import NODE_VARS

# Figures of the reading itself, not of the logs: how long it took, on how many nodes.
_OF_THE_READING = ("wall_s", "nodes")


def _split(folder: Path, out: Path, nodes: int) -> list[Path]:
    """The job's logs moved into one folder per node, ranks in blocks (node k
    holds ranks k*n/nodes ...), as torchrun places them."""
    logs = sorted(folder.iterdir(), key=lambda p: int(p.name.split("_rank_")[1].split("_")[0]))
    per = -(-len(logs) // nodes)
    folders = []
    for k in range(nodes):
        node = out / f"node{k}"
        node.mkdir(parents=True)
        for log in logs[k * per : (k + 1) * per]:
            log.rename(node / log.name)
        folders.append(node)
    return folders


def _events(folder: Path) -> list[dict]:
    out = []
    for e in load_session(folder).events:
        d = ev.to_dict(e)
        if isinstance(e, ev.TraceImported):
            d = {k: v for k, v in d.items() if k not in _OF_THE_READING}
        out.append(d)
    return out


def _merged_equals_whole(tmp_path: Path, monkeypatch, ranks: int, nodes: int) -> None:
    odd = apart_rank(ranks)
    folders = _split(one_rank_apart(tmp_path / "job", ranks, odd), tmp_path / "nodes", nodes)
    for var in NODE_VARS:
        monkeypatch.delenv(var, raising=False)
    summaries = tmp_path / "shared"
    for k, node in enumerate(folders):  # as srun starts one task per node
        monkeypatch.setenv("SLURM_NODEID", str(k))
        assert main(["import", str(node), "--node-summary", str(summaries), "--workers", "1"]) == 0
    names = sorted(p.name for p in summaries.iterdir())
    assert names == sorted(f"node-{k}.dlcnode.json" for k in range(nodes))
    # What travels is each rank's summary and the events of the ranks the job
    # may keep, not the logs: a node that holds a rank past FULL_RANKS ships
    # the first rank's of each of its groups (the odd rank's node: 2).
    for k in range(nodes):
        body = json.loads((summaries / f"node-{k}.dlcnode.json").read_text())
        held = sorted(p["rank"] for _, p in body["ranked"])
        shipped = sorted(p["rank"] for _, p in body["ranked"] if p["source"] in body["events"])
        if held[-1] >= FULL_RANKS:
            assert shipped == sorted({held[0], odd} & set(held))
        else:
            assert shipped == held
    assert main(["merge", str(summaries), "-o", str(tmp_path / "merged")]) == 0
    whole = [str(f) for f in folders]
    assert main(["import", *whole, "--workers", "1", "-o", str(tmp_path / "whole")]) == 0
    assert _events(tmp_path / "merged") == _events(tmp_path / "whole")

    session = load_session(tmp_path / "merged")
    groups = fgroups.rank_groups(session)
    rest = [r for r in range(ranks) if r != odd]
    assert [g.ranks for g in groups] == [[odd], rest]
    assert groups[0].words == f"rank {odd} alone did not compile 0/1, 4/1"
    found = fdiv.divergences(session)
    assert found and {d.rank for d in found} == {odd}
    rows = fr.rank_rows(session, found)
    assert f"rows: 2 of {ranks:,} ranks" in "\n".join(fr.notes(session, rows))
    # One record per rank: every rank's recompiles and cache hits and misses.
    records = fgroups.records(session)
    assert sorted(records) == list(range(ranks))
    assert records[odd].recompiles == 0
    assert {r.recompiles for k, r in records.items() if k != odd} == {2}
    assert len({r.cache_counts for r in records.values()}) == 2
    imported = session.imported
    assert imported is not None and imported.nodes == nodes
    assert imported.kept == [0, odd]


def test_a_job_split_over_4_nodes_merges_into_the_import_of_every_log(tmp_path, monkeypatch):
    _merged_equals_whole(tmp_path, monkeypatch, ranks=32, nodes=4)


@pytest.mark.slow
def test_1024_ranks_on_8_nodes_merge_into_the_import_of_every_log(tmp_path, monkeypatch):
    _merged_equals_whole(tmp_path, monkeypatch, ranks=1024, nodes=8)


def test_the_launchers_node_number_names_the_summary(tmp_path, monkeypatch):
    folders = _split(one_rank_apart(tmp_path / "job", 4, 1), tmp_path / "nodes", 2)
    for var in NODE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("GROUP_RANK", "1")  # torchrun's, one process per node
    assert main(["import", str(folders[1]), "--node-summary", str(tmp_path / "s")]) == 0
    assert [p.name for p in (tmp_path / "s").iterdir()] == ["node-1.dlcnode.json"]
    body = json.loads((tmp_path / "s" / "node-1.dlcnode.json").read_text())
    assert [p["rank"] for _, p in body["ranked"]] == [2, 3]


def test_merge_says_what_is_wrong_with_its_summaries_in_one_line(tmp_path, monkeypatch, capsys):
    folders = _split(one_rank_apart(tmp_path / "job", 4, 1), tmp_path / "nodes", 2)
    for var in NODE_VARS:
        monkeypatch.delenv(var, raising=False)
    monkeypatch.setenv("NODE_RANK", "0")
    s = tmp_path / "s"
    assert main(["import", str(folders[0]), "--node-summary", str(s)]) == 0
    twice = tmp_path / "again"
    assert main(["import", str(folders[1]), "--node-summary", str(twice)]) == 0
    capsys.readouterr()
    assert main(["merge", str(s), str(twice), "-o", str(tmp_path / "m")]) == 2
    err = capsys.readouterr().err.strip()
    assert "are both node 0's summary: give each node's once" in err and "\n" not in err
    bad = s / "node-9.dlcnode.json"
    bad.write_text('{"format": "something else"}')
    assert main(["merge", str(s), "-o", str(tmp_path / "m")]) == 2
    assert "is not a node summary" in capsys.readouterr().err
    bad.unlink()
    assert main(["import", str(folders[1]), "--node-summary", str(s), "--run", "1"]) == 2
    assert "choose one at the merge (dlcprof merge --run N)" in capsys.readouterr().err
