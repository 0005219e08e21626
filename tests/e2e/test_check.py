"""Real ``dlcprof check -- CMD`` runs of the sample project
(tests/programs/budget_project): over budget, within it, against a baseline,
a failing program. (A torchrun job whose rank 1 alone recompiles: test_torchrun.py.)"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS

from dlcprof.report.load import load_session

# The runs share the baseline the first writes: one process runs them all.
pytestmark = pytest.mark.xdist_group("test_check")

PROJECT = PROGRAMS / "budget_project"
TRAIN = PROJECT / "train.py"
BREAK_LINE = 21  # model.py's data-dependent `if`
FIND_SPEC_FIRST = PROGRAMS / "find_spec_first.py"
FIND_SPEC_BREAK = 16  # its print
GRAPH_CACHES_OFF = {"TORCHINDUCTOR_FX_GRAPH_CACHE": "0", "TORCHINDUCTOR_AUTOGRAD_CACHE": "0"}


def check(
    *args: str, cwd: Path, env: dict[str, str] | None = None, quiet: bool = True
) -> subprocess.CompletedProcess:
    """``dlcprof check [--quiet] OPTIONS -- PROGRAM ARGS`` (the options before ``--``)."""
    i = args.index("--")
    argv = [sys.executable, "-m", "dlcprof.cli", "check", *(["--quiet"] * quiet), *args[:i], "--"]
    return subprocess.run(
        [*argv, *args[i + 1 :]],
        cwd=cwd,
        env={**os.environ, "GITHUB_ACTIONS": "", **(env or {})},
        capture_output=True,
        text=True,
        timeout=600,
    )


@pytest.fixture(scope="module")
def baseline(tmp_path_factory) -> tuple[Path, subprocess.CompletedProcess]:
    """Over budget (no graph break allowed), as on GitHub Actions, with JUnit
    XML, the session saved and the summary printed: the baseline of the runs
    after it. Inductor's graph caches off: every graph lowered, for the
    compile cost by the program's code (a cache hit lowers nothing)."""
    tmp = tmp_path_factory.mktemp("check")
    summary = tmp / "summary.md"
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(PROGRAMS.parent.parent)}
    env |= {"GITHUB_STEP_SUMMARY": str(summary), **GRAPH_CACHES_OFF}
    proc = check(
        "--max-graph-breaks", "0", "--junit", str(tmp / "junit.xml"), "--json",
        str(tmp / "base.json"), "--", sys.executable, str(TRAIN), cwd=tmp, env=env, quiet=False,
    )  # fmt: skip
    return tmp, proc


def test_over_budget_fails_naming_the_line_for_github_and_junit(baseline):
    tmp, proc = baseline
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "batch 4 loss" in proc.stdout  # the program's own output passes through
    where = f"tests/programs/budget_project/model.py:{BREAK_LINE}"  # in the repository
    assert f"✗ {where}: graph break: Data-dependent branching" in proc.stderr
    assert "dlcprof check: FAILED, 1 violation (graph breaks: 1; 1 process judged)" in proc.stderr
    assert "compile time = CPU seconds of each compile" in proc.stderr
    (line,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("::error ")]
    head = (
        f"::error file=tests/programs/budget_project/model.py,line={BREAK_LINE},"
        "title=dlcprof check%3A graph breaks::graph break: Data-dependent branching (hint: "
    )
    assert line.startswith(head), line
    assert line.endswith("(graph breaks 1 > 0)"), line
    summary = (tmp / "summary.md").read_text()
    assert summary.startswith("### dlcprof check: FAILED")
    assert f"| `tests/programs/budget_project/model.py:{BREAK_LINE}` | graph breaks |" in summary
    suite = ET.parse(tmp / "junit.xml").getroot().find("testsuite")
    failures = suite.findall("testcase/failure")
    assert suite.get("failures") == "1" and len(failures) == 1
    assert failures[0].get("message", "").startswith(f"{where}: graph break")


