"""tlparse's own test inputs (tests/fixtures/tlparse, from meta-pytorch/tlparse's
tests/inputs under its BSD-3 licence, LICENSE beside them): each imports with
exit 0, and the figures both tools give agree with tlparse run on the same
log: the compile ids it lists, each compile's Inductor cache state and
compile time (each of a compile id's compiles on its own, when a
``torch._dynamo.reset()`` made torch use the id again), the compiles that
failed and how, those Dynamo restarted and why (an older torch's graph breaks
among them), an AOTInductor compile's kernels and time, and the records whose
payload fails its md5.
Where they differ on purpose is docs/import.md's "tlparse's inputs"."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from dataclasses import dataclass
from html import unescape
from pathlib import Path

import pytest
from helpers.paths import FIXTURES
from helpers.torch_trace import trace_logs

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.session import Session
from dlcprof.trace_import.job import import_trace
from dlcprof.trace_import.process_log import read_log
from dlcprof.trace_records.log_file import BAD_MD5, CUT, Damage, read_records
from dlcprof.trace_records.payloads import combine_cache_states, restart_is_graph_break

TLPARSE = Path(sys.executable).parent / "tlparse"
INPUTS = FIXTURES / "tlparse"
# Every log, a multi-rank folder's each on its own (its empty files are no log).
LOGS = sorted(p for p in INPUTS.rglob("*") if p.suffix in (".log", ".txt") and p.stat().st_size > 0)
FOLDERS = sorted(p for p in INPUTS.iterdir() if p.is_dir())
# AOTInductor logs: one compile with no compile id, which tlparse lists as
# "[-/-]" and dlcprof as compile aoti/0.
AOT = re.compile(r"inductor_provenance_(aot_|extended)")
AOT_LOGS = sorted(p for p in LOGS if AOT.match(p.name))
# dlcprof's cache state is Inductor's FX graph cache; tlparse lists AOTAutograd's beside it.
_FX_CACHE = re.compile(r"fx_graph_cache_(hit|miss|bypass)")
_RESTART_ROW = re.compile(
    r"<tr> <td> <a href='[^']*'>\[([^\]_]+)_\d+\]</a>\s*</td>"
    r"<td> RestartAnalysis </td><td><pre>([^<]*)</pre>"
)
_FAILURE_ROW = re.compile(
    r"<tr> <td> <a href='[^']*'>\[([^\]]+)\]</a>\s*</td><td><pre>([^<]*)</pre>"
)
_METRICS_PAGE = re.compile(r"compilation_metrics_\d+\.html")
_ENTIRE_FRAME = re.compile(r"Entire Frame <abbr[^>]*>\[\?\]</abbr>: ([0-9.]+)")


@dataclass
class _Tlparse:
    ids: set[str]  # compile ids listed ("[0/1_1]", a later attempt of 0/1, is not one)
    # compile id -> per compilation_metrics record of it, in the log's order:
    # Inductor's FX graph cache (hit / miss / bypass) from the artifacts since
    # the one before, and the compile's seconds ("Entire Frame") where shown.
    records: dict[str, list[tuple[str | None, float | None]]]
    failures: dict[str, str]  # compile id -> its failure type
    restarts: dict[str, set[str]]  # compile id -> why Dynamo restarted its analysis
    bad_md5: int  # payloads failing their md5


def _tlparse(log: Path, out: Path) -> _Tlparse:
    """What tlparse reads of ``log``: its compile directory, its failures
    table, its count of payloads failing their md5."""
    done = subprocess.run(
        [str(TLPARSE), str(log), "-o", str(out), "--overwrite", "--no-browser"],
        capture_output=True,
        text=True,
        check=True,
    )
    listed = json.loads((out / "compile_directory.json").read_text())
    records: dict[str, list[tuple[str | None, float | None]]] = {}
    for key, entry in listed.items():
        states: list[str] = []
        for a in entry.get("artifacts", []):
            if m := _FX_CACHE.match(a["name"]):
                states.append(m[1])
            elif _METRICS_PAGE.match(a["name"]):
                shown = _ENTIRE_FRAME.search((out / a["url"]).read_text())
                seconds = float(shown[1]) if shown else None
                # A later attempt's record ("[0/0_1]") is its compile's.
                records.setdefault(key.strip("[]").split("_")[0], []).append(
                    (combine_cache_states(states), seconds)
                )
                states = []
    html = out / "failures_and_restarts.html"
    table = html.read_text() if html.exists() else ""
    rows = _FAILURE_ROW.findall(table)
    restarts: dict[str, set[str]] = {}
    for cid, reason in _RESTART_ROW.findall(table):
        restarts.setdefault(cid, set()).add(unescape(reason))
    m = re.search(r"fail_payload_md5: (\d+)", done.stdout + done.stderr)
    return _Tlparse(
        ids={k.strip("[]") for k in listed if "_" not in k and k != "[-/-]"},
        records=records,
        failures={cid: kind.strip() for cid, kind in rows},
        restarts=restarts,
        bad_md5=int(m[1]) if m else 0,
    )


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(INPUTS)) for p in LOGS])
def test_each_log_imports_as_tlparse_reads_it(tmp_path, log):
    assert main(["import", str(log), "-o", str(tmp_path / "out")]) == 0
    _reads_as_tlparse(log, tmp_path)


def test_a_log_with_resets_reads_each_compile_as_tlparse_files_it(tmp_path):
    """tests/programs/dynamo_reset.py's own log (torch 2.13, a chromium trace,
    where cache_hit_miss.log's older torch has none): compile 0/0 three times,
    a miss, a hit and a miss."""
    (log,) = trace_logs("dynamo_reset", tmp_path / "logs").glob("*.log")
    (run,) = _reads_as_tlparse(log, tmp_path).runs.values()
    assert [(cid, c.record.cache) for cid, c in run.compiles.items() if c.record] == [
        ("0/0", "miss"),
        ("reset1:0/0", "hit"),
        ("reset2:0/0", "miss"),
    ]
    assert all(c.phases and c.kernels for c in run.compiles.values())


def _reads_as_tlparse(log: Path, tmp_path: Path) -> Session:
    """``log`` imported, its figures checked against tlparse's reading of it."""
    tl = _tlparse(log, tmp_path / "tl")
    damage = Damage()
    for _ in read_records(str(log), damage):
        pass
    assert damage.counts.get(BAD_MD5, 0) + damage.counts.get(CUT, 0) == tl.bad_md5
    session = import_trace([str(log)], workers=1)
    (run,) = session.runs.values()
    mine = {c for c in run.compiles if not c.endswith(ev.BACKWARD)}
    if AOT.match(log.name):
        assert (mine, tl.ids, set(tl.records)) == ({f"{ev.AOTI}0"}, set(), {"-/-"})
    else:
        # A compile id torch used again after a reset is one compile each time;
        # one named with no compile record or span (artifacts alone) is said, not listed.
        process = read_log(str(log), "host").process
        said = set(process.recordless) if process is not None else set()
        listed = {_torch_id(c) for c in mine}
        assert (listed | said, listed & said) == (tl.ids, set())
        notes = " ".join(session.imported.notes) if session.imported else ""
        assert all(c in notes for c in said) and ("names compile" in notes) == bool(said)
    # Each compile's records (its forward's, its backward's), in the log's
    # order, per compile id as torch wrote it: cache state and seconds.
    records: dict[str, list[ev.CompileFinished]] = {}
    for cid, c in run.compiles.items():
        for rec in c.records:
            records.setdefault(_torch_id(cid), []).append(rec)
    for key, shown in tl.records.items():
        if key == "-/-":
            continue  # AOTInductor's: test_an_aotinductor_compile_is_read_as_tlparse_shows_it
        recs = records.get(key, [])
        assert [r.cache for r in recs] == [cache for cache, _ in shown], key
        for rec, (_, seconds) in zip(recs, shown, strict=True):
            # dlcprof's time is the compile's whole span where torch writes it
            # (duration_us), tlparse's convert_frame's part of it (docs/import.md).
            span = rec.metrics.get("duration_us")
            if span is not None:
                assert rec.wall_s == span / 1e6 and (seconds is None or seconds <= rec.wall_s)
            elif seconds is not None:
                assert rec.wall_s == pytest.approx(seconds, abs=1e-6), key
    failed = {cid: c.record.fail_type for cid, c in run.compiles.items() if c.record}
    assert {cid: kind for cid, kind in failed.items() if kind} == tl.failures
    restarted = {
        cid: {str(r) for r in c.record.metrics.get("restart_reasons") or []}
        for cid, c in run.compiles.items()
        if c.record is not None
    }
    assert {cid: r for cid, r in restarted.items() if r} == tl.restarts
    # No log here has a graph-break record (torch added it later): its graph
    # breaks are the restarts at one, with the break's reason.
    broken = {cid: {b.reason for b in c.graph_breaks} for cid, c in run.compiles.items()}
    assert {cid: r for cid, r in broken.items() if r} == {
        cid: {r.strip("'") for r in reasons if restart_is_graph_break(r)}
        for cid, reasons in tl.restarts.items()
        if any(restart_is_graph_break(r) for r in reasons)
    }
    return session


