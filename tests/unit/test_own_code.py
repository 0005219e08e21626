"""dlcprof's own code is told by where the imported package lives, never by a
folder named ``dlcprof`` (issue 40, item 1): ``git clone`` names the folder so,
and ``setup.sh`` puts the venv, torch included, inside it."""

from __future__ import annotations

import os
import sysconfig
import traceback
from typing import Any

from helpers.paths import PKG

from dlcprof import own_code, text
from dlcprof.attach_contract import BOOTSTRAP_DIR
from dlcprof.monitors.samples import program_work
from dlcprof.trace_records.payloads import frame_owner, parse_graph_break
from dlcprof.worker.probes.dynamo import failure_frames

CLONE = "/x/dlcprof"
TORCH = f"{CLONE}/.venv/lib/python3.11/site-packages/torch"
PROGRAM = f"{CLONE}/tests/programs/graph_break.py"


def test_a_clone_named_dlcprof_holds_torch_and_user_code_that_are_not_dlcprofs():
    assert frame_owner(f"{TORCH}/_dynamo/eval_frame.py") == "torch"
    assert frame_owner(f"{CLONE}/.venv/lib/python3.11/site-packages/numpy/core/x.py") == "library"
    assert frame_owner(PROGRAM) == "user"
    # A package's console script (`litgpt pretrain`): its stub is no line of the user's.
    assert frame_owner(os.path.join(sysconfig.get_paths()["scripts"], "litgpt")) == "library"
    assert frame_owner(f"{CLONE}/workloads/pointwise_chain.py") == "user"
    # Another machine's dlcprof, by its own module paths (an imported log).
    assert frame_owner(f"{CLONE}/dlcprof/worker/run.py") == "harness"
    assert frame_owner(r"C:\u\dlcprof\dlcprof\worker\attached\steps.py") == "harness"
    assert frame_owner(f"{CLONE}/dlcprof/no_such_module.py") == "user"
    # This machine's: the imported package and its bootstrap, wherever they lie.
    assert frame_owner(str(PKG / "trace_records" / "payloads.py")) == "harness"
    assert frame_owner(str(BOOTSTRAP_DIR / "sitecustomize.py")) == "harness"
    assert frame_owner("<frozen runpy>") == "harness"
    # The bundled workloads ship inside an installed package: not dlcprof's code.
    bundled = "/v/lib/python3.11/site-packages/dlcprof/bundled/pointwise_chain.py"
    assert own_code.module(bundled) is None and frame_owner(bundled) == "library"


def test_paths_are_resolved_before_they_are_judged(tmp_path):
    (tmp_path / "project").mkdir()
    (tmp_path / "dlcprof").symlink_to(tmp_path / "project")
    assert frame_owner(str(tmp_path / "dlcprof" / "train.py")) == "user"
    (tmp_path / "checkout").symlink_to(PKG)
    assert own_code.module(str(tmp_path / "checkout" / "text.py")) == "text.py"


def test_a_break_and_a_crash_in_such_a_clone_name_the_users_line():
    payload = (
        "Graph Break Reason: Data-dependent branching\n"
        "User code traceback:\n"
        f'  File "{PROGRAM}", line 7, in f\n    if y.sum() > 0:\n'
        f'  File "{TORCH}/_dynamo/polyfills/__init__.py", line 9, in g\n    x\n'
    )
    info = parse_graph_break(payload)
    assert info.location == f"{PROGRAM}:7" and info.detail.startswith(TORCH)
    err: Any = RuntimeError("a backend raised")  # given Dynamo's real_stack below
    err.real_stack = traceback.StackSummary.from_list(
        [(PROGRAM, 7, "f", None), (f"{TORCH}/_library/custom_ops.py", 863, "__call__", None)]
    )
    assert failure_frames(err) == (f"{PROGRAM}:7", f"{TORCH}/_library/custom_ops.py:863")


def test_sampled_stacks_name_dlcprofs_probes_by_its_module_paths():
    user = (("main", PROGRAM, 9), ("_fn", f"{TORCH}/_dynamo/eval_frame.py", 5))
    assert program_work(user) == user
    probe = (*user, ("emit", f"{CLONE}/dlcprof/worker/probes/trace.py", 3))
    assert program_work(probe)[-1][0] == text.DLCPROF_PROBES
