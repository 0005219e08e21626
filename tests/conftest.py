"""Shared test setup.

One Inductor cache for the whole test session (inherited by every worker
subprocess): cold-cache behaviour is tested on purpose where it matters, and
every other test must not pay a full compile on 2 cores.
"""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from dlcprof import events as ev

_CACHE = Path(
    os.environ.get("DLCPROF_TEST_CACHE_DIR", Path(tempfile.gettempdir()) / "dlcprof-test-cache")
)
_CACHE.mkdir(parents=True, exist_ok=True)
os.environ["TORCHINDUCTOR_CACHE_DIR"] = str(_CACHE)

FIXTURES = Path(__file__).parent / "fixtures"


def load_fixture(name: str) -> list[ev.Event]:
    """An event stream recorded from a real run by scripts/record_fixtures.py."""
    path = FIXTURES / f"{name}.jsonl"
    return [ev.decode(line) for line in path.read_text().splitlines() if line.strip()]


@pytest.fixture
def fixture_events():
    return load_fixture
