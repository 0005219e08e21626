"""The rank groups and divergence checks of a job ``dlcprof import`` read, on
a real 2-rank gloo job's TORCH_TRACE logs widened to 17, 256 and 1,024 ranks
(tests/helpers/torch_trace.py), each copy with its own pid and object
addresses as real processes have: every rank recompiled frames 0 and 4 on a
failed id guard whose words hold the object's address, but one, which never
did. That rank is the one named, never the majority's first rank; the
addresses make no group of their own."""

from __future__ import annotations

import re

import pytest
from helpers.torch_trace import apart_rank, rank_logs, trace_logs, widen

from dlcprof.figures.job import divergence as fdiv
from dlcprof.figures.job import groups as fgroups
from dlcprof.figures.job import ranks as fr
from dlcprof.figures.job.imported import import_lines
from dlcprof.figures.job.rank_runs import by_rank
from dlcprof.trace_import.job import import_trace


@pytest.mark.parametrize("ranks", [17, 256, pytest.param(1024, marks=pytest.mark.slow)])
def test_the_one_rank_apart_is_named_at_any_number_of_ranks(rank_apart_import, ranks):
    folder, session = rank_apart_import(ranks)
    odd, rest = apart_rank(ranks), [r for r in range(ranks) if r != apart_rank(ranks)]
    # Each rank's recompile names its own object's address...
    said = {
        re.search(rb"___check_obj_id\(L\['func'\], (\d+)\)", log.read_bytes()).group(1)
        for log in (folder / f"dedicated_log_torch_trace_rank_{r}_wide.log" for r in rest[:3])
    }
    assert len(said) == 3
    # ...and the ranks that did the same work are one group all the same.
    groups = fgroups.rank_groups(session)
    assert [g.ranks for g in groups] == [[odd], rest]
    assert groups[1].signature.guard_failures == (
        "0/0: ___check_obj_id(L['func'], <id>)",
        "4/0: ___check_obj_id(L['self'].scale, <id>)",
    )
    assert groups[0].words == f"rank {odd} alone did not compile 0/1, 4/1"
    found = fdiv.divergences(session)
    assert found and {d.rank for d in found} == {odd}
    missing = sorted(d.subject for d in found if d.check == "compile_ids")
    assert missing == ["0/1", "4/1"]
    for d in found:
        assert d.headline.startswith(f"rank {odd} ")
        assert f"the other {ranks - 1:,}" in d.headline or "the others with 4" in d.headline
    assert fdiv.verdict(session, found) == (
        f"divergence checks: 3 divergences among {ranks:,} ranks "
        "(2 groups, each compared by its first rank)"
    )
    # The Ranks table lists the ranks kept, counted as the groups are, and says how many of all.
    rows = fr.rank_rows(session, found)
    assert [r.rank for r in rows] == [0, odd]
    cells = {g.ranks[0]: fgroups.group_cells(g, len(groups)) for g in groups}
    for row in rows:
        mine = dict(zip(fr.COLUMNS, fr.row_cells(row), strict=True))
        theirs = dict(zip(fgroups.GROUP_COLUMNS, cells[row.rank], strict=True))
        for col in ("compiles", "recompiles", "graph breaks", fgroups.CACHE_COLUMN):
            assert mine[col] == theirs[col]
    assert f"rows: 2 of {ranks:,} ranks" in "\n".join(fr.notes(session, rows))
    # The import's first line counts its logs as it counts its ranks.
    assert import_lines(session)[0].startswith(f"imported from {ranks:,} TORCH_TRACE logs (")


def test_two_ranks_that_did_the_same_work_are_alike_whatever_their_addresses(tmp_path):
    logs = rank_logs(trace_logs("ddp_odd_batch", tmp_path / "logs"))
    session = import_trace([str(widen({0: logs[1]}, tmp_path / "two", 2, {}))], workers=1)
    (group,) = fgroups.rank_groups(session)
    assert fgroups.summary([group]) == "all 2 ranks alike"
    assert fgroups.group_cells(group, 1)[-1] == "every rank alike"
    assert fdiv.verdict(session, fdiv.divergences(session)).startswith(
        "divergence checks: the 2 ranks agree ("
    )


def test_the_groups_and_the_ranks_table_count_one_record(tmp_path):
    """The real 2-rank job: rank 1 recompiled twice; each table says so, and the
    same cache hits and misses (every graph's, forward and backward)."""
    session = import_trace([str(trace_logs("ddp_odd_batch", tmp_path / "logs"))], workers=1)
    groups = fgroups.rank_groups(session)
    assert fgroups.summary(groups).startswith("the 2 ranks differ; rank 1 alone recompiled")
    rows = {r.rank: r for r in fr.rank_rows(session, fdiv.divergences(session))}
    for g in groups:
        (rank,) = g.ranks
        run = by_rank(session)[rank]
        group = dict(zip(fgroups.GROUP_COLUMNS, fgroups.group_cells(g, 2), strict=True))
        row = dict(zip(fr.COLUMNS, fr.row_cells(rows[rank]), strict=True))
        assert group["recompiles"] == row["recompiles"] == str(len(run.recompiles))
        graphs = [c for c in run.compiles.values() if c.record is not None]
        hits = sum(c.cache == "hit" for c in graphs)
        misses = sum(c.cache == "miss" for c in graphs)
        assert group[fgroups.CACHE_COLUMN] == row[fgroups.CACHE_COLUMN] == f"{hits}/{misses}"
    assert rows[1].recompiles == 2
    said = {g.ranks[0]: fgroups.group_cells(g, 2)[-1] for g in groups}
    assert said[0] == "the other rank is told against this one"


def test_groups_that_differ_where_no_check_looks_are_not_called_agreeing():
    said = fdiv.summary([], 2, 0, groups=2)
    assert "agree on compile ids" in said and "their groups differ" in said
    assert fdiv.summary([], 2, 0, groups=1).startswith("divergence checks: the 2 ranks agree (")


def test_a_table_of_groups_lists_32_of_more_the_largest_among_them():
    """40 ranks that each did other work, and 2 alike: 41 groups."""

    def record(rank: int, work: int) -> fgroups.RankRecord:
        sig = fgroups.RankSignature((f"{work}/0",), (), (), (), (), ())
        return fgroups.RankRecord(rank, None, "h", rank, sig, 1.0)

    groups = fgroups.grouped([record(r, r) for r in range(40)] + [record(40, 0)])
    shown = fgroups.shown_groups(groups)
    assert len(groups) == 40 and len(shown) == fgroups.RUNS_SHOWN
    assert shown[-1].ranks == [0, 40] and shown[0].ranks == [1]
    assert fgroups.groups_note(groups) == (
        "groups: 32 of 40 listed, the smallest and the largest; the JSON report holds every one"
    )


def test_compile_ids_sort_in_numbers_and_a_reset_s_ids_after_all_before_it():
    ids = ["reset1:0/0", "1/0", "reset2:0/0", "4/10", "reset1:1/0", "0/0 (bwd)", "4/2", "0/0"]
    assert sorted(ids, key=fgroups.id_order) == [
        "0/0",
        "0/0 (bwd)",
        "1/0",
        "4/2",
        "4/10",
        "reset1:0/0",
        "reset1:1/0",
        "reset2:0/0",
    ]
