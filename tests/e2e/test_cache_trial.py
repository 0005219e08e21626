"""`dlcprof try` of a cache item on a real program (tests/programs/cache_key.py,
two 1-op graphs): run on a new cache folder it misses both graphs and is
advised Mega-Cache; `try` runs its command twice, the cold fill saving its
artifacts, the warm start loading them on another new folder, and records the
warm start measured against the fill. The logic is unit-tested on recorded
runs (tests/unit/test_cache_advice.py)."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest
from helpers.paths import PROGRAMS

from dlcprof.figures.advice import trial as fat
from dlcprof.figures.advice.rules import advise
from dlcprof.report import load_session


def _dlcprof(*argv: str, cwd, env) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "dlcprof.cli", *argv],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=cwd,
        env=env,
    )


@pytest.mark.slow  # three runs of the program, each importing torch (~2 min under load)
def test_mega_cache_is_tried_by_a_cold_fill_then_a_warm_start(tmp_path):
    env = {**os.environ, "TORCHINDUCTOR_CACHE_DIR": str(tmp_path / "new-cache"), "COLUMNS": "200"}
    path = tmp_path / "s.json"
    program = (sys.executable, str(PROGRAMS / "cache_key.py"))
    p = _dlcprof("run", "--quiet", "--json", str(path), "--", *program, cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    session = load_session(path)
    advised = fat.advised_run(session)
    rules = [i.rule for i in advise(session, advised).items]
    assert "mega-cache" in rules, rules
    n = rules.index("mega-cache") + 1
    p = _dlcprof("try", str(path), str(n), cwd=tmp_path, env=env)
    assert p.returncode == 0, p.stderr[-3000:]
    assert "the cold fill, TORCHINDUCTOR_CACHE_DIR=" in p.stdout
    assert "; cache miss (fill) → cache hit" in p.stdout
    (tried,) = load_session(path).tried
    assert tried.options == {"cache": fat.MEGA_CACHE}
    assert (tried.cache_before, tried.cache_after) == ("miss", "hit")
    assert tried.predicted_before_s is not None
    assert None not in (tried.measured_before_s, tried.measured_after_s)
    assert None not in (tried.boot_before_s, tried.boot_after_s)
    assert None not in (tried.wall_before_s, tried.wall_after_s)
