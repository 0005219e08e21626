"""The compiler's hot frames of an attached program are the compiler's: the
samples where the program runs its compiled code or its eager optimizer, and
dlcprof's kernel sampler and probes, are named as such, and files in Inductor's cache are
never shown by their absolute path.

Real data: py-spy's profile of tests/programs/steady_train.py run under
``dlcprof run --`` (tests/fixtures/pyspy/attached_steady_train.speedscope.json.gz)."""

from __future__ import annotations

import gzip

import pytest
from helpers.paths import FIXTURES

from dlcprof import text
from dlcprof.monitors.samples import attribute_phases, load_samples

FIXTURE = FIXTURES / "pyspy" / "attached_steady_train.speedscope.json.gz"


@pytest.fixture(scope="module")
def rows(tmp_path_factory) -> list[dict]:
    path = tmp_path_factory.mktemp("pyspy") / "attached.speedscope.json"
    path.write_bytes(gzip.decompress(FIXTURE.read_bytes()))
    return [r for r in attribute_phases(load_samples(path), []) if r["thread"] == "main"]


def test_the_programs_own_work_is_named_apart(rows) -> None:
    functions = {r["function"] for r in rows}
    assert not functions & {"Runner.call", "call", "_single_tensor_adam", "Recorder.launch"}
    own = {r["function"]: r["own"] for r in rows}
    # The compiled code, the optimizer and the sampler, each a real share of the run.
    assert own[text.RUNNING_COMPILED] > 100
    assert own[text.RUNNING_OPTIMIZER] > 100
    assert own[text.KERNEL_SAMPLER] > 0
    # dlcprof's timing wrapper around each compiled call, its own cost.
    assert own[text.DLCPROF_PROBES] > 0
    # The compiler's own frames stay: its waits and Inductor's passes.
    assert own[text.WAITING_WORKERS] > 0
    assert any(r["file"].startswith("torch/_inductor/") for r in rows)


def test_inductor_cache_files_are_shown_short(rows) -> None:
    files = [r["file"] for r in rows]
    cached = [f for f in files if "torchinductor_" in f or f.startswith("<inductor cache>")]
    assert cached
    assert all(f.startswith("<inductor cache>/") and f.endswith("….py") for f in cached), cached
    assert not [r for r in rows if "/tmp/" in r["file"]]


def test_a_compiled_module_loading_is_compiling() -> None:
    # Inductor runs the module's body once as it loads it: its kernels build then.
    from dlcprof.monitors.samples import program_work

    load: tuple[tuple[str, str, int], ...] = (("compile_fx", "torch/_inductor/compile_fx.py", 1),)
    load += (("<module>", "/tmp/torchinductor_u/ab/cabcdefghijklmnopqrstuvwxyz012.py", 3),)
    assert program_work(load) == load
    run = (("main", "train.py", 9), ("call", load[1][1], 40))
    assert program_work(run)[-1][0] == text.RUNNING_COMPILED
    # The worker's harness runs a workload's eager code: that is not dlcprof's cost.
    eager = (("time_eager", "/x/dlcprof/worker/bench.py", 5), ("forward", "/x/workloads/w.py", 7))
    assert program_work(eager) == eager
    # Nor is what runs under the step timer wrapped around the program's compiled
    # callable (--eager-baseline's per-step walls): Dynamo's guards, the module call.
    step: tuple[tuple[str, str, int], ...] = (("timed", "/x/dlcprof/worker/attached/steps.py", 51),)
    step += (("_fn", "/v/torch/_dynamo/eval_frame.py", 9),)
    assert program_work(step) == step


def test_dlcprofs_own_files_are_shown_from_its_package_on(rows) -> None:
    """Issue 41, 8: the probes' row read "/home/u/.../dlcprof/worker/attached/steps.py"."""
    (probes,) = [r for r in rows if r["function"] == text.DLCPROF_PROBES]
    assert probes["file"].startswith("dlcprof/worker/"), probes
    assert not [
        r for r in rows if "/dlcprof/" in r["file"] and not r["file"].startswith("dlcprof/")
    ]


def test_the_workers_quiet_window_is_a_wait_on_dlcprof() -> None:
    """Before it times a workload the worker waits for dlcprof to stop sampling
    it: the samples py-spy takes meanwhile are that wait, not a hot function."""
    from dlcprof.monitors.samples import waiting
    from dlcprof.worker import quiet

    stack = (
        ("main", "/x/dlcprof/worker/__main__.py", 3),
        ("QuietWindow.__call__", quiet.__file__, 45),
        ("QuietWindow._wait_for_parent", quiet.__file__, 60),
    )
    assert waiting(stack) == (*stack[:2], (text.WAITING_QUIET, quiet.__file__, 60))
    other = (("main", "train.py", 1), ("_wait_for_parent", "train.py", 9))
    assert waiting(other) == other
