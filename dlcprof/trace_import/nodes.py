"""A job's import as a map-reduce on its own nodes: ``dlcprof import --node
DIR`` on each node (one task per node, started by the job's launcher, ``srun``
or ``torchrun``) reads that node's logs into a node summary in ``DIR``, and
``dlcprof merge`` of the summaries gives the session the import of every
node's logs in one place gives (docs/import.md).

What travels is each log's ``ProcessSummary`` (its rank, signature, clock,
where it ends), what the node's reading lost, and the events of the logs the
job's session may keep (``job.node_kept``): no log, no event of the ranks the
session summarizes. The merge is ``job.job_session`` over the nodes' reads, so
both ways share every rule.
"""

from __future__ import annotations

import dataclasses
import json
import os
import re
import socket
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from dlcprof import events as ev
from dlcprof.figures.job.groups import RankSignature
from dlcprof.report.atomic import write_atomic
from dlcprof.report.errors import ReportError
from dlcprof.session import Session
from dlcprof.trace_import.job import NodeRead, job_session, node_kept, read_kept, read_node
from dlcprof.trace_import.process_log import ProcessSummary

FORMAT = "dlcprof node summary"
VERSION = 3  # 2: damage by log; 3: compiles named with no compile record
SUFFIX = ".dlcnode.json"
# The launcher's number of this node, first found: Slurm's (srun), torchrun's
# (GROUP_RANK, with one process per node), then the NODE_RANK others set.
NODE_VARS = ("SLURM_NODEID", "GROUP_RANK", "NODE_RANK")
_NAME_RE = re.compile(r"[^A-Za-z0-9_.-]")


def node_name() -> str:
    """This node's name in its summary's file name: its launcher's number,
    else its host name."""
    for var in NODE_VARS:
        value = os.environ.get(var, "").strip()
        if value:
            return _NAME_RE.sub("_", value)
    return _NAME_RE.sub("_", socket.gethostname()) or "node"


def write_node_summary(paths: Iterable[str], folder: Path, workers: int) -> Path:
    """This node's logs at ``paths`` read into ``folder/node-NAME.dlcnode.json``."""
    started = time.monotonic()
    node = read_node(paths, workers)
    kept = node_kept(node)
    events = {
        s.source: [ev.to_dict(e) for e in s.process.events]
        for s in read_kept(node, kept, workers)
        if s.process is not None
    }
    name = node_name()
    body = {
        "format": FORMAT,
        "version": VERSION,
        "node": name,
        "read_s": time.monotonic() - started,
        "sources": node.sources,
        "files": node.files,
        "bytes": node.bytes,
        "host_of": node.host_of,
        "ranked": [[host, _process(p)] for host, p in node.ranked],
        "rankless": [_process(p) for p in node.rankless],
        "damage": node.damage,
        "unread": node.unread,
        "events": events,
    }
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as e:
        raise ReportError(f"cannot write into {folder}: {e.strerror or e}") from e
    out = folder / f"node-{name}{SUFFIX}"
    write_atomic(out, json.dumps(body, separators=(",", ":"), default=str))
    return out


def is_node_summary(path: Path) -> bool:
    """A node summary, or a folder holding some (and no saved session)."""
    if path.is_file():
        return path.name.endswith(SUFFIX)
    return path.is_dir() and not (path / "session.json").exists() and any(path.glob(f"*{SUFFIX}"))


def merge_node_summaries(paths: Iterable[Path], run: int = -1) -> Session:
    """The job's session from its nodes' summaries (files, or folders of them);
    ReportError (one line) for input that is not one job's node summaries."""
    started = time.monotonic()
    files: list[Path] = []
    for p in paths:
        files += sorted(p.glob(f"*{SUFFIX}")) if p.is_dir() else [p]
    loaded = [_load(f) for f in files]
    seen: dict[str, Path] = {}
    for f, body in zip(files, loaded, strict=True):
        if body["node"] in seen:
            raise ReportError(
                f"{seen[body['node']]} and {f} are both node {body['node']}'s summary: "
                "give each node's once"
            )
        seen[body["node"]] = f
    loaded.sort(key=lambda b: _natural(b["node"]))
    nodes = [_node(b) for b in loaded]
    stored = {path: es for b in loaded for path, es in b["events"].items()}

    def events_of(kept: dict[str, str]) -> list[list[ev.Event]]:
        missing = [path for path in kept if path not in stored]
        if missing:
            raise ReportError(
                f"no node summary holds the events of {missing[0]}, which the job's session "
                "keeps (the nodes tell the job's runs apart differently: merge one run's)"
            )
        # Under the run id the job's session gives it (a rankless process's
        # pid may be taken on another node).
        return [
            [ev.from_dict({**d, "run_id": rid} if "run_id" in d else d) for d in stored[path]]
            for path, rid in kept.items()
        ]

    slowest = max((b["read_s"] for b in loaded), default=0.0)
    return job_session(nodes, events_of, run, started - slowest, merged=True)


def _process(p: ProcessSummary) -> dict[str, Any]:
    d = {f.name: getattr(p, f.name) for f in dataclasses.fields(p) if f.name != "events"}
    d["signature"] = dataclasses.asdict(p.signature)
    return d


def _unprocess(d: dict[str, Any]) -> ProcessSummary:
    sig = RankSignature(**{k: tuple(v) for k, v in d["signature"].items()})
    return ProcessSummary(**{**d, "signature": sig, "clock": tuple(d["clock"])})


def _node(body: dict[str, Any]) -> NodeRead:
    return NodeRead(
        sources=body["sources"],
        files=body["files"],
        bytes=body["bytes"],
        host_of=body["host_of"],
        ranked=[(host, _unprocess(d)) for host, d in body["ranked"]],
        rankless=[_unprocess(d) for d in body["rankless"]],
        damage=body["damage"],
        unread=body["unread"],
    )


def _load(path: Path) -> dict[str, Any]:
    if not path.exists():
        raise ReportError(f"{path}: no such file or folder (give each node's summary)")
    try:
        body = json.loads(path.read_text())
    except (OSError, ValueError, UnicodeDecodeError) as e:
        raise ReportError(f"{path} is not a node summary: {e}") from e
    if not isinstance(body, dict) or body.get("format") != FORMAT:
        raise ReportError(
            f"{path} is not a node summary (dlcprof import --node-summary DIR writes them)"
        )
    if body.get("version") != VERSION:
        raise ReportError(
            f"{path} is a node summary of version {body.get('version')}, this dlcprof reads "
            f"version {VERSION}: import each node with the same dlcprof"
        )
    return body


def _natural(name: str) -> tuple[int, int, str]:
    """Nodes by number (node 2 before node 10), names after."""
    return (0, int(name), "") if name.isdigit() else (1, 0, name)
