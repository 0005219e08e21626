"""``dlcprof import`` on torch's own TORCH_TRACE logs recorded from real runs
(tests/fixtures/torch_trace): a 2-rank gloo job whose rank 1 recompiles alone,
the same job widened to 256 ranks, a single-process script, damaged logs."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import FIXTURES, PROGRAMS, REPO
from helpers.torch_trace import RECORDED_CHECKOUT, later, rank_logs, trace_logs, widen

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.cli.loading import load_report_or_trace
from dlcprof.figures.cache_misses import misses
from dlcprof.figures.check.findings import cache_misses
from dlcprof.figures.job.divergence import divergences
from dlcprof.figures.job.groups import rank_groups, signature, summary
from dlcprof.figures.job.ranks import by_rank, rank_rows
from dlcprof.report import model as rm
from dlcprof.report.load import load_session
from dlcprof.report.markdown import render_markdown
from dlcprof.session import Session
from dlcprof.trace_import.job import import_trace

TLPARSE = Path(sys.executable).parent / "tlparse"


def _live() -> Session:
    """The attached run that wrote the 2-rank logs: what dlcprof saw live."""
    text = (FIXTURES / "torch_trace" / "ddp_odd_batch" / "live.jsonl").read_text()
    text = text.replace(RECORDED_CHECKOUT, f"{REPO}/")
    return Session.from_events([ev.decode(line) for line in text.splitlines() if line])


def _kernel(k: ev.KernelGenerated) -> dict:
    return {key: v for key, v in ev.to_dict(k).items() if key not in ("t", "run_id", "fused_ops")}


def _tlparse_ids(logs: Path, out: Path) -> dict[int, set[str]]:
    """Each rank's compile ids as tlparse lists them ("[4/1]"; "[4/1_1]" is a later attempt)."""
    subprocess.run(
        [str(TLPARSE), "--all-ranks-html", str(logs), "-o", str(out), "--overwrite"],
        check=True,
        capture_output=True,
    )
    ids = {}
    for rank_dir in out.glob("rank_*"):
        listed = json.loads((rank_dir / "compile_directory.json").read_text())
        ids[int(rank_dir.name[5:])] = {
            k.strip("[]") for k in listed if "_" not in k and k != "[-/-]"
        }
    return ids


def test_two_ranks_agree_with_tlparse_and_the_live_session(tmp_path, capsys):
    logs = trace_logs("ddp_odd_batch", tmp_path / "logs")
    assert main(["import", str(logs), "-o", str(tmp_path / "out")]) == 0
    printed = " ".join(capsys.readouterr().out.split())  # as wrapped at any width
    assert "rank 1 alone recompiled 0/1, 4/1" in printed
    imported = load_session(tmp_path / "out")  # the folder opens as any saved session
    assert {p.name for p in (tmp_path / "out").iterdir()} >= {
        "session.json",
        "report.html",
        "report.md",
        "trace.json",
    }
    ranks, live = by_rank(imported), by_rank(_live())
    assert sorted(ranks) == sorted(live) == [0, 1]
    tl = _tlparse_ids(logs, tmp_path / "tl")
    for rank, run in ranks.items():
        assert {c for c in run.compiles if not c.endswith(ev.BACKWARD)} == tl[rank]
        # Compile ids, guard failures, cache, graph op counts, breaks and their
        # reasons and places, failures: as the live probe saw them.
        assert signature(run) == signature(live[rank])
        # Each kernel from Inductor's output code in the log, as the live probe read
        # it; a backward's fused ops read from its name: without torch to say which
        # pieces are aten ops, only the ones its graph holds.
        assert len(run.kernels) == len(live[rank].kernels)
        for mine, seen in zip(run.kernels, live[rank].kernels, strict=True):
            if mine.fused_ops != seen.fused_ops:
                assert mine.graph == "backward" and set(mine.fused_ops) < set(seen.fused_ops)
            assert _kernel(mine) == _kernel(seen)
        assert [(b.reason, b.location) for b in run.graph_breaks] == [
            (b.reason, b.location) for b in live[rank].graph_breaks
        ]
    assert [r.reason for r in ranks[1].recompiles] == [r.reason for r in live[1].recompiles]
    assert summary(rank_groups(imported)) == summary(rank_groups(_live()))
    assert "Rank groups:" in (tmp_path / "out" / "report.md").read_text()


