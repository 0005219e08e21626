"""A compile that raises into the program is a crash, not "ran eagerly"
(issue 29, item 2).

tests/programs/compile_crash.py raises on every torch: its step's backend
fails, and Dynamo raises ``BackendCompilerFailed`` at the first step.
tests/programs/compile_crash_lightning.py is Lightning's ``self.log`` inside a
compiled step, without Lightning: Dynamo raises InternalTorchDynamoError inside
``inspect`` on torch 2.12 and 2.13 only (2.11 runs it through; 2.14 fixed it). The probe
(dlcprof/worker/probes/raised.py) sees the exception leave Dynamo's frame
callback; every view says the crash first, at the user's line, with the fixes.
"""

from __future__ import annotations

import dataclasses
import html
import importlib.util
import json
import subprocess
import sys

import pytest
import torch
from helpers.paths import PROGRAMS
from helpers.program import process_attached
from torch._dynamo.convert_frame import CatchErrorsWrapper

from dlcprof import events as ev
from dlcprof.console import attach_line, run_summary
from dlcprof.figures import outcome as fout
from dlcprof.figures.advice.rules import advise
from dlcprof.report import build_model, render_html, render_markdown
from dlcprof.report.schema import build_report, dumps_report
from dlcprof.session import Session
from dlcprof.worker.emit import ListEmitter
from dlcprof.worker.probes import ProbeNotes
from dlcprof.worker.probes import raised as raised_probe

PROGRAM = PROGRAMS / "compile_crash.py"
LIGHTNING = PROGRAMS / "compile_crash_lightning.py"
# Dynamo's inspect bug that the Lightning-style program hits (pytorch-lightning#21836):
# in torch from 2.12 (2.11 fits the program) until 2.14 fixed it.
BUGGY = ((2, 12), (2, 14))
LIGHTNING_CRASHES = pytest.mark.skipif(
    not BUGGY[0] <= tuple(int(p) for p in torch.__version__.split(".")[:2]) < BUGGY[1],
    reason=f"torch {torch.__version__} lacks Dynamo's inspect.getfullargspec bug of a "
    "rebound step (2.12 and 2.13 only): compile_crash_lightning.py fits, it does not crash",
)


def _line(program, text: str) -> int:
    """The line of ``program`` that raises in the compile."""
    return next(i for i, line in enumerate(program.read_text().splitlines(), 1) if text in line)


CRASH_LINE = _line(PROGRAM, "raise RuntimeError")
CRASH_ERROR = "BackendCompilerFailed: backend='broken_backend' raised: RuntimeError: this backend"


def _installed(monkeypatch) -> ListEmitter:
    """The probe wrapped around Dynamo's callback, unwrapped after the test."""
    monkeypatch.setattr(CatchErrorsWrapper, "__call__", CatchErrorsWrapper.__call__)
    sink = ListEmitter()
    raised_probe.install(raised_probe.RaisedCompiles(sink, lambda: "r"), ProbeNotes(sink, "r"))
    return sink


