"""An attached program's torch.compile settings (mode, dynamic, backend), read
from its own calls (worker/probes/compile_calls.py) and shown in the Benchmark
pane instead of n/a: real torch.compile calls, in this process and in a program
run under ``dlcprof run --``."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import torch
import torch._dynamo
from helpers.paths import PROGRAMS
from rich.console import Console

from dlcprof import events as ev
from dlcprof.figures.job import program as fprog
from dlcprof.report.load import load_session
from dlcprof.tui.view import View
from dlcprof.tui.widgets import benchmark as wb
from dlcprof.worker.probes import ProbeNotes, compile_calls

PROGRAM = PROGRAMS / "compile_args.py"


class _Sink:
    def __init__(self) -> None:
        self.events: list[ev.Event] = []

    def emit(self, e: ev.Event) -> None:
        self.events.append(e)


@pytest.fixture
def probed():
    sink = _Sink()
    compile_calls.install(lambda: "r1", sink, ProbeNotes(sink, "r1"))
    yield sink.events
    wrapped: Any = torch._dynamo.optimize
    torch._dynamo.optimize = wrapped.__wrapped__


def test_without_torch_compiles_frame_or_optimize_the_program_runs_on(probed) -> None:
    # Dynamo entered directly: no torch.compile frame, so no mode, the rest as given.
    torch._dynamo.optimize(backend="eager", dynamic=True)(lambda x: x * 2)(torch.ones(2))
    (c,) = [e for e in probed if isinstance(e, ev.CompileCalled)]
    assert (c.mode, c.dynamic, c.backend) == (None, "true", "eager")
    # This torch without optimize: said once, nothing wrapped, compiles as before.
    sink = _Sink()
    optimize = torch._dynamo.optimize
    del torch._dynamo.optimize
    try:
        compile_calls.install(lambda: "r2", sink, ProbeNotes(sink, "r2"))
    finally:
        torch._dynamo.optimize = optimize
    (note,) = sink.events
    assert isinstance(note, ev.ProbeUnavailable) and note.probe == compile_calls.PROBE


def test_the_probe_reads_each_call_as_the_program_wrote_it(probed) -> None:
    torch.compile(torch.nn.Linear(2, 2), dynamic=False, backend="eager")
    line = sys._getframe().f_lineno - 1

    @torch.compile(mode="max-autotune-no-cudagraphs", fullgraph=True)
    def f(x):
        return x + 1

    called = [e for e in probed if isinstance(e, ev.CompileCalled)]
    assert [(c.mode, c.dynamic, c.backend, c.fullgraph) for c in called] == [
        ("default", "false", "eager", False),
        ("max-autotune-no-cudagraphs", "auto", "inductor", True),
    ]
    # The program's own line, not torch's (the decorator calls torch.compile twice).
    assert called[0].caller == f"{__file__}:{line}"
    assert called[1].caller.startswith(f"{__file__}:")
    assert {c.package for c in called} == {""}


@pytest.mark.slow
def test_the_benchmark_pane_shows_an_attached_programs_settings(tmp_path: Path) -> None:
    out = tmp_path / "s.json"
    cmd = [sys.executable, "-m", "dlcprof.cli", "run", "--json", str(out), "--"]
    subprocess.run([*cmd, sys.executable, str(PROGRAM)], check=True, timeout=300)
    (saved,) = json.loads(out.read_text())["runs"]
    assert (saved["mode"], saved["dynamic"], saved["backend"]) == (
        "default",
        "false, auto",
        "eager",
    )
    assert [c["caller"].rsplit("/", 1)[-1] for c in saved["compile_calls"]] == [
        "compile_args.py:11",
        "compile_args.py:12",
    ]
    session = load_session(out)
    (run,) = session.runs.values()
    assert fprog.compiled_with(run) == [
        "compile_args.py:11 compiled with mode=default, dynamic=false, backend=eager",
        "compile_args.py:12 compiled with mode=default, dynamic=auto, backend=eager, "
        "fullgraph=True",
    ]
    console = Console(width=160, record=True)
    view = View(session, run, now=None, replay=True)
    console.print(wb.BenchmarkReport(view))
    shown = console.export_text()
    assert "compile_args.py:11 compiled with mode=default, dynamic=false" in shown
    rows = {line.split()[0]: line.split()[1:] for line in shown.splitlines() if line.strip()}
    assert rows["mode"] == ["default"]
    assert rows["dynamic"] == ["false,", "auto"]
    assert rows["backend"] == ["eager"]


def test_a_wrappers_call_is_credited_to_the_line_that_made_it(probed, tmp_path, monkeypatch):
    """Issue 41, 6: a package's wrapper that calls torch.compile (Lightning's, for
    litgpt) is credited to the first line out of the package; the options and
    the file of the code compiled are read."""
    lib = tmp_path / "site-packages" / "wraplib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(
        "import torch\n\n\ndef setup(fn):\n"
        "    return torch.compile(fn, backend='eager', options={'trace.enabled': False})\n"
    )
    monkeypatch.syspath_prepend(str(lib.parent))
    import wraplib

    silu = wraplib.setup(torch.nn.functional.silu)
    line = sys._getframe().f_lineno - 1
    wraplib.setup(torch.nn.Linear(2, 2))
    fn, module = [e for e in probed if isinstance(e, ev.CompileCalled)]
    assert fn.package == "wraplib" and fn.caller.startswith(str(lib / "__init__.py"))
    assert fn.made_at == f"{__file__}:{line}"
    assert fn.options == "'trace.enabled': False"
    # The file of the frame Dynamo compiles, by torch's own record of the compile.
    torch._dynamo.utils.clear_compilation_metrics()
    silu(torch.ones(2))
    (compiled,) = torch._dynamo.utils.get_compilation_metrics()
    assert fn.target == compiled.co_filename
    # A module compiles in Dynamo's own wrapper frame: no file to match it by.
    assert module.target == ""


def test_a_module_call_says_whether_what_it_returned_ever_ran(probed):
    """Issue 41: Lightning's Fabric compiles litgpt's module again and drops the
    first; only the module that ran is told, once, and its forward is its own
    again after the first call."""
    dropped: Any = torch.compile(torch.nn.Linear(2, 2), backend="eager")
    kept: Any = torch.compile(torch.nn.Linear(2, 2), backend="eager")
    forward = kept.forward
    kept(torch.ones(2))
    kept(torch.ones(2))
    first, second = [e for e in probed if isinstance(e, ev.CompileCalled)]
    assert (first.module_call, second.module_call) == (1, 2)
    (ran,) = [e for e in probed if isinstance(e, ev.ModuleCompileRan)]
    assert ran.number == 2
    assert kept.forward is forward.__wrapped__ and "forward" in vars(dropped)


class _Block(torch.nn.Module):
    def forward(self, x):
        return torch.relu(x) * 2


def test_module_compile_is_matched_by_its_forwards_file(probed):
    """``module.compile()`` (torchtitan's per-block compile) compiles the
    module's ``_call_impl``; Dynamo skips that frame and compiles its forward,
    by torch's own record of the compile. (A ``torch.nn.Linear``'s differs by
    torch: none on 2.13, torch's ``external_utils`` frame on 2.15.)"""
    block = _Block()
    block.compile(backend="eager")
    torch._dynamo.utils.clear_compilation_metrics()
    block(torch.ones(2))
    (call,) = [e for e in probed if isinstance(e, ev.CompileCalled)]
    (compiled,) = torch._dynamo.utils.get_compilation_metrics()
    assert call.target == compiled.co_filename == __file__
    assert call.module_call == 0


def test_a_call_made_at_a_packages_import_is_credited_to_the_line_that_imported_it(
    probed, tmp_path, monkeypatch
):
    """torchtitan compiles flex_attention as its module is imported: the line
    out of the package is the program's import, not importlib's frames."""
    lib = tmp_path / "site-packages" / "importlib_lib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(
        "import torch\n\nsilu = torch.compile(torch.nn.functional.silu, backend='eager')\n"
    )
    monkeypatch.syspath_prepend(str(lib.parent))
    import importlib_lib  # noqa: F401

    line = sys._getframe().f_lineno - 2
    (call,) = [e for e in probed if isinstance(e, ev.CompileCalled)]
    assert call.package == "importlib_lib" and call.made_at == f"{__file__}:{line}"


