"""``dlcprof import`` of logs as jobs leave them: cut short anywhere, a payload
damaged, two logs of one pid, a job re-run into its folder, a rank with no
log, gzipped (tlparse's own inputs in tests/fixtures/tlparse, and a real
2-rank job's logs from tests/fixtures/torch_trace)."""

from __future__ import annotations

import gzip
import json
import re
import shutil

import pytest
from helpers.paths import FIXTURES
from helpers.torch_trace import later, rank_logs, trace_logs, widen

from dlcprof.cli import main
from dlcprof.cli.loading import load_report_or_trace
from dlcprof.figures.job.groups import signature
from dlcprof.figures.job.ranks import by_rank
from dlcprof.report.load import load_session
from dlcprof.trace_import.job import import_trace
from dlcprof.trace_import.process_log import read_log

TLPARSE_INPUTS = FIXTURES / "tlparse"


def _three_ranks(tmp_path):
    return widen(
        rank_logs(trace_logs("ddp_odd_batch", tmp_path / "logs")), tmp_path / "job", 3, {1: 1}
    )


@pytest.mark.parametrize("percent", [25, 50, 75])
def test_a_rank_log_cut_short_imports_what_it_holds_and_says_where_it_ends(
    tmp_path, capsys, percent
):
    job = _three_ranks(tmp_path)
    log = job / "dedicated_log_torch_trace_rank_2_wide.log"
    data = log.read_bytes()
    log.write_bytes(data[: len(data) * percent // 100])
    assert main(["import", str(job), "-o", str(tmp_path / "out")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert re.search(
        r"rank 2's log ends (during compile \S+ and )?mid-record \(line \d+\) "
        r"\(killed, or still running\)",
        printed,
    )
    session = load_session(tmp_path / "out")
    assert sorted(by_rank(session)) == [0, 1, 2]
    assert session.imported is not None and session.imported.skipped == ""
    # What the cut log held before the cut is read: its first compile at least.
    assert "0/0" in by_rank(session)[2].compiles
    assert sorted(by_rank(load_report_or_trace(job))) == [0, 1, 2]  # replay's path


def test_a_complete_log_is_never_called_damaged():
    # torch writes no newline after the last record of a log it closed.
    log = TLPARSE_INPUTS / "simple.log"
    assert not log.read_bytes().endswith(b"\n")
    session = import_trace([str(log)], workers=1)
    assert session.imported is not None
    assert session.imported.skipped == "" and session.imported.notes == []


def test_a_payload_whose_md5_does_not_match_is_skipped_and_named_by_line():
    log = TLPARSE_INPUTS / "simple_corrupted_json.log"
    session = import_trace([str(log)], workers=1)
    assert session.imported is not None
    assert session.imported.skipped == (
        "skipped simple_corrupted_json.log: 1 record whose payload does not match its md5 (line 13)"
    )


def test_a_damaged_payload_is_named_by_the_read_that_uses_it(tmp_path):
    # A rank's summary is read without Inductor's code (nothing of it is
    # compared): its damage there is not seen. A log the session keeps is read
    # whole, every payload checked, and the import names what it skipped.
    logs = trace_logs("ddp_odd_batch", tmp_path / "logs")
    log = rank_logs(logs)[1]
    lines = log.read_bytes().split(b"\n")
    at = next(i for i, line in enumerate(lines) if b'"inductor_output_code"' in line)
    assert lines[at + 1].startswith(b"\t")
    lines[at + 1] += b" "  # its payload edited: the md5 no longer matches
    log.write_bytes(b"\n".join(lines))
    said = f"{log.name}: 1 record whose payload does not match its md5 (line {at + 1})"
    assert read_log(str(log), "host").damage == []
    assert read_log(str(log), "host", run_id="rank1").damage == [said]
    session = import_trace([str(logs)], workers=1)  # 2 ranks: both kept
    assert session.imported is not None and session.imported.skipped == f"skipped {said}"
    assert session.imported.kept == [0, 1]


def test_two_logs_of_one_pid_are_two_runs(tmp_path):
    logs = trace_logs("train", tmp_path / "logs")
    (log,) = logs.iterdir()
    # The same pid an hour later: a container's re-run, or another host's process.
    (logs / "again.log").write_text(later(log.read_text(), 1))
    session = import_trace([str(logs)], workers=1)
    assert len(session.runs) == 2
    a, b = session.runs.values()
    assert a.process and b.process and a.process.pid == b.process.pid
    assert a.compiles.keys() == b.compiles.keys()
    assert len(a.kernels) == len(b.kernels) > 0  # each its own, not listed twice in one


def test_a_copy_of_a_log_is_one_process_read_once_and_named(tmp_path, capsys):
    """A folder gathered twice, a log copied under another name: the same pid,
    rank and first record are one process's log, not a second run; so is a
    copy taken while the process still wrote (the one that reaches further is
    read)."""
    logs = trace_logs("train", tmp_path / "logs")
    (log,) = logs.iterdir()
    shutil.copy(log, logs / "again.log")
    data = log.read_bytes()
    (logs / "early.log").write_bytes(data[: data.index(b"\n", len(data) // 2) + 1])
    session = import_trace([str(logs)], workers=1)
    assert len(session.runs) == 1
    (run,) = session.runs.values()
    assert run.process is not None and run.process.argv == ["again.log"]
    assert session.imported is not None
    assert session.imported.skipped == (
        f"skipped {log.name}: a copy of again.log (one process's log: its pid, rank and first "
        "record); early.log: a copy of again.log (one process's log: its pid, rank and first "
        "record)"
    )
    ranks = trace_logs("ddp_odd_batch", tmp_path / "ranks")
    rank1 = rank_logs(ranks)[1]
    shutil.copy(rank1, ranks / "copy_of_rank_1.log")
    assert main(["import", str(ranks), "-o", str(tmp_path / "out")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert "runs of the job" not in printed
    assert f"a copy of {rank1.name}" in printed or f"{rank1.name}: a copy of" in printed
    assert sorted(by_rank(load_session(tmp_path / "out"))) == [0, 1]


def test_two_runs_of_a_job_in_one_folder_the_newest_imported_and_the_other_named(tmp_path, capsys):
    logs = trace_logs("ddp_odd_batch", tmp_path / "logs")
    for rank, path in rank_logs(logs).items():
        (logs / f"dedicated_log_torch_trace_rank_{rank}_rerun.log").write_text(
            later(path.read_text(), 2)
        )
    assert main(["import", str(logs), "-o", str(tmp_path / "new")]) == 0
    printed = " ".join(capsys.readouterr().out.split())
    assert (
        "these logs hold 2 runs of the job, told apart by their clocks: imported run 2" in printed
    )
    assert "not imported: run 1 started 12-02 09:" in printed and "--run N" in printed
    newest = load_session(tmp_path / "new")
    assert {s.source.rsplit("_", 1)[1] for s in newest.rank_summaries.values()} == {"rerun.log"}
    assert main(["import", str(logs), "--run", "1", "-o", str(tmp_path / "old")]) == 0
    oldest = load_session(tmp_path / "old")
    assert all("rerun" not in s.source for s in oldest.rank_summaries.values())
    assert len(oldest.rank_summaries) == 2
    assert main(["import", str(logs), "--run", "3", "-o", str(tmp_path / "none")]) == 2
    err = capsys.readouterr().err
    assert len(err.strip().splitlines()) == 1 and "2 runs" in err


def test_a_rank_without_a_log_is_said(tmp_path):
    job = widen(rank_logs(trace_logs("ddp_odd_batch", tmp_path / "logs")), tmp_path / "job", 8, {})
    (job / "dedicated_log_torch_trace_rank_3_wide.log").unlink()
    session = import_trace([str(job)], workers=1)
    assert session.imported is not None
    assert any(n.startswith("rank 3 of 8 has no log") for n in session.imported.notes)


def test_a_gz_log_and_a_folder_of_them_read_as_their_plain_twins(tmp_path):
    plain = trace_logs("ddp_odd_batch", tmp_path / "plain")
    packed = tmp_path / "gz"
    packed.mkdir()
    for log in plain.iterdir():
        with gzip.open(packed / f"{log.name}.gz", "wb") as f:
            f.write(log.read_bytes())
    a, b = (import_trace([str(d)], workers=1) for d in (plain, packed))
    assert sorted(by_rank(a)) == sorted(by_rank(b)) == [0, 1]
    for rank, run in by_rank(a).items():
        twin = by_rank(b)[rank]
        assert signature(twin) == signature(run)
        assert len(twin.kernels) == len(run.kernels) > 0
    (one,) = [p for p in packed.iterdir() if "rank_0" in p.name]
    (run,) = import_trace([str(one)], workers=1).runs.values()
    assert signature(run) == signature(by_rank(a)[0])


def test_what_a_log_does_not_hold_reads_n_a_with_why(tmp_path):
    # tlparse's comp_failure.log: an older torch's, no duration in its
    # compilation_metrics, no torch_version record, no python, no platform.
    log = TLPARSE_INPUTS / "comp_failure.log"
    assert main(["import", str(log), "-o", str(tmp_path / "out")]) == 0
    (run,) = load_session(tmp_path / "out").runs.values()
    (c,) = run.compiles.values()
    assert c.wall_s == pytest.approx(0.157247)  # its dynamo_cumulative_compile_time_us
    assert run.wall_s is not None and run.wall_s > 0  # first to last record
    env = json.loads((tmp_path / "out" / "session.json").read_text())["environment"]
    assert env["torch"] is None and env["platform"] is None
    md = (tmp_path / "out" / "report.md").read_text()
    assert "| torch | n/a (its log has no torch_version record) |" in md
    assert "| platform | n/a (not in a TORCH_TRACE log) |" in md
    assert "| device | n/a (not in a TORCH_TRACE log) |" in md
    assert "WorkerReady" not in md and "not sampled yet" not in md
    assert "1970-01-01" not in md


def test_phases_outside_any_compile_make_no_compile():
    # simple.log opens with torch's compile_file of a module: compile id None.
    (run,) = import_trace([str(TLPARSE_INPUTS / "simple.log")], workers=1).runs.values()
    assert list(run.compiles) == ["0/0"]


def test_a_log_is_dated_by_its_records_or_said_undated(tmp_path):
    # comp_metrics.log has no chromium event: its compiles' metrics date it.
    for name, recorded in [
        ("comp_metrics.log", "| recorded | 2024-04-0"),  # 04-03 in UTC
        ("export.log", "| recorded | n/a (no record in the logs holds a date) |"),
    ]:
        assert main(["import", str(TLPARSE_INPUTS / name), "-o", str(tmp_path / name)]) == 0
        md = (tmp_path / name / "report.md").read_text()
        assert recorded in md and "1970" not in md