def _torch_id(cid: str) -> str:
    """The compile id as torch wrote it: "reset1:0/0" -> "0/0", of a forward or backward."""
    return cid.removesuffix(ev.BACKWARD).rsplit(":", 1)[-1]


@pytest.mark.parametrize("folder", FOLDERS, ids=[p.name for p in FOLDERS])
def test_each_folder_imports_with_exit_0(tmp_path, capsys, folder):
    assert main(["import", str(folder), "-o", str(tmp_path / "out")]) == 0
    assert "imported into" in capsys.readouterr().out


@pytest.mark.parametrize("name", ["export.log", "export_guard_added.log"])
def test_an_export_log_says_its_issues_as_tlparse_e_lists_them(tmp_path, name):
    log = INPUTS / name
    subprocess.run(
        [str(TLPARSE), str(log), "-e", "-o", str(tmp_path / "tl"), "--overwrite", "--no-browser"],
        capture_output=True,
        check=True,
    )
    html = (tmp_path / "tl" / "index.html").read_text()
    rows = re.findall(r"<tr>\s*<td>([^<]+)</td>\s*<td>(.*?)</td>", html, re.S)
    assert rows
    session = import_trace([str(log)], workers=1)
    assert session.imported is not None
    (said,) = [n for n in session.imported.notes if n.startswith(f"{name} is a torch.export log")]
    assert f"{len(rows)} issue" in said
    for kind, reason in rows:
        expr = re.search(r"<code>(.*?)</code>", reason)
        assert expr is not None and f"{kind.strip()}: {expr[1]}" in said


