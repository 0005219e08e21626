"""What the journal (dlcprof/journal.py) adds to folding a session's events, as
a ratio side by side: every event of each recorded real run (tests/fixtures,
the attached programs' too) folded into a fresh Session without a journal and
with one, alternating, the CPU seconds of each side's best of N rounds.

    python benchmarks/journal_cost.py [--rounds 7]

The journal writes each event unbuffered (a syscall each, so a SIGKILL loses
none): this says what that costs the UI process an event and a session.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers.recorded import fixture_names, load_fixture  # noqa: E402

from dlcprof import journal  # noqa: E402
from dlcprof.events import Event  # noqa: E402
from dlcprof.session import Session  # noqa: E402


def folded(events: list[Event], journaled: bool) -> float:
    """CPU seconds to fold ``events`` into a fresh session (with a journal)."""
    session = Session()
    j = journal.Journal.open() if journaled else None
    session.journal = j
    start = time.process_time()
    for e in events:
        session.apply(e)
    spent = time.process_time() - start
    if j is not None:
        j.close()
        j.path.unlink()
    return spent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=7)
    args = parser.parse_args()
    os.environ["XDG_STATE_HOME"] = tempfile.mkdtemp(prefix="journal-cost-")
    names = fixture_names() + [
        f"programs/{p.stem}" for p in sorted(Path("tests/fixtures/programs").glob("*.jsonl"))
    ]
    print("| session | events | fold (ms) | with the journal (ms) | ratio | added an event (µs) |")
    print("|---|---:|---:|---:|---:|---:|")
    for name in names:
        events = load_fixture(name)
        bare, kept = [], []
        for _ in range(args.rounds):
            bare.append(folded(events, False))
            kept.append(folded(events, True))
        b, k = min(bare), min(kept)
        print(
            f"| {name} | {len(events)} | {b * 1e3:.2f} | {k * 1e3:.2f} | {k / b:.2f} | "
            f"{(k - b) / len(events) * 1e6:.1f} |"
        )


if __name__ == "__main__":
    main()
