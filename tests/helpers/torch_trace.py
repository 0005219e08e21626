"""torch's own ``TORCH_TRACE`` logs recorded from real runs
(tests/fixtures/torch_trace, scripts/record_trace_fixture.py), written back as
logs, and a real job's logs widened to many ranks by rewriting the rank, the
pid and, as real processes differ, every object address."""

from __future__ import annotations

import gzip
import hashlib
import re
from pathlib import Path

from helpers.paths import FIXTURES, REPO

TORCH_TRACE = FIXTURES / "torch_trace"
RECORDED_CHECKOUT = "/home/user/dlcprof/"
# What differs between the processes of a job, in a record: its rank, the pid in
# its prefix, and the objects' addresses (the id a guard compares,
# ``___check_obj_id(x, 140370649161312)``, or a repr's hex).
_PER_PROCESS_RE = re.compile(
    rb'(?P<rank>"rank": )\d+'
    rb"|^(?P<pid>[VIWEC]\d{4} \d\d:\d\d:\d\d\.\d+ )\d+ "
    rb"|(?P<guard>___check_\w*_id\([^\n]*?, )(?P<id>\d{9,})"
    rb"|0x(?P<hex>[0-9a-f]{8,})",
    re.M,
)
_MD5_RE = re.compile(rb'"has_payload": "([0-9a-f]{32})"')


def trace_logs(name: str, out: Path) -> Path:
    """The recorded logs of ``name`` written into ``out`` with this checkout's
    path back where the recording had it (the user's files are then its own),
    each payload's md5 following its payload, as torch would have written it."""
    out.mkdir(parents=True, exist_ok=True)
    for gz in sorted((TORCH_TRACE / name).glob("*.log.gz")):
        log = out / gz.name.removesuffix(".gz")
        log.write_bytes(gzip.decompress(gz.read_bytes()))
        replaced(log, RECORDED_CHECKOUT, f"{REPO}/")
    return out


def rank_logs(folder: Path) -> dict[int, Path]:
    """A job's logs by the rank torch named them with."""
    out = {}
    for p in folder.glob("dedicated_log_torch_trace_rank_*.log"):
        out[int(p.name.split("_rank_", 1)[1].split("_", 1)[0])] = p
    return out


def ranked(log: Path) -> Path:
    """A single process's log as rank 0's of a job: each record's header names
    the rank, as torch's does once the process group is up (``widen`` then
    rewrites it per rank)."""
    data = re.sub(
        rb"^([VIWEC]\d{4} [^\n]*?\] \{.*)\}$", rb'\1, "rank": 0}', log.read_bytes(), flags=re.M
    )
    out = log.with_name(f"{log.stem}_rank0.log")
    out.write_bytes(data)
    return out


def widen(
    logs: dict[int, Path], out: Path, ranks: int, odd: dict[int, int], torch_names: bool = True
) -> Path:
    """A job of ``ranks`` ranks from a real job's logs: rank r is a copy of rank
    0's log (``odd[r]``'s where given), its records' rank, its pid and every
    object address rewritten (each copy's addresses its own, as each process's
    are; a payload's md5 follows it), named as torch names it (``tlparse
    --all-ranks-html`` finds ranks by name), or with no rank in the name (the
    import must read it from the records)."""
    out.mkdir(parents=True, exist_ok=True)
    data = {rank: _template(path.read_bytes()) for rank, path in logs.items()}
    for r in range(ranks):
        name = f"dedicated_log_torch_trace_rank_{r}_wide.log" if torch_names else f"log_{r:05}.log"
        (out / name).write_bytes(_rendered(data[odd.get(r, 0)], r))
    return out


Tokens = list[bytes | tuple[str, bytes, int]]  # text, or (what differs, its prefix, its value)
Record = tuple[bytes, list[bytes]]  # a header line, its payload lines without their tab


def _tokens(text: bytes) -> Tokens:
    out: Tokens = []
    at = 0
    for m in _PER_PROCESS_RE.finditer(text):
        out.append(text[at : m.start()])
        kind = m.lastgroup if m.lastgroup != "id" else "guard"
        if kind == "hex":
            out.append((kind, b"0x", int(m.group("hex"), 16)))
        else:
            out.append((kind, m.group(kind), int(m.group("id") or 0)))
        at = m.end()
    return [*out, text[at:]]


Template = list[tuple[Tokens, Tokens | None, list[bytes]]]


