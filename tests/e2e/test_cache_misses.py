"""Real ``dlcprof check --max-cache-misses`` runs of one tiny program on its own
Inductor cache folder: cold on a new folder (fails), warm on the same folder
(passes), then one Inductor setting changed and one op added, each named
against the warm run as the baseline."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS

pytest_plugins = ["pytester"]

# The runs fill and read one cache folder in order: one process runs them all.
pytestmark = pytest.mark.xdist_group("test_cache_misses")

PROGRAM = PROGRAMS / "cache_key.py"
FUNCTION_LINE = 12  # cache_key.py's `def f`


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
def runs(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess, subprocess.CompletedProcess]:
    """The cold run on a folder that does not exist yet, then the warm run on it."""
    tmp = tmp_path_factory.mktemp("cache")
    github = {
        "GITHUB_ACTIONS": "true",
        "GITHUB_WORKSPACE": str(PROGRAMS.parent.parent),
        "GITHUB_STEP_SUMMARY": str(tmp / "summary.md"),
    }
    cold = check(tmp, "--max-cache-misses", "0", "--junit", str(tmp / "junit.xml"), **github)
    warm = check(tmp, "--max-cache-misses", "0", "--json", str(tmp / "warm.json"))
    return tmp, cold, warm


def test_a_new_cache_folder_fails_the_gate_and_says_so(runs):
    tmp, cold, _ = runs
    assert cold.returncode == 1, cold.stderr[-3000:]
    where = f"{PROGRAM}:{FUNCTION_LINE}: cache miss: f (AOTAutograd cache, FX graph cache): "
    assert where + "a new cache folder (cold)" in cold.stderr
    assert "TORCHINDUCTOR_CACHE_DIR did not exist" in cold.stderr
    assert "FAILED, 1 violation (cache misses: 1;" in cold.stderr
    (line,) = [ln for ln in cold.stdout.splitlines() if ln.startswith("::error ")]
    assert line.startswith(f"::error file=tests/programs/cache_key.py,line={FUNCTION_LINE},")
    assert "TORCHINDUCTOR_CACHE_DIR did not exist" in line
    assert "| `tests/programs/cache_key.py:12` | cache misses |" in (tmp / "summary.md").read_text()
    suite = ET.parse(tmp / "junit.xml").getroot().find("testsuite")
    (failure,) = suite.findall("testcase/failure")
    assert "a new cache folder (cold)" in failure.get("message", "")


def test_the_second_run_on_the_same_folder_hits_every_graph(runs):
    tmp, _, warm = runs
    assert warm.returncode == 0, warm.stderr[-3000:]
    assert "cache misses 0 ≤ 0" in warm.stderr
    events = json.loads((tmp / "warm.json").read_text())["events"]
    lookups = [e for e in events if e["type"] == "CacheLookedUp"]
    assert {(e["layer"], e["state"]) for e in lookups} == {
        ("aotautograd", "hit"),
        ("fx_graph", "hit"),
    }
    assert all(e["saved_s"] > 0 for e in lookups)


def test_a_changed_inductor_setting_is_named(runs):
    tmp, _, _ = runs
    proc = check(
        tmp, "--max-cache-misses", "0", "--baseline", str(tmp / "warm.json"), FALLBACK_RANDOM="1"
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "Inductor setting `fallback_random` False → True" in proc.stderr
    assert "the graph changed" not in proc.stderr


def test_an_added_op_is_named_as_a_changed_graph(runs):
    tmp, _, _ = runs
    proc = check(
        tmp, "--max-cache-misses", "0", "--baseline", str(tmp / "warm.json"), ONE_MORE_OP="1"
    )
    assert proc.returncode == 1, proc.stderr[-3000:]
    where = f"{PROGRAM}:{FUNCTION_LINE}: cache miss: f (AOTAutograd cache, FX graph cache): "
    assert where + "the graph changed: 1 op more (2 → 3)" in proc.stderr
    assert "fallback_random" not in proc.stderr


PLUGIN_TESTS = """
import pytest
import torch


def f(x):
    return torch.cos(x) * 3


@pytest.mark.compile_budget(cache_misses=0)
def test_cold():
    torch.compile(f)(torch.ones(4))


@pytest.mark.compile_budget(cache_misses=0)
def test_warm():
    torch.compile(f)(torch.ones(4))
"""


def test_the_pytest_marker_fails_the_cold_test_and_passes_the_warm_one(pytester, monkeypatch):
    monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", str(pytester.path / "inductor-cache"))
    pytester.makepyfile(test_warm_start=PLUGIN_TESTS)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=600)
    result.assert_outcomes(failed=1, passed=1)
    out = result.stdout.str()
    assert "FAILED test_warm_start.py::test_cold" in out
    assert "cache miss: f (AOTAutograd cache, FX graph cache)" in out
