"""tlparse's own test inputs (tests/fixtures/tlparse, from meta-pytorch/tlparse's
tests/inputs under its BSD-3 licence, LICENSE beside them): each imports with
exit 0, and the figures both tools give agree with tlparse run on the same
log: the compile ids it lists, each compile's Inductor cache state, the
compiles that failed and how, those Dynamo restarted and why, and the
records whose payload fails its md5.
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

from dlcprof import events as ev
from dlcprof.cli import main
from dlcprof.trace_import.job import import_trace
from dlcprof.trace_records.log_file import BAD_MD5, CUT, Damage, read_records
from dlcprof.trace_records.payloads import combine_cache_states

TLPARSE = Path(sys.executable).parent / "tlparse"
INPUTS = FIXTURES / "tlparse"
# Every log, a multi-rank folder's each on its own (its empty files are no log).
LOGS = sorted(p for p in INPUTS.rglob("*") if p.suffix in (".log", ".txt") and p.stat().st_size > 0)
FOLDERS = sorted(p for p in INPUTS.iterdir() if p.is_dir())
# AOTInductor logs: one compilation_metrics record with no compile id, which
# tlparse leaves out of its compile directory and dlcprof shows as compile "?".
AOT = re.compile(r"inductor_provenance_(aot_|extended)")
# dlcprof's cache state is Inductor's FX graph cache; tlparse lists AOTAutograd's beside it.
_FX_CACHE = re.compile(r"fx_graph_cache_(hit|miss|bypass)")
_RESTART_ROW = re.compile(
    r"<tr> <td> <a href='[^']*'>\[([^\]_]+)_\d+\]</a>\s*</td>"
    r"<td> RestartAnalysis </td><td><pre>([^<]*)</pre>"
)
_FAILURE_ROW = re.compile(
    r"<tr> <td> <a href='[^']*'>\[([^\]]+)\]</a>\s*</td><td><pre>([^<]*)</pre>"
)


@dataclass
class _Tlparse:
    ids: set[str]  # compile ids listed ("[0/1_1]", a later attempt of 0/1, is not one)
    cache: dict[str, str]  # compile id -> Inductor's FX graph cache: hit / miss / bypass
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
    cache = {}
    for key, entry in listed.items():
        states = [m[1] for a in entry.get("artifacts", []) if (m := _FX_CACHE.match(a["name"]))]
        if states:
            cache[key.strip("[]")] = combine_cache_states(states)
    html = out / "failures_and_restarts.html"
    table = html.read_text() if html.exists() else ""
    rows = _FAILURE_ROW.findall(table)
    restarts: dict[str, set[str]] = {}
    for cid, reason in _RESTART_ROW.findall(table):
        restarts.setdefault(cid, set()).add(unescape(reason))
    m = re.search(r"fail_payload_md5: (\d+)", done.stdout + done.stderr)
    return _Tlparse(
        ids={k.strip("[]") for k in listed if "_" not in k and k != "[-/-]"},
        cache=cache,
        failures={cid: kind.strip() for cid, kind in rows},
        restarts=restarts,
        bad_md5=int(m[1]) if m else 0,
    )


@pytest.mark.parametrize("log", LOGS, ids=[str(p.relative_to(INPUTS)) for p in LOGS])
def test_each_log_imports_as_tlparse_reads_it(tmp_path, log):
    assert main(["import", str(log), "-o", str(tmp_path / "out")]) == 0
    tl = _tlparse(log, tmp_path / "tl")
    damage = Damage()
    for _ in read_records(str(log), damage):
        pass
    assert damage.counts.get(BAD_MD5, 0) + damage.counts.get(CUT, 0) == tl.bad_md5
    (run,) = import_trace([str(log)], workers=1).runs.values()
    mine = {c for c in run.compiles if not c.endswith(ev.BACKWARD)}
    assert mine == ({"?"} if AOT.match(log.name) else tl.ids)
    assert not AOT.match(log.name) or tl.ids == set()
    # A compile's cache state is its forward's and its backward's together.
    states: dict[str, list[str]] = {}
    for cid, c in run.compiles.items():
        if c.record is not None and c.record.cache is not None:
            states.setdefault(cid.removesuffix(ev.BACKWARD), []).append(c.record.cache)
    assert {cid: combine_cache_states(s) for cid, s in states.items()} == tl.cache
    failed = {cid: c.record.fail_type for cid, c in run.compiles.items() if c.record}
    assert {cid: kind for cid, kind in failed.items() if kind} == tl.failures
    restarted = {
        cid: {str(r) for r in c.record.metrics.get("restart_reasons") or []}
        for cid, c in run.compiles.items()
        if c.record is not None
    }
    assert {cid: r for cid, r in restarted.items() if r} == tl.restarts


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


def test_an_aotinductor_log_is_said_as_such():
    session = import_trace([str(INPUTS / "inductor_provenance_aot_log.txt")], workers=1)
    assert session.imported is not None
    assert any("is an AOTInductor log" in n for n in session.imported.notes)
    (run,) = session.runs.values()
    assert run.compiles["?"].wall_s == pytest.approx(1747851718.300222 - 1747851702.373735)
