"""The recorded real runs under tests/fixtures (scripts/record_fixtures.py,
scripts/record_pyspy_fixture.py): event streams, and a real py-spy profile."""

from __future__ import annotations

import gzip
from pathlib import Path

import pytest

from dlcprof import events as ev
from helpers.paths import FIXTURES


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


def pyspy_hot_frames(run_id: str, tmp_dir: Path) -> ev.HotFramesSampled:
    """A real py-spy profile of a cold compile (tests/fixtures/pyspy, recorded by
    scripts/record_pyspy_fixture.py) as LiveRun emits it at the end of a run."""
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
