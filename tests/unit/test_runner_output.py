"""The worker's output as log lines: bounded whatever the workload prints, and
the same lines however the pipe cuts the bytes (the flood end to end:
tests/e2e/test_failures.py)."""

from __future__ import annotations

import random

from dlcprof.bounded_output import HEAD_LINES, MAX_LINE_BYTES, TAIL_LINES, BoundedOutput


def _feed(data: bytes, seed: int) -> list[str]:
    rng = random.Random(seed)
    out = BoundedOutput("stdout")
    messages = []
    i = 0
    while i < len(data):
        n = rng.choice([1, 7, MAX_LINE_BYTES - 1, MAX_LINE_BYTES + 1, 8192, 65536])
        messages += [e.message for e in out.feed(data[i : i + n])]
        i += n
    return messages + [e.message for e in out.close()]


def test_lines_survive_any_chunking_and_endless_lines_are_cut_not_buffered() -> None:
    data = b"first\n" + b"y" * 1_000_000 + b"\n\nlast without a newline"
    for seed in range(20):
        first, long, last = _feed(data, seed)
        assert first == "first" and last == "last without a newline"
        assert long == "y" * MAX_LINE_BYTES + "… (1,000,000 bytes)"


def test_a_flood_keeps_its_head_and_tail_and_says_what_it_left_out() -> None:
    n = HEAD_LINES + 3 * TAIL_LINES
    messages = _feed(b"".join(b"line %d\n" % i for i in range(n)), 0)
    assert messages[:HEAD_LINES] == [f"line {i}" for i in range(HEAD_LINES)]
    note = messages[HEAD_LINES]
    dropped = n - HEAD_LINES - TAIL_LINES
    assert note.startswith(f"the workload printed {n:,} lines to stdout: {dropped:,} in the")
    assert messages[HEAD_LINES + 1 :] == [f"line {i}" for i in range(n - TAIL_LINES, n)]