def test_one_diverging_rank_of_256_is_the_named_outlier(tmp_path):
    logs = rank_logs(trace_logs("ddp_odd_batch", tmp_path / "logs"))
    # File names without a rank: the ranks come from the records.
    wide = widen(logs, tmp_path / "wide", 256, {137: 1}, torch_names=False)
    # Its records before init_process_group carry no rank: still rank 137's.
    odd = wide / "log_00137.log"
    text = odd.read_text()
    half = len(text) // 2
    odd.write_text(text[:half].replace('"rank": 137, ', "") + text[half:])
    assert '"rank"' not in text[:half].replace('"rank": 137, ', "")
    session = import_trace([str(wide)], workers=2)
    groups = rank_groups(session)
    assert [g.ranks for g in groups] == [[137], [r for r in range(256) if r != 137]]
    assert groups[0].words.startswith("rank 137 alone recompiled 0/1, 4/1: ")
    assert summary(groups).startswith("255 ranks alike (ranks 0–136, 138–255); rank 137 alone")
    # Bounded: events of one rank per group; every rank summarized.
    assert sorted(r.process.rank for r in session.runs.values() if r.process) == [0, 137]
    assert len(session.rank_summaries) == 256
    assert session.imported is not None and session.imported.kept == [0, 137]
    # Rank 0's wait on the lone recompile: the log holds no call times to tell it.
    rows = {r.rank: r for r in rank_rows(session, divergences(session))}
    assert rows[0].blocked_why is not None
    assert (
        "graph calls were not timed (a TORCH_TRACE log holds no call times)" in rows[0].blocked_why
    )


def test_a_log_without_ranks_takes_its_process_rank_and_is_said(tmp_path):
    logs = trace_logs("ddp_odd_batch", tmp_path / "logs")
    first = rank_logs(logs)[0]
    text = first.read_text()
    # The same process's records again, in a log of their own that names no rank.
    (logs / "early.log").write_text(text.replace('"rank": 0, ', ""))
    session = import_trace([str(logs)], workers=1)
    assert sorted(session.rank_summaries) == [0, 1]
    assert session.rank_summaries[0].source == str(first)
    assert session.imported is not None and session.imported.rankless == 0
    assert (
        session.imported.skipped
        == "skipped early.log: rank 0's process again (its first log is read)"
    )


def test_a_scripts_graph_break_at_its_file_and_line(tmp_path):
    session = load_report_or_trace(trace_logs("train", tmp_path / "logs"))  # replay's path
    (run,) = session.runs.values()
    assert {(b.reason, b.location) for b in run.graph_breaks} == {
        ("Data-dependent branching", f"{PROGRAMS / 'train.py'}:23")
    }
    assert session.rank_summaries == {}


def test_a_damaged_log_imports_what_is_readable_and_says_what_was_skipped(tmp_path):
    logs = trace_logs("ddp_odd_batch", tmp_path / "logs")
    clean = import_trace([str(logs)], workers=1)
    log = rank_logs(logs)[1]
    lines = log.read_text().splitlines(keepends=True)
    header = next(i for i, line in enumerate(lines) if i > 100 and not line.startswith("\t"))
    unknown = 'V1202 09:30:43.356000 4806 x.py:1] {"artifact": {"name": "no_such_artifact"}, '
    lines[header:header] = [
        "this is not a trace record\n",
        unknown + '"has_payload": "0"}\n',
        "\tx\n",
    ]
    text = "".join(lines)
    log.write_text(text[: text.rindex('"ph"')])  # cut mid-record
    damaged = import_trace([str(logs)], workers=1)
    assert damaged.imported is not None
    said = damaged.imported.skipped
    assert said == f"skipped {log.name}: 1 line not a trace record (line {header + 1})"
    (ends,) = [n for n in damaged.imported.notes if "'s log ends" in n]
    assert ends.startswith("rank 1's log ends ") and "mid-record (line " in ends
    for rank, run in by_rank(clean).items():
        assert signature(by_rank(damaged)[rank]) == signature(run)  # nothing else lost