@pytest.mark.parametrize("log", AOT_LOGS, ids=[p.name for p in AOT_LOGS])
def test_an_aotinductor_compile_is_read_as_tlparse_shows_it(tmp_path, log):
    """Its kernels are the ones its provenance map (as tlparse writes it out)
    names; its time is its compile_fx_aot span in tlparse's chromium trace."""
    subprocess.run(
        [str(TLPARSE), str(log), "-o", str(tmp_path), "--overwrite", "--no-browser"],
        capture_output=True,
        check=True,
    )
    (mapping,) = (tmp_path / "-_-_-_-").glob("inductor_provenance_tracking_node_mappings_*.json")
    kernels = {k.rsplit(":", 1)[0] for k in json.loads(mapping.read_text())["cppCodeToPost"]}
    spans = [
        e for e in json.loads((tmp_path / "chromium_events.json").read_text())
        if e.get("name") == "compile_fx_aot"
    ]  # fmt: skip
    (begin,) = [e["ts"] for e in spans if e["ph"] == "B"]
    (end,) = [e["ts"] for e in spans if e["ph"] == "E"]
    session = import_trace([str(log)], workers=1)
    assert session.imported is not None
    assert any(f"{log.name} is an AOTInductor log" in n for n in session.imported.notes)
    (run,) = session.runs.values()
    compile_ = run.compiles[f"{ev.AOTI}0"]
    # An older torch's map names the fused kernels only, not the extern calls.
    assert kernels <= {k.name for k in compile_.kernels}
    assert {k.name for k in compile_.kernels if k.kind != "extern"} == {
        k for k in kernels if not k.startswith("aoti_torch_")
    }
    # Each kernel's ops from its provenance map and post-grad graph, or the
    # wrapper's "Original ATen" comment.
    assert all(k.fused_ops for k in compile_.kernels)
    assert compile_.wall_s == pytest.approx((end - begin) / 1e6, abs=1e-6)
    assert {p.name for p in compile_.phases} >= {"compile_fx_aot", "inductor_compile"}