def _program(path):
    spec = importlib.util.spec_from_file_location(path.stem, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _raised(monkeypatch, path) -> ev.CompileRaised:
    """The one crash the probe said while ``path``'s program raised."""
    sink = _installed(monkeypatch)
    torch._dynamo.reset()
    program = _program(path)
    with pytest.raises(torch._dynamo.exc.TorchDynamoException):
        program.fit(program.Module())
    (raised,) = [e for e in sink.events if isinstance(e, ev.CompileRaised)]
    return raised


def test_a_raised_compile_is_said_at_the_users_line(monkeypatch):
    raised = _raised(monkeypatch, PROGRAM)
    assert raised.location == f"{PROGRAM}:{CRASH_LINE}"
    assert raised.error.startswith(CRASH_ERROR)


@LIGHTNING_CRASHES
def test_lightnings_log_in_a_compiled_step_is_said_at_its_line(monkeypatch):
    raised = _raised(monkeypatch, LIGHTNING)
    assert raised.location == f"{LIGHTNING}:{_line(LIGHTNING, 'inspect.getfullargspec')}"
    assert raised.error.startswith("InternalTorchDynamoError: AttributeError")
    assert "inspect.py" in raised.inside


FULLGRAPH = PROGRAMS / "fullgraph_break.py"


def test_a_break_under_fullgraph_carries_its_id_and_link(monkeypatch):
    """A fullgraph=True compile's print: Dynamo raises Unsupported; the probe
    reads the break's id from it, and the crash and check's finding carry it."""
    from dlcprof.figures.check.findings import graph_breaks

    sink = _installed(monkeypatch)
    torch._dynamo.reset()
    program = _program(FULLGRAPH)
    with pytest.raises(torch._dynamo.exc.Unsupported):
        torch.compile(program.step, fullgraph=True, backend="eager")(torch.ones(2))
    (raised,) = [e for e in sink.events if isinstance(e, ev.CompileRaised)]
    assert raised.gb_id == "GB0059"
    assert raised.location == f"{FULLGRAPH}:{_line(FULLGRAPH, 'print(')}"
    assert raised.inside == ""  # Dynamo's own raise is not where the program broke
    site = "https://meta-pytorch.github.io/compile-graph-break-site/gb/gb0059.html"
    assert f"[GB0059: {site}]" in fout.raised_headline(raised)
    s = Session()
    for e in (
        ev.ProgramStarted(argv=["python", "f.py"], cwd="/", pid=7),
        process_attached(7),
        dataclasses.replace(raised, run_id="pid7"),
    ):
        s.apply(e)
    (finding,) = graph_breaks(s.run("pid7"))
    assert finding.gb_id == "GB0059" and finding.words().endswith("[GB0059]")
    report = json.loads(dumps_report(build_report(build_model(s))))
    (run,) = report["runs"]
    assert (run["compile_raised"]["gb_id"], run["compile_raised"]["link"]) == ("GB0059", site)


def test_a_compile_that_falls_back_to_eager_raises_nothing(monkeypatch):
    sink = _installed(monkeypatch)
    torch._dynamo.reset()

    def breaks(x):
        print("a graph break")  # Dynamo breaks the graph here and goes on
        return x + 1

    assert torch.compile(breaks, backend="eager")(torch.ones(2)).tolist() == [2.0, 2.0]
    assert not [e for e in sink.events if isinstance(e, ev.CompileRaised)]


def test_without_dynamos_callback_the_probe_says_so_and_the_program_runs(monkeypatch):
    monkeypatch.delattr("torch._dynamo.convert_frame.CatchErrorsWrapper")
    sink = ListEmitter()
    raised_probe.install(raised_probe.RaisedCompiles(sink, lambda: "r"), ProbeNotes(sink, "r"))
    (gone,) = [e for e in sink.events if isinstance(e, ev.ProbeUnavailable)]
    assert gone.probe == raised_probe.PROBE and "CatchErrorsWrapper" in gone.reason


def _crashed_session() -> tuple[Session, ev.CompileRaised]:
    raised = ev.CompileRaised(
        run_id="pid7",
        error="InternalTorchDynamoError: AttributeError: 'method' object has no attribute",
        location="/home/u/train.py:25",
        inside="/usr/lib/python3.11/inspect.py:2474",
    )
    failed = ev.CompileFinished(
        run_id="pid7",
        compile_id="0/0",
        wall_s=0.4,
        start_t=1.0,
        is_backward=False,
        recompile_reason=None,
        fail_type="AttributeError",
        fail_reason="'method' object has no attribute '__dict__'",
        graph_op_count=None,
        guard_count=None,
        cache=None,
        metrics={},
    )
    s = Session()
    for e in (
        ev.ProgramStarted(argv=["python", "train.py"], cwd="/", pid=7),
        process_attached(7),
        failed,
        raised,
        ev.ErrorRaised(run_id="pid7", stage="program", message="uncaught ...", traceback=""),
        ev.RunFinished(run_id="pid7", status="crashed", wall_s=1.0),
    ):
        s.apply(e)
    return s, raised


def test_every_view_says_the_crash_first_and_no_eager_run():
    s, raised = _crashed_session()
    run = s.run("pid7")
    failed = next(iter(run.compiles.values())).record
    assert "eager" not in fout.frame_failed(failed)
    live = attach_line(raised, s)
    assert live is not None and live.plain.startswith("✗ COMPILE CRASHED /home/u/train.py:25")
    uncaught = ev.ErrorRaised(run_id="pid7", stage="program", message="uncaught ...")
    assert attach_line(uncaught, s) is None
    headline = fout.raised_headline(raised)
    assert "at /home/u/train.py:25" in headline and "broke inside inspect.py:2474" in headline
    from rich.console import Console

    console = Console(width=300, record=True)
    console.print(run_summary(run, s))
    said = console.export_text()
    assert said.index(fout.COMPILE_CRASHED) < said.index("crashed: uncaught")
    assert "@torch.compiler.disable" in said and "NOTHING COMPILED" not in said
    model = build_model(s)
    for page in (render_markdown(model), render_html(model)):
        assert html.unescape(headline) in html.unescape(page)
    advice = advise(s, run)
    assert advice.nothing is None
    first = advice.items[0]
    assert first.rule == "compile-raised" and first.where == "/home/u/train.py:25"
    assert "compile the inner model" in first.change


@pytest.mark.slow
def test_the_crashing_program_reads_as_a_crash_at_its_line(tmp_path):
    out = tmp_path / "c.json"
    argv = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--no-hotspots"]
    p = subprocess.run(
        [*argv, "--", sys.executable, str(PROGRAM)], capture_output=True, text=True, timeout=300
    )
    assert p.returncode == 1, p.stderr  # the program's own status
    where = f"{PROGRAM}:{CRASH_LINE}"
    lines = p.stderr.splitlines()
    crash = next((i for i, ln in enumerate(lines) if ln.startswith("✗ COMPILE CRASHED")), None)
    assert crash is not None, p.stderr
    assert where in lines[crash] and "BackendCompilerFailed" in lines[crash]
    # Issue 41, 8: no live line inside the program's own traceback; its end says it.
    assert crash < next(i for i, ln in enumerate(lines) if "crashed: uncaught" in ln)
    assert not [ln for ln in lines if "ERROR (program)" in ln]
    report = json.loads(out.read_text())
    # Nothing says the program ran eagerly, at any terminal width: the text as
    # wrapped or not, less the fixes' known costs (a disabled call runs eagerly).
    said = " ".join(p.stderr.split())
    for item in report["advice"]["items"]:
        said = said.replace(item["cost"], "")
    for wrong in ("runs eagerly", "ran eagerly", "NOTHING COMPILED", "nothing to change"):
        assert wrong not in said, wrong
    assert report["advice"]["nothing"] is None
    (run,) = report["runs"]
    assert run["status"] == "crashed" and run["nothing_compiled"] is None
    assert run["compile_raised"]["location"] == where
    assert run["compile_raised"]["error"].startswith(CRASH_ERROR)
    assert run["compile_raised"]["message"].startswith(fout.COMPILE_CRASHED)
    (item, *_) = report["advice"]["items"]
    assert item["rule"] == "compile-raised" and item["where"] == where


async def test_the_tui_banner_says_the_crash_first():
    from textual.geometry import Region

    from dlcprof.tui.app import DlcprofApp
    from dlcprof.tui.widgets.alarm import AlarmBanner

    s, raised = _crashed_session()
    app = DlcprofApp(session=s, replay=True, deterministic=True, start_standby=False)
    async with app.run_test(size=(160, 48)) as pilot:
        await pilot.pause()
        banner = app.query_one(AlarmBanner)
        shown = banner.render_lines(Region(0, 0, banner.size.width, banner.size.height))
        said = " ".join(" ".join(strip.text for strip in shown).split())
        assert banner.display and said.startswith("⚠ COMPILE CRASHED at /home/u/train.py:25")
        assert "@torch.compiler.disable" in said
