"""torch's own ``TORCH_TRACE`` logs recorded from real runs
(tests/fixtures/torch_trace, scripts/record_trace_fixture.py), written back as
logs, and a real job's logs widened to many ranks by rewriting the rank."""

from __future__ import annotations

import gzip
import re
from pathlib import Path

from helpers.paths import FIXTURES, REPO

TORCH_TRACE = FIXTURES / "torch_trace"
RECORDED_CHECKOUT = "/home/user/dlcprof/"
_PID_RE = re.compile(rb"^([VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ )\d+ ", re.M)
_RANK_RE = re.compile(rb'"rank": \d+')


def trace_logs(name: str, out: Path) -> Path:
    """The recorded logs of ``name`` written into ``out`` with this checkout's
    path back where the recording had it (the user's files are then its own)."""
    out.mkdir(parents=True, exist_ok=True)
    for gz in sorted((TORCH_TRACE / name).glob("*.log.gz")):
        data = gzip.decompress(gz.read_bytes())
        data = data.replace(RECORDED_CHECKOUT.encode(), f"{REPO}/".encode())
        (out / gz.name.removesuffix(".gz")).write_bytes(data)
    return out


def rank_logs(folder: Path) -> dict[int, Path]:
    """A job's logs by the rank torch named them with."""
    out = {}
    for p in folder.glob("dedicated_log_torch_trace_rank_*.log"):
        out[int(p.name.split("_rank_", 1)[1].split("_", 1)[0])] = p
    return out


def widen(
    logs: dict[int, Path], out: Path, ranks: int, odd: dict[int, int], torch_names: bool = True
) -> Path:
    """A job of ``ranks`` ranks from a real job's logs: rank r is a copy of rank
    0's log (``odd[r]``'s where given), its records' rank and its pid rewritten,
    named as torch names it (``tlparse --all-ranks-html`` finds ranks by name),
    or with no rank in the name (the import must read it from the records)."""
    out.mkdir(parents=True, exist_ok=True)
    data = {rank: path.read_bytes() for rank, path in logs.items()}
    for r in range(ranks):
        text = _RANK_RE.sub(f'"rank": {r}'.encode(), data[odd.get(r, 0)])
        text = _PID_RE.sub(rb"\g<1>" + str(100000 + r).encode() + b" ", text)
        name = f"dedicated_log_torch_trace_rank_{r}_wide.log" if torch_names else f"log_{r:05}.log"
        (out / name).write_bytes(text)
    return out