def test_unchanged_against_its_baseline_within_budget_passes(baseline):
    tmp, _ = baseline
    proc = check(
        "--baseline", str(tmp / "base.json"), "--max-graph-breaks", "1", "--",
        sys.executable, str(TRAIN), cwd=tmp,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "dlcprof check: passed (1 process judged on graph breaks, graph breaks new" in (
        proc.stderr
    )
    # Within the tolerance either way: an increase is allowed, a decrease is no regression.
    assert "in the baseline (" in proc.stderr
    assert "within the 25% allowed" in proc.stderr or "a decrease, no regression" in proc.stderr


# Its logic, in the default run: tests/unit/test_check_judge.py's
# test_a_recompile_the_baseline_had_not_is_named_by_its_guard (a recorded real run);
# --baseline read by check: test_unchanged_against_its_baseline_within_budget_passes.
@pytest.mark.slow
def test_a_new_recompile_against_the_baseline_fails_naming_the_guard(baseline):
    tmp, _ = baseline
    proc = check(
        "--baseline", str(tmp / "base.json"), "--", sys.executable, str(TRAIN), "--sizes", "4,6",
        cwd=tmp,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    new = [ln for ln in proc.stderr.splitlines() if ln.startswith("✗") and "new recompile" in ln]
    assert new, proc.stderr[-3000:]
    assert "size mismatch at index 0. expected 4, actual 6" in new[0]


def test_a_failing_program_gives_its_own_status(tmp_path):
    proc = check(
        "--max-graph-breaks", "0", "--", sys.executable, "-c", "import sys; sys.exit(3)",
        cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 3, proc.stderr[-3000:]
    assert "the program failed (exit status 3): dlcprof check exits with its status" in proc.stderr


def test_a_program_that_looks_for_torch_first_is_seen_and_its_break_fails(tmp_path):
    """``importlib.util.find_spec("torch")`` before ``import torch`` (as datasets
    and transformers do) hides nothing: the compile is seen, its break judged."""
    proc = check(
        "--max-graph-breaks", "0", "--json", str(tmp_path / "s.json"), "--",
        sys.executable, str(FIND_SPEC_FIRST), cwd=tmp_path,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert f"✗ {FIND_SPEC_FIRST}:{FIND_SPEC_BREAK}: graph break:" in proc.stderr
    (run,) = load_session(tmp_path / "s.json").runs.values()
    assert run.compiles and [b.location for b in run.graph_breaks] == [
        f"{FIND_SPEC_FIRST}:{FIND_SPEC_BREAK}"
    ]


def test_a_program_dlcprof_never_saw_fails_with_the_reason(tmp_path):
    """``python -I`` skips the bootstrap: the program compiles, breaks and
    exits 0 unseen, and the gate fails rather than pass what it did not see."""
    proc = check(
        "--max-graph-breaks", "0", "--", sys.executable, "-I", str(FIND_SPEC_FIRST), cwd=tmp_path
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    assert "inside the compiled step" in proc.stdout  # it ran, and broke
    assert "✗ dlcprof saw no compile: " in proc.stderr and "python -I skips" in proc.stderr
    assert "dlcprof check: FAILED, 1 violation (no compile seen: 1; 0 processes judged)" in (
        proc.stderr
    )


def test_a_fullgraph_break_fails_at_its_line_with_an_annotation(tmp_path):
    """``fullgraph=True`` turns the break into an exception the program dies of:
    the break is judged at its line with its id, as an ordinary break's is; the
    budgets it left unjudged fail too."""
    env = {"GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": str(PROGRAMS.parent.parent)}
    proc = check(
        "--max-graph-breaks", "0", "--max-compiles", "5", "--", sys.executable,
        str(FIND_SPEC_FIRST), "--fullgraph", cwd=tmp_path, env=env,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]  # the program's own status: it raised
    where = f"tests/programs/find_spec_first.py:{FIND_SPEC_BREAK}"  # in the repository
    bad = [ln for ln in proc.stderr.splitlines() if ln.startswith(f"✗ {where}")]
    assert len(bad) == 2, proc.stderr[-3000:]
    assert bad[0].startswith(f"✗ {where}: graph break: Failed to trace builtin operator")
    assert "the compile raised it" in bad[0] and "[GB0059]" in bad[0]
    assert "compiles not judged past the compile that raised (COMPILE CRASHED" in bad[1]
    notes = [ln for ln in proc.stdout.splitlines() if ln.startswith("::error ")]
    assert [n.split("::")[1] for n in notes] == [
        f"error file=tests/programs/find_spec_first.py,line={FIND_SPEC_BREAK},"
        "title=dlcprof check%3A graph breaks",
        f"error file=tests/programs/find_spec_first.py,line={FIND_SPEC_BREAK},"
        "title=dlcprof check%3A compiles",
    ]


THROUGH = PROGRAMS / "through_library.py"


def marked(marker: str) -> int:
    """The line of ``THROUGH`` marked ``# MARKER``."""
    lines = THROUGH.read_text().splitlines()
    return next(i for i, ln in enumerate(lines, 1) if ln.endswith(f"# {marker}"))


@pytest.fixture(scope="module")
def vendorlib(tmp_path_factory) -> dict[str, str]:
    """An installed package: ``vendorlib`` in a site-packages folder on PYTHONPATH."""
    site = tmp_path_factory.mktemp("venv") / "site-packages"
    site.mkdir()
    (site / "vendorlib.py").write_text(
        "def log_and_scale(y):\n    print('vendorlib: scaling')\n    return y * 2\n"
    )
    # On GitHub, without GITHUB_WORKSPACE: paths relative to the git root above the cwd.
    return {"PYTHONPATH": str(site), "GITHUB_ACTIONS": "true", "GITHUB_WORKSPACE": ""}


def test_a_break_inside_a_package_is_annotated_at_the_users_line(vendorlib):
    proc = check(
        "--max-graph-breaks", "0", "--", sys.executable, str(THROUGH), cwd=PROGRAMS, env=vendorlib
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    where = f"tests/programs/through_library.py:{marked('CALL_LINE')}"
    said = "graph break: Failed to trace builtin operator (broke inside vendorlib.py:2)"
    assert f"✗ {where}: {said}" in proc.stderr
    (note,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("::error ")]
    file, line = where.split(":")
    assert note.startswith(f"::error file={file},line={line},title=dlcprof check%3A graph breaks")
    assert said in note


def test_findings_only_inside_a_package_are_one_violation_at_the_compile_call(vendorlib):
    proc = check(
        "--max-compiles", "0", "--", sys.executable, str(THROUGH), "--library-only", cwd=PROGRAMS,
        env=vendorlib,
    )  # fmt: skip
    assert proc.returncode == 1, proc.stderr[-3000:]
    (bad,) = [ln for ln in proc.stderr.splitlines() if ln.startswith("✗")]
    assert bad.startswith(
        f"✗ tests/programs/through_library.py:{marked('COMPILE_LINE')}: 2 compiled frames only "
        "inside libraries, at no line of yours (the torch.compile call that reached them): "
        "vendorlib.py:1 log_and_scale; vendorlib.py:2 "
    ), bad
    (note,) = [ln for ln in proc.stdout.splitlines() if ln.startswith("::error ")]
    assert "site-packages" not in note


def test_the_program_gets_compile_cost_by_its_code_and_the_regional_rule(baseline):
    """Compile seconds by the program's functions and modules, and the regional
    item they make for its two Block instances (the baseline run's)."""
    tmp, proc = baseline
    assert "Compile cost by your code" in proc.stderr, proc.stderr[-3000:]
    report = json.loads((tmp / "base.json").read_text())
    (run,) = report["runs"]
    cost = run["compile_cost"]
    assert cost is not None and cost["probe_s"] > 0
    assert any(f["function"] == "Block.forward" for f in cost["functions"])
    assert any(m["cls"] == "Block" for m in cost["modules"])
    assert "regional" in [item["rule"] for item in report["advice"]["items"]]
