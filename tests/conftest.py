"""Shared test setup.

One Inductor cache for the whole test session (inherited by every worker
subprocess, and by every pytest-xdist process of the run): cold-cache
behaviour is tested on purpose where it matters, and every other test must
not pay a full compile on 2 cores.

Locally that cache outlives the run (DLCPROF_TEST_CACHE_DIR, default
$TMPDIR/dlcprof-test-cache). On CI (CI=true), or with DLCPROF_TEST_FRESH=1,
each run starts as a machine that never compiled anything: a new cache
folder and a new TMPDIR (Inductor keeps its precompiled headers there, not
in the cache folder), made by the first process of the run, shared by the
others through DLCPROF_TEST_RUN_DIR, and removed after the run.
"""

from __future__ import annotations

import atexit
import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import textual.constants as textual_constants
from textual.pilot import Pilot

if os.environ.get("CI") == "true" or os.environ.get("DLCPROF_TEST_FRESH") == "1":
    if "DLCPROF_TEST_RUN_DIR" not in os.environ:  # the run's first process
        _RUN = Path(tempfile.mkdtemp(prefix="dlcprof-test-run-"))
        atexit.register(shutil.rmtree, _RUN, ignore_errors=True)
        (_RUN / "tmp").mkdir()
        os.environ["DLCPROF_TEST_RUN_DIR"] = str(_RUN)
    _RUN = Path(os.environ["DLCPROF_TEST_RUN_DIR"])
    os.environ["TMPDIR"] = str(_RUN / "tmp")
    tempfile.tempdir = None  # gettempdir() reads TMPDIR again
    _CACHE = _RUN / "inductor-cache"
else:
    _CACHE = Path(
        os.environ.get("DLCPROF_TEST_CACHE_DIR", Path(tempfile.gettempdir()) / "dlcprof-test-cache")
    )
_CACHE.mkdir(parents=True, exist_ok=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(_CACHE)

from helpers.engine import ScriptedLiveRun  # noqa: E402 (after the environment is set)
from helpers.recorded import load_fixture  # noqa: E402
from helpers.tui import HANG_S  # noqa: E402

# The signal tests send SIGINT and SIGHUP as a terminal would. A test runner
# started in the background (`nohup`, `cmd &` without job control) inherits
# them ignored, and dlcprof rightly keeps an inherited SIG_IGN
# (dlcprof/signals.py): the defaults come back here, once, for this process
# and every process the tests start.
for _sig, _default in (
    (signal.SIGINT, signal.default_int_handler),
    (signal.SIGHUP, signal.SIG_DFL),
):
    if signal.getsignal(_sig) is signal.SIG_IGN:
        signal.signal(_sig, _default)


# Textual animates a tab's underline as it moves; a screen read mid-slide
# differs from the same screen read after it (a replay-vs-live comparison under
# load). App.__init__ reads this, so every app the tests make, in every process,
# shows the end state at once.
os.environ["TEXTUAL_ANIMATIONS"] = "none"
vars(textual_constants)["TEXTUAL_ANIMATIONS"] = "none"  # a Final to mypy

# Pilot gives the screen 30 s to handle what a key or a pause sent, then raises
# WaitForScreenTimeout: a bound on speed that a 2-core machine at load 20 breaks
# (a filter typed into the Kernels table). A hang still fails, after HANG_S.
Pilot._wait_for_screen.__defaults__ = (HANG_S,)


@pytest.fixture(autouse=True)
def state_folder(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Each test's own journals (dlcprof/journal.py), beside its tmp_path: a
    dlcprof a test killed is recovered by no other test, and nothing is written
    to the user's ~/.local/state."""
    folder = tmp_path_factory.mktemp("state")
    monkeypatch.setenv("XDG_STATE_HOME", str(folder))
    return folder / "dlcprof"


@pytest.fixture
def fixture_events():
    return load_fixture


@pytest.fixture
def engine() -> type[ScriptedLiveRun]:
    """A scripted LiveRun class of this test's own (its instances, its script)."""
    return type("ScriptedRun", (ScriptedLiveRun,), {"instances": []})


@pytest.fixture
def sleeper():
    """A child process that sleeps (the pid a sampler watches)."""
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(30)"])
    yield child
    child.kill()
    child.wait()


@pytest.fixture(scope="session")
def rank_apart_import(tmp_path_factory):
    """``dlcprof import`` of ``one_rank_apart``'s job of N ranks (its odd rank
    ``apart_rank(N)``): (its logs' folder, the session), made once per test
    session (the 1,024-rank one is shared by the unit and the TUI tests)."""
    from helpers.torch_trace import apart_rank, one_rank_apart

    from dlcprof.trace_import.job import import_trace

    made = {}

    def get(ranks: int):
        if ranks not in made:
            out = tmp_path_factory.mktemp(f"apart{ranks}")
            folder = one_rank_apart(out, ranks, apart_rank(ranks))
            made[ranks] = (folder, import_trace([str(folder)], workers=2))
        return made[ranks]

    return get


_E2E = Path(__file__).parent / "e2e"


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Every test under tests/e2e runs real processes (real compiles, torchrun,
    signals): ``e2e``, and ``-m "not e2e and not slow"`` runs tests/unit and tests/tui."""
    for item in items:
        if _E2E in item.path.parents:
            item.add_marker(pytest.mark.e2e)