def _template(log: bytes) -> Template:
    """A log as (the text to a record whose payload holds an address, or that
    record's header; its payload, as tokens and as it was): what each copy
    renders its own way."""
    out: Template = []
    plain: list[bytes] = []
    for header, payload in _records(log):
        joined = b"\n".join(payload)
        if _PER_PROCESS_RE.search(joined) and _MD5_RE.search(header):
            if plain:
                out.append((_tokens(b"\n".join(plain)), None, []))
            out.append((_tokens(header), _tokens(joined), payload))
            plain = []
        else:
            plain += [header] + [b"\t" + x for x in payload]
    return [*out, (_tokens(b"\n".join(plain)), None, [])]


def _render(tokens: Tokens, r: int) -> bytes:
    """Rank ``r``'s text: its rank, its pid, each address moved by its own offset."""
    parts = []
    for t in tokens:
        if isinstance(t, bytes):
            parts.append(t)
        elif t[0] == "rank":
            parts.append(b"%s%d" % (t[1], r))
        elif t[0] == "pid":
            parts.append(b"%s%d " % (t[1], 100000 + r))
        elif t[0] == "hex":
            parts.append(b"0x%x" % (t[2] + r * 0x10000))
        else:
            parts.append(b"%s%d" % (t[1], t[2] + r * 0x10000))
    return b"".join(parts)


def _rendered(template: Template, r: int) -> bytes:
    parts = []
    for header, payload, was in template:
        if payload is None:
            parts.append(_render(header, r))
            continue
        now = _render(payload, r)
        head = _md5_moved(_render(header, r), was, now.split(b"\n"))
        parts.append(head + b"\n\t" + now.replace(b"\n", b"\n\t"))
    return b"\n".join(parts)


def _records(data: bytes) -> list[Record]:
    records: list[Record] = []
    for line in data.split(b"\n"):
        if line.startswith(b"\t") and records:
            records[-1][1].append(line[1:])
        else:
            records.append((line, []))
    return records


def replaced(log: Path, old: str, new: str) -> None:
    """``old`` replaced by ``new`` in every record of ``log``, header and payload
    (a payload's md5 following it)."""
    was, now = old.encode(), new.encode()
    parts: list[bytes] = []
    for header, payload in _records(log.read_bytes()):
        edited = [x.replace(was, now) for x in payload]
        parts += [_md5_moved(header.replace(was, now), payload, edited)]
        parts += [b"\t" + x for x in edited]
    log.write_bytes(b"\n".join(parts))


def _md5_moved(header: bytes, payload: list[bytes], edited: list[bytes]) -> bytes:
    """The header with its payload's md5 that of ``edited`` (a stale one stays stale)."""
    md5 = _MD5_RE.search(header)
    if md5 and md5.group(1) == _md5(payload):
        return header.replace(md5.group(1), _md5(edited))
    return header


def _md5(payload: list[bytes]) -> bytes:
    return hashlib.md5(b"\n".join(payload)).hexdigest().encode()


# Rank 1 of the recorded job recompiled frames 0 and 4 on a size guard; here on
# an id guard, whose failure holds the object's address, as Dynamo words it.
ID_GUARD_FAILURES = {
    "tensor 'args[0]' size mismatch at index 0. expected 4, actual 3": (
        "___check_obj_id(L['func'], 140370649161312)"
    ),
    "tensor 'x' size mismatch at index 0. expected 4, actual 3": (
        "___check_obj_id(L['self'].scale, 140370649165408)"
    ),
}


def one_rank_apart(out: Path, ranks: int, odd: int) -> Path:
    """A job of ``ranks`` ranks from the recorded 2-rank job, each with its own
    addresses, where every rank recompiled frames 0 and 4 on a failed id guard
    but ``odd``, which never did (rank 0's log)."""
    logs = rank_logs(trace_logs("ddp_odd_batch", out / "logs"))
    for old, new in ID_GUARD_FAILURES.items():
        replaced(logs[1], old, new)
    return widen({0: logs[1], 1: logs[0]}, out / "wide", ranks, {odd: 1})


def apart_rank(ranks: int) -> int:
    """The odd rank of ``one_rank_apart``'s job of ``ranks`` ranks: neither end."""
    return ranks * 2 // 3


def later(text: str, hours: int) -> str:
    """A log's text as if written ``hours`` later (its glog clock moved): the
    same process's records, another run of it."""
    return re.sub(
        r"^([VIWEC]\d{4} )(\d\d)",
        lambda m: f"{m.group(1)}{int(m.group(2)) + hours:02}",
        text,
        flags=re.M,
    )
