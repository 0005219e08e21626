"""Graph breaks carry torch's id and link (docs/graph-breaks.md): a real script's
print break and .item() break under TORCH_TRACE, imported."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from helpers.paths import PROGRAMS
from helpers.worker import TEST_CACHE

from dlcprof.cli import main
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.figures.check.places import relative_where, repository_root
from dlcprof.report.load import load_session
from dlcprof.trace_records import gb_catalogue

CLI = [sys.executable, "-m", "dlcprof.cli"]
SITE = "https://meta-pytorch.github.io/compile-graph-break-site/gb/"


def _line(needle: str) -> str:
    src = (PROGRAMS / "breaks.py").read_text().splitlines()
    return f"{PROGRAMS / 'breaks.py'}:{1 + next(i for i, s in enumerate(src) if needle in s)}"


@pytest.fixture(scope="module")
def attached_breaks(tmp_path_factory) -> tuple[Path, Path]:
    """breaks.py under ``dlcprof run --json`` from its own folder, TORCH_TRACE set
    for it too: the session saved and (a copy of) the log torch wrote."""
    tmp = tmp_path_factory.mktemp("breaks")
    path, trace = tmp / "s.json", tmp / "trace"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": TEST_CACHE, "TORCH_TRACE": str(trace)}
    run = subprocess.run(
        [*CLI, "run", "--quiet", "--json", str(path), "--", sys.executable, "breaks.py"],
        cwd=PROGRAMS,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    # What torch wrote for this run alone, whatever a later trial adds.
    shutil.copytree(trace, tmp / "torch_trace")
    return path, tmp / "torch_trace"


@pytest.mark.xdist_group("test_graph_break_ids")
def test_a_print_and_an_item_break_carry_their_ids_and_links(attached_breaks, tmp_path, capsys):
    _, trace = attached_breaks
    assert main(["import", str(trace), "-o", str(tmp_path / "out")]) == 0
    capsys.readouterr()
    (run,) = load_session(tmp_path / "out").runs.values()
    found = {b.location: (b.gb_id, b.link) for b in fgb.breaks(run)}
    assert found == {
        _line('print("step")'): ("GB0059", f"{SITE}gb0059.html"),
        _line("n = z.sum().item()"): ("GB0124", f"{SITE}gb0124.html"),
    }
    # The catalogue the running torch ships names the same types.
    cat = gb_catalogue.installed()
    assert {b.reason for b in fgb.breaks(run)} == {
        cat.entry("GB0059").title,
        cat.entry("GB0124").title,
    }
    assert [k.gb_id for k in fgb.kinds([run, run])] == ["GB0059", "GB0124"]
    assert fgb.kinds([run, run])[0].frames == 2


def test_try_applies_the_item_hatch_and_measures_the_break_gone(tmp_path):
    """The bundled graph-breaks workload: its .item() break's advice is the
    capture_scalar_outputs setting, which `dlcprof try` applies to the same
    workload; the trial has the other break only, one graph fewer."""
    path = tmp_path / "s.json"
    common = ("--size", "small", "--reps", "3", "--iters", "5", "--no-hotspots", "--quiet")
    run = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "run", "graph-breaks", *common, "--json", str(path)],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    session = load_session(path)
    items = far.advise(session, session.latest_run).items
    n, item = next((i, a) for i, a in enumerate(items, 1) if "GB0124" in a.title)
    assert item.options == {"hatch": "capture_scalar_outputs"}
    tried = subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "try", str(path), str(n), "--quiet"],
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert tried.returncode == 0, tried.stderr[-2000:]
    session = load_session(path)
    (t,) = session.tried
    trial = session.runs[t.run_id]
    assert trial.settings.hatch == "capture_scalar_outputs"
    assert {b.gb_id for b in fgb.breaks(trial)} == {"GB0170"}
    assert (t.breaks_before, t.breaks_after) == (2, 1)
    assert t.graphs_after == t.graphs_before - 1
    assert t.measured_after_s is not None and t.steady_after_ms is not None
    assert "graph breaks 2 → 1" in tried.stdout + tried.stderr


@pytest.mark.xdist_group("test_graph_break_ids")
def test_try_on_an_attached_program_sets_the_hatch_before_it_compiles(attached_breaks, tmp_path):
    """The same script attached (dlcprof run -- CMD, from its own folder): `try`
    runs the recorded command again where it ran, capture_scalar_outputs set by
    dlcprof's probes at Dynamo's import, its code unchanged: the .item() break is
    gone, one graph fewer, the program's wall beside it."""
    path = tmp_path / "s.json"
    shutil.copy(attached_breaks[0], path)  # try adds its trial to the session
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": TEST_CACHE}
    session = load_session(path)
    program = fat.advised_run(session)
    items = far.advise(session, program).items
    n, item = next((i, a) for i, a in enumerate(items, 1) if "GB0124" in a.title)
    assert item.options == {"hatch": "capture_scalar_outputs"}
    tried = subprocess.run(
        [*CLI, "try", str(path), str(n), "--quiet"],
        cwd=tmp_path,  # not the program's folder: its recorded cwd is used
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert tried.returncode == 0, tried.stderr[-2000:]
    (t,) = load_session(path).tried
    assert t.options == {"hatch": "capture_scalar_outputs"}
    assert (t.breaks_before, t.breaks_after) == (2, 1)
    assert t.graphs_after == t.graphs_before - 1
    assert t.measured_before_s and t.measured_after_s
    assert t.wall_before_s and t.wall_after_s
    assert "graph breaks 2 → 1" in tried.stdout and "program wall" in tried.stdout


@pytest.mark.slow
def test_try_ignores_transformers_warning_once_and_the_break_is_gone(tmp_path):
    """A real framework's logging call: Hugging Face's GPT-2 classifier calls
    ``logger.warning_once`` inside its forward (tests/programs/hf_warning_once.py).
    The break is said inside transformers, its item's hatch names the method
    Dynamo matches (the lru_cache'd function on logging.Logger), and `try` sets
    it through the probes (transformers defines it after torch's import: it is
    added at the first compile): the break is gone, one graph fewer."""
    path = tmp_path / "s.json"
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": TEST_CACHE, "HF_HUB_OFFLINE": "1"}
    cli = [sys.executable, "-m", "dlcprof.cli"]
    program = [sys.executable, str(PROGRAMS / "hf_warning_once.py")]
    run = subprocess.run(
        [*cli, "run", "--quiet", "--no-hotspots", "--json", str(path), "--", *program],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    session = load_session(path)
    advised = fat.advised_run(session)
    (b,) = fgb.breaks(advised)
    assert b.gb_id == "GB0291" and "transformers/models/gpt2/modeling_gpt2.py" in b.detail
    assert not fgb.users(advised, b)
    items = far.advise(session, advised).items
    n, item = next((i, a) for i, a in enumerate(items, 1) if "GB0291" in a.title)
    assert "inside transformers/models/gpt2/modeling_gpt2.py:" in item.title
    assert item.options == {"hatch": "ignore_logging_functions=logging.Logger.warning_once"}
    tried = subprocess.run(
        [*cli, "try", str(path), str(n), "--quiet"],
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
    )
    assert tried.returncode == 0, tried.stderr[-2000:]
    (t,) = load_session(path).tried
    assert (t.breaks_before, t.breaks_after) == (1, 0)
    assert t.graphs_after == t.graphs_before - 1
    assert t.measured_before_s and t.measured_after_s
    assert "graph breaks 1 → 0" in tried.stdout


def _check(*options: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", "check", "--quiet", "--max-graph-breaks", "0"]
        + [*options, "--", sys.executable, str(PROGRAMS / "breaks.py")],
        env={**os.environ, "GITHUB_ACTIONS": "", "TORCHINDUCTOR_CACHE_DIR": TEST_CACHE},
        capture_output=True,
        text=True,
        timeout=600,
    )


def test_check_accepts_known_kinds_of_break_by_id():
    both = _check("--allow-graph-break", "GB0059", "--allow-graph-break", "gb0124")
    assert both.returncode == 0, both.stderr[-3000:]
    assert "2 of an allowed kind not counted" in both.stderr
    one = _check("--allow-graph-break", "GB0059")
    assert one.returncode == 1, one.stderr[-3000:]
    (line,) = [ln for ln in one.stderr.splitlines() if "graph break:" in ln]
    # Said relative to the repository, as GitHub places it on a diff.
    at = relative_where(_line("n = z.sum().item()"), repository_root())
    assert f"{at}: graph break" in line and "[GB0124]" in line
    bad = _check("--allow-graph-break", "item")
    assert bad.returncode == 2 and "give a graph-break id, e.g. GB0124" in bad.stderr
