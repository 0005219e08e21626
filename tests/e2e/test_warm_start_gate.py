"""Real ``dlcprof check --max-cache-misses`` runs of one tiny program (two 1-op
graphs) on its own Inductor cache folder, one sequence reused by every test:
cold on a new folder (fails), warm on the same folder (passes), then one op
added to f and one Inductor setting changed for g, each named against the warm
run as the baseline; the pytest marker on the same warm folder. The logic of
each explanation is unit-tested on recorded logs (tests/unit/test_cache_misses.py)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS

from dlcprof import events as ev
from dlcprof.figures import boot as fboot
from dlcprof.report.load import load_report
from dlcprof.session import Session

pytest_plugins = ["pytester"]

# The runs fill and read one cache folder in order: one process runs them all.
pytestmark = pytest.mark.xdist_group("test_warm_start_gate")

PROGRAM = PROGRAMS / "cache_key.py"
F_LINE, G_LINE = 10, 17  # cache_key.py's `def f`, `def g`


def check(tmp: Path, *options: str, **env: str) -> subprocess.CompletedProcess:
    argv = [sys.executable, "-m", "dlcprof.cli", "check", "--quiet", *options, "--"]
    return subprocess.run(
        [*argv, sys.executable, str(PROGRAM)],
        cwd=tmp,
        env={
            **os.environ,
            "GITHUB_ACTIONS": "",
            "TORCHINDUCTOR_CACHE_DIR": str(tmp / "inductor-cache"),
            **env,
        },
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, subprocess.CompletedProcess | Path]:
    """The cold run on a folder that does not exist yet, the warm run on it, then
    the changed program against the warm run."""
    tmp = tmp_path_factory.mktemp("cache")
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(PROGRAMS.parent.parent),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
    }
    gate = ("--max-cache-misses", "0")
    cold = check(tmp, *gate, "--junit", str(tmp / "junit.xml"), **github)
    warm = check(tmp, *gate, "--json", str(tmp / "warm.json"))
    changed = check(
        tmp, *gate, "--baseline", str(tmp / "warm.json"), ONE_MORE_OP="1", FALLBACK_RANDOM="1"
    )
    return {"tmp": tmp, "cold": cold, "warm": warm, "changed": changed}


def test_a_new_cache_folder_fails_the_gate_and_says_so(runs):
    tmp, cold = runs["tmp"], runs["cold"]
    assert cold.returncode == 1, cold.stderr[-3000:]
    for name, line in (("f", F_LINE), ("g", G_LINE)):
        # Under GitHub Actions, a path in the workspace is said from its root.
        where = f"tests/programs/cache_key.py:{line}: cache miss: {name} "
        where += "(AOTAutograd cache, FX graph cache): "
        assert where + "a new cache folder (cold)" in cold.stderr
    assert "TORCHINDUCTOR_CACHE_DIR did not exist" in cold.stderr
    assert "FAILED, 2 violations (cache misses: 2;" in cold.stderr
    errors = [ln for ln in cold.stdout.splitlines() if ln.startswith("::error ")]
    assert errors[0].startswith(f"::error file=tests/programs/cache_key.py,line={F_LINE},")
    assert all("TORCHINDUCTOR_CACHE_DIR did not exist" in ln for ln in errors)
    assert len(errors) == 2
    summary = (tmp / "summary.md").read_text()
    assert f"| `tests/programs/cache_key.py:{F_LINE}` | cache misses |" in summary
    suite = ET.parse(tmp / "junit.xml").getroot().find("testsuite")
    failures = suite.findall("testcase/failure")
    assert failures and all("a new cache folder (cold)" in f.get("message", "") for f in failures)


def test_the_second_run_on_the_same_folder_hits_every_graph(runs):
    tmp, warm = runs["tmp"], runs["warm"]
    assert warm.returncode == 0, warm.stderr[-3000:]
    assert "cache misses 0 ≤ 0" in warm.stderr
    events = load_report(tmp / "warm.json")["events"]
    lookups = [e for e in events if e["type"] == "CacheLookedUp"]
    assert sorted((e["compile_id"], e["layer"], e["state"]) for e in lookups) == [
        ("0/0", "aotautograd", "hit"),
        ("0/0", "fx_graph", "hit"),
        ("1/0", "aotautograd", "hit"),
        ("1/0", "fx_graph", "hit"),
    ]
    assert all(e["saved_s"] > 0 for e in lookups)


def test_the_warm_boot_is_split_and_says_what_the_hits_saved(runs):
    """The boot of the warm run (figures/boot.py): the import timed by the
    bootstrap, the pieces adding up, the hits' saving by torch's count."""
    events = load_report(runs["tmp"] / "warm.json")["events"]
    session = Session.from_events([ev.decode(json.dumps(e)) for e in events])
    (run,) = (r for r in session.runs.values() if r.process is not None)
    boot = fboot.boot(session, run)
    assert boot is not None and boot.start == "when the program started"
    pieces = {p.label: p.seconds for p in boot.first.pieces}
    assert pieces[fboot.IMPORT] > 0 and pieces["Dynamo"] > 0
    assert sum(s for s in pieces.values() if s is not None) == pytest.approx(boot.first.seconds)
    assert boot.first.seconds < session.program_exit.wall_s
    assert boot.saved_s > 0


def miss_line(proc: subprocess.CompletedProcess, name: str, line: int) -> str:
    where = f"{PROGRAM}:{line}: cache miss: {name} (AOTAutograd cache, FX graph cache): "
    (found,) = [ln for ln in proc.stderr.splitlines() if where in ln]
    return found.partition(where)[2]


def test_an_added_op_is_named_as_a_changed_graph_at_its_line(runs):
    changed = runs["changed"]
    assert changed.returncode == 1, changed.stderr[-3000:]
    assert miss_line(changed, "f", F_LINE) == (
        "the graph changed: 1 op more (1 → 2) (cache misses 2 > 0)"
    )


def test_a_changed_inductor_setting_is_named_alone(runs):
    assert miss_line(runs["changed"], "g", G_LINE) == (
        "Inductor setting `fallback_random` False → True (cache misses 2 > 0)"
    )


PLUGIN_TESTS = f"""
import sys

import pytest
import torch

sys.path.insert(0, {str(PROGRAMS)!r})
from cache_key import f


@pytest.mark.compile_budget(cache_misses=0)
def test_warm():
    torch.compile(f)(torch.ones(2, 2))


@pytest.mark.compile_budget(cache_misses=0)
def test_cold():
    torch.compile(f, dynamic=False)(torch.ones(5, 5))  # a shape the folder has not seen
"""


def test_the_pytest_marker_fails_a_miss_and_passes_a_hit(runs, pytester, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(runs["tmp"] / "inductor-cache"))
    pytester.makepyfile(test_warm_start=PLUGIN_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=600)
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "FAILED test_warm_start.py::test_cold" in out
    assert "cache miss: f (AOTAutograd cache, FX graph cache)" in out