def test_a_function_is_matched_by_the_file_of_the_frame_dynamo_compiles(
    probed, tmp_path, monkeypatch
):
    """transformers wraps every model's forward (``functools.wraps``): Dynamo
    compiles the wrapper's frame, inlining the forward, so the wrapper's file is
    the one its compiles name; a ``torch.no_grad()`` function torch puts in a
    frame of its own (``external_utils``). Either was once said to have
    "nothing compiled from it"."""
    lib = tmp_path / "site-packages" / "wrapping_lib"
    lib.mkdir(parents=True)
    (lib / "__init__.py").write_text(
        "import functools\n\n\ndef wraps_it(fn):\n"
        "    @functools.wraps(fn)\n    def wrapped_func(*args, **kwargs):\n"
        "        return fn(*args, **kwargs)\n\n    return wrapped_func\n"
    )
    monkeypatch.syspath_prepend(str(lib.parent))
    import wrapping_lib

    def step(x):
        return torch.relu(x) * 2

    torch._dynamo.utils.clear_compilation_metrics()
    for fn in (wrapping_lib.wraps_it(step), torch.no_grad()(step)):
        torch.compile(fn, backend="eager")(torch.ones(2))
    # What Dynamo compiled, by torch's own record of each compile.
    frames = [m.co_filename for m in torch._dynamo.utils.get_compilation_metrics()]
    calls = [e for e in probed if isinstance(e, ev.CompileCalled)]
    assert [c.target for c in calls] == frames
    assert frames[0] == str(lib / "__init__.py") and frames[1] != __file__