def test_compiles_named_without_a_compile_record_are_said_once_for_all_logs(tmp_path):
    """tlparse's subgraph_name.log holds compile 0/0's artifacts alone: it, its
    process run again an hour later, and a complete log in one folder; the
    complete one is not named."""
    tlparse = FIXTURES / "tlparse"
    shutil.copy(tlparse / "subgraph_name.log", tmp_path / "a.log")
    (tmp_path / "b.log").write_text(later((tlparse / "subgraph_name.log").read_text(), 1))
    shutil.copy(tlparse / "simple.log", tmp_path / "c.log")
    session = import_trace([str(tmp_path)], workers=1)
    assert session.imported is not None
    (said,) = [n for n in session.imported.notes if "compile record" in n]
    assert said == (
        "a.log names compile 0/0; b.log names compile 0/0 but holds no compile record or "
        "span of them: no time or cache state of them here"
    )


@pytest.mark.parametrize(
    ("log", "said"),
    [
        (
            "comp_failure.log",
            "comp_failure.log (pid 1543231): 157 ms compile wall, 1 compile (1 failed: "
            "BackendCompilerFailed) · 0 fused kernels · 0 recompiles · 0 graph breaks",
        ),
        ("export.log", "export.log (pid 2313073): no compile"),
        (
            "../torch_trace/train",
            "dedicated_log_torch_trace_vta1382b.log.gz (pid 4984): 13.33 s compile wall, "
            "7 compiles · 12 fused kernels, 4 library calls (in 6 compiles) · 3 recompiles "
            "· 1 graph break",
        ),
    ],
)
def test_a_process_without_a_rank_is_said_in_a_line(tmp_path, capsys, log, said):
    """What each process compiled, as its report's head says it, one or many of
    each (a job's ranks are its groups' table instead)."""
    assert main(["import", str(FIXTURES / "tlparse" / log), "-o", str(tmp_path / "out")]) == 0
    assert said in capsys.readouterr().out.splitlines()


