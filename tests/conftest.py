"""Shared test setup.

One Inductor cache for the whole test session (inherited by every worker
subprocess): cold-cache behaviour is tested on purpose where it matters, and
every other test must not pay a full compile on 2 cores.
"""

from __future__ import annotations

import os
import signal
import tempfile
from pathlib import Path

import pytest

from dlcprof import events as ev

_CACHE = Path(
    os.environ.get("DLCPROF_TEST_CACHE_DIR", Path(tempfile.gettempdir()) / "dlcprof-test-cache")
)
_CACHE.mkdir(parents=True, exist_ok=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(_CACHE)

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

FIXTURES = Path(__file__).parent / "fixtures"


def fixture_names() -> list[str]:
    """Every recorded event stream, as ``load_fixture`` names it ("pointwise_chain",
    "paper/gelu_mlp"); tests/fixtures/trace holds torch's raw trace records instead."""
    names = [p.stem for p in sorted(FIXTURES.glob("*.jsonl"))]
    return names + [f"paper/{p.stem}" for p in sorted((FIXTURES / "paper").glob("*.jsonl"))]


def load_fixture(name: str) -> list[ev.Event]:
    """An event stream recorded from a real run by scripts/record_fixtures.py.
    A missing one fails the test: recordings are never stood in for."""
    path = FIXTURES / f"{name}.jsonl"
    if not path.is_file():
        pytest.fail(f"recorded fixture {path} missing (scripts/record_fixtures.py)")
    return [ev.decode(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def fixture_events():
    return load_fixture


def pyspy_hot_frames(run_id: str, tmp_dir: Path) -> ev.HotFramesSampled:
    """A real py-spy profile of a cold compile (tests/fixtures/pyspy, recorded by
    scripts/record_pyspy_fixture.py) as LiveRun emits it at the end of a run."""
    import gzip

    from dlcprof.monitors.samples import attribute_phases, load_samples, thread_samples

    path = tmp_dir / "cold_compile.speedscope.json"
    path.write_bytes(
        gzip.decompress((FIXTURES / "pyspy" / "cold_compile.speedscope.json.gz").read_bytes())
    )
    samples = load_samples(path)
    by_thread = thread_samples(samples)
    return ev.HotFramesSampled(
        samples=max(by_thread.values()),
        rows=attribute_phases(samples, []),
        run_id=run_id,
        threads=by_thread,
    )