def test_a_torch_2_13_aotinductor_log_is_read_from_the_code_tlparse_writes_out(tmp_path):
    """tests/programs/aoti_linear.py's own log (torch 2.13, no provenance map):
    each kernel the wrapper launches, a C++ one defined in the kernel code
    tlparse writes out; the compile's time its compile_fx_aot span."""
    (log,) = trace_logs("aoti_linear", tmp_path / "logs").glob("*.log")
    subprocess.run(
        [str(TLPARSE), str(log), "-o", str(tmp_path / "tl"), "--overwrite", "--no-browser"],
        capture_output=True,
        check=True,
    )
    (code,) = (tmp_path / "tl" / "-_-_-_-").glob("inductor_aot_kernel_code_*.txt")
    defined = set(re.findall(r'^extern "C"\s+void\s+(\w+)\(', code.read_text(), re.M))
    (run,) = import_trace([str(log)], workers=1).runs.values()
    compile_ = run.compiles[f"{ev.AOTI}0"]
    assert [(k.name, k.kind, k.fused_ops) for k in compile_.kernels] == [
        ("cpp_fused_0", "pointwise", []),  # its name holds no op, and no map names any
        ("aoti_torch_cpu_addmm_out", "extern", ["aten.t", "aten.addmm"]),
        ("cpp_fused_mul_relu_1", "pointwise", ["aten.mul", "aten.relu"]),
    ]
    assert {k.name for k in compile_.kernels if k.kind != "extern"} == defined
    spans = json.loads((tmp_path / "tl" / "chromium_events.json").read_text())
    ((begin, end),) = [
        (b["ts"], e["ts"])
        for b in spans
        for e in spans
        if b.get("name") == e.get("name") == "compile_fx_aot" and (b["ph"], e["ph"]) == ("B", "E")
    ]
    assert compile_.wall_s == pytest.approx((end - begin) / 1e6, abs=1e-6)


def test_an_older_torchs_graph_break_is_read_from_its_restart():
    """comp_metrics.log (torch of April 2024) logs its two graph_break() calls
    only as restarts; the frames resume at those calls (lines 9551, 9553),
    as the next compiles' dynamo_start stacks show."""
    (run,) = import_trace([str(INPUTS / "comp_metrics.log")], workers=1).runs.values()
    where = "/data/users/jjwu/a/pytorch/test/dynamo/test_misc.py"
    assert [(b.compile_id, b.location) for b in run.graph_breaks] == [
        ("0/0", f"{where}:9551"),
        ("1/0", f"{where}:9553"),
    ]
    assert {b.reason for b in run.graph_breaks} == {
        "skip function graph_break in file /data/users/jjwu/a/pytorch/torch/_dynamo/decorators.py"
    }


def test_a_compile_whose_record_holds_no_start_started_its_wall_before_the_record():
    """cache_hit_miss.log's records hold no start time: each compile started
    its wall before its record was written, on the log's clock, not the
    import's."""
    session = import_trace([str(INPUTS / "cache_hit_miss.log")], workers=1)
    (run,) = session.runs.values()
    assert session.imported is not None and run.started_t is not None
    for c in run.compiles.values():
        assert c.record is not None and c.wall_s is not None
        assert c.record.start_t == pytest.approx(c.record.t - c.wall_s)
        assert run.started_t <= c.record.start_t < c.record.t