@pytest.mark.parametrize("kind", ["empty folder", "not a trace", "missing"])
def test_input_without_a_trace_is_one_line_and_exit_2(tmp_path, capsys, kind):
    path = tmp_path / "in"
    if kind == "empty folder":
        path.mkdir()
    elif kind == "not a trace":
        shutil.copy(REPO / "README.md", path)
    assert main(["import", str(path), "-o", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and str(path) in err
    assert not (tmp_path / "out").exists()


def test_a_folder_of_log_folders_names_the_ones_to_give(tmp_path, capsys):
    """A job's folder given for its nodes' (or a reports folder for one of its
    sessions): the one line names the folders that hold logs, and only those."""
    from dlcprof.cli.loading import LoadError

    job = tmp_path / "job"
    for node in ("node0", "node1"):
        (job / node).mkdir(parents=True)
        shutil.copy(FIXTURES / "tlparse" / "simple.log", job / node / "rank0.log")
    (job / "notes").mkdir()
    shutil.copy(REPO / "README.md", job / "notes")
    assert main(["import", str(job), "-o", str(tmp_path / "out")]) == 2
    (line,) = capsys.readouterr().err.strip().splitlines()
    assert f"its folders {job / 'node0'}, {job / 'node1'} do" in line
    assert "notes" not in line and "nodes of one job" in line
    with pytest.raises(LoadError, match="do: give one of them$"):
        load_report_or_trace(job)  # replay's reading: a log folder or a session
    shutil.rmtree(job / "node1")
    with pytest.raises(LoadError, match=f"but its folder {job / 'node0'} does: give that"):
        load_report_or_trace(job)


def test_a_log_without_torch_version_says_why_its_torch_is_unknown():
    from helpers.program import process_attached

    from dlcprof.report.environment import environment

    def torch_row(version: str) -> tuple[str | None, str]:
        s = Session()
        s.apply(process_attached(7, torch_version=version))
        s.apply(ev.RunFinished(run_id="pid7", status=ev.LOG_ENDED, wall_s=1.0))
        env = environment(s)
        (row,) = [r for r in env.rows if r.label == "torch"]
        return env.values["torch"], row.text

    assert torch_row("2.15.0") == ("2.15.0", "2.15.0")
    assert torch_row("") == (None, "n/a (its log has no torch_version record)")


def test_logs_from_a_clone_named_dlcprof_keep_the_programs_lines(tmp_path):
    """The recorded logs as another machine wrote them: the checkout's folder was
    named dlcprof, its venv (torch) inside it (issue 40, item 1)."""
    import gzip

    for gz in (FIXTURES / "torch_trace" / "ddp_odd_batch").glob("*.log.gz"):
        (tmp_path / gz.name.removesuffix(".gz")).write_bytes(gzip.decompress(gz.read_bytes()))
    imported, live = by_rank(import_trace([str(tmp_path)], workers=1)), by_rank(_live())
    for rank, run in imported.items():
        breaks = [(b.reason, b.location) for b in run.graph_breaks]
        assert breaks and all(
            at.startswith(f"{RECORDED_CHECKOUT}tests/programs/") for _, at in breaks
        )
        assert breaks == [
            (b.reason, b.location.replace(f"{REPO}/", RECORDED_CHECKOUT))
            for b in live[rank].graph_breaks
        ]


def test_two_imported_logs_explain_a_miss_by_the_setting_and_the_graph_that_changed(tmp_path):
    """tests/fixtures/torch_trace/cache_key: one program's logs on one cache folder."""

    def run_of(name: str):
        logs = trace_logs(f"cache_key/{name}", tmp_path / name)
        (run,) = import_trace([str(logs)], workers=1).runs.values()
        return run

    base, setting, graph = run_of("base"), run_of("setting"), run_of("graph")
    assert sorted((e.compile_id, e.layer, e.state) for e in base.cache_lookups) == [
        ("0/0", "aotautograd", "miss"),
        ("0/0", "fx_graph", "miss"),
        ("1/0", "aotautograd", "miss"),
        ("1/0", "fx_graph", "miss"),
    ]
    # g's setting changed: g missed, f hit.
    (miss,) = misses(setting, base)
    assert (miss.compile_id, miss.causes) == (
        "1/0",
        ["Inductor setting `fallback_random` False → True"],
    )
    # f's graph changed: f missed at its def, g hit.
    (miss,) = misses(graph, base)
    assert (miss.compile_id, miss.causes) == ("0/0", ["the graph changed: 1 op more (1 → 2)"])
    (found,) = cache_misses(graph, base)
    assert found.where == f"{PROGRAMS / 'cache_key.py'}:10"
    assert found.reason.startswith("f (AOTAutograd cache, FX graph cache): the graph changed")
    # Without a baseline a run knows only that the folder held no entry for the key.
    (miss,) = misses(graph)
    assert miss.causes[0].startswith("no entry for its key in the cache folder")


def test_an_imported_process_is_worded_as_a_log_not_as_a_live_run():
    """Each figure a TORCH_TRACE log does not hold says so, in the words of an
    import: never an attached program's, a live run's or a missing option's."""
    md = render_markdown(rm.build(import_trace([str(FIXTURES / "torch_trace" / "train")])))
    assert md.splitlines()[0].endswith("(1 process)")
    assert "| load avg (1/5/15 min) | n/a (not in a TORCH_TRACE log) |" in md
    assert "| logs' folder | train |\n| log | dedicated_log_torch_trace_vta1382b.log.gz |" in md
    assert "wall 13.37 s (from the log's first record to its last)" in md
    assert "not checked: a process read from its TORCH_TRACE log has no benchmark" in md
    assert "Compile cost by your code: n/a (not in a TORCH_TRACE log)" in md
    assert "- observer: none (read from its TORCH_TRACE log after the run)" in md
    assert "n/a (no device samples: a TORCH_TRACE log holds none)" in md
    hot = md.split("## Compiler hotspots")[1]
    assert hot.lstrip().startswith("n/a (not in a TORCH_TRACE log)")
    summary = md.split("## Summary")[1].split("## ")[0]
    assert summary.count("n/a (not in a TORCH_TRACE log)") == 2  # mode, dynamic
    for live_words in ("attached", "torch's import", "--baseline", "no torch.compile call"):
        assert live_words not in md, live_words
