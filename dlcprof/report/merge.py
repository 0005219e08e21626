"""``dlcprof merge A/ B/ … -o DIR``: the sessions of one job's nodes (each
node ran ``dlcprof run --report DIR -- torchrun --nnodes …`` for its own
ranks) joined into one session of every rank.

Each node's events follow a ``NodeMerged`` that says where they came from;
its run ids are renamed where an earlier node used the same (pids repeat
across hosts); its timestamps are moved onto the reference node's clock (the
node holding the lowest rank) by the offset ``figures/job/nodes.py`` computes from
the ranks' rendezvous, or left as they are and said so. Each node's program
(ProgramStarted/Exited) stays its own, and each rank's raw trace is read from
the node's folder, to be copied under torch's per-rank name. Session-level:
no torch, no I/O beyond reading the inputs.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.figures.job import nodes as fnodes
from dlcprof.report.errors import ReportError
from dlcprof.report.folder import trace_names
from dlcprof.report.load import load_session
from dlcprof.session import Session

USAGE = "dlcprof merge A/ B/ ... -o DIR"
# Fields that name a run (renamed with it).
_RUN_FIELDS = ("run_id", "advised_run")


@data
class _Node:
    source: Path
    session: Session

    @property
    def folder(self) -> Path:
        return self.source if self.source.is_dir() else self.source.parent

    @property
    def ranked(self) -> list[ev.ProcessAttached]:
        """The processes of its runs that have a rank."""
        runs = self.session.runs.values()
        return [r.process for r in runs if r.process and r.process.rank is not None]

    @property
    def ranks(self) -> list[int]:
        return sorted({p.rank for p in self.ranked if p.rank is not None})

    @property
    def joins(self) -> list[ev.ProcessGroupJoined]:
        return [r.joined for r in self.session.runs.values() if r.joined is not None]


def _read(path: Path) -> _Node:
    if not path.exists():
        raise ReportError(f"{path}: no such folder or file (give each node's report folder)")
    if path.is_dir() and not (path / "session.json").is_file():
        raise ReportError(f"{path} is not a dlcprof report folder: no session.json in it")
    node = _Node(path, load_session(path))
    if node.session.nodes:
        raise ReportError(f"{path} is already a merged session: merge the nodes' own folders")
    if not node.ranked:
        raise ReportError(
            f"{path} holds no process with a rank: none of its ranks compiled, or it is "
            "not a torchrun node's (record each with dlcprof run --report DIR -- torchrun ...)"
        )
    return node


def _check(nodes: list[_Node]) -> None:
    seen: dict[Path, Path] = {}
    for n in nodes:
        key = n.folder.resolve()
        if key in seen:
            raise ReportError(f"{seen[key]} and {n.source} are the same node: give each node once")
        seen[key] = n.source
    worlds = {n.source: {p.world_size for p in n.ranked if p.world_size is not None} for n in nodes}
    sizes = {w for ws in worlds.values() for w in ws}
    if len(sizes) > 1:
        said = ", ".join(f"{src}: {'/'.join(map(str, sorted(ws)))}" for src, ws in worlds.items())
        raise ReportError(f"the folders ran jobs of different world sizes ({said}): not one job")
    holder: dict[int, Path] = {}
    for n in nodes:
        for rank in n.ranks:
            if rank in holder:
                raise ReportError(
                    f"{holder[rank]} and {n.source} both hold rank {rank}: "
                    "nodes of different jobs (or one node twice); merge one job's nodes"
                )
            holder[rank] = n.source


def _moved(e: ev.Event, rename: dict[str, str], shift: float, traces: dict[str, str]) -> ev.Event:
    """The event on the merged session's clock, with its run renamed. Our
    timestamps move (``t``, ``*_t``: events.py's rule); torch's raw metrics
    inside CompileFinished.metrics keep the host's clock, as torch wrote them."""
    d: dict[str, Any] = ev.to_dict(e)
    for key, value in d.items():
        if (key == "t" or key.endswith("_t")) and isinstance(value, float | int) and value:
            d[key] = value + shift
        elif key in _RUN_FIELDS and value in rename:
            d[key] = rename[value]
    if isinstance(e, ev.GraphCallsTimed):
        d["graphs"] = {
            cid: {**g, "first_t": g["first_t"] + shift} if "first_t" in g else g
            for cid, g in e.graphs.items()
        }
    if isinstance(e, ev.TraceSaved) and e.run_id in traces:
        d["path"] = traces[e.run_id]
    return ev.from_dict(d)


def merge_sessions(paths: Sequence[str | os.PathLike[str]]) -> Session:
    """One session of every node's ranks; ReportError (one line) for input
    that is not the folders of one job's nodes."""
    if len(paths) < 2:
        raise ReportError(f"merge joins two or more nodes' report folders ({USAGE})")
    nodes = [_read(Path(p)) for p in paths]
    _check(nodes)
    nodes.sort(key=lambda n: n.ranks[0])
    reference = nodes[0].joins
    events: list[ev.Event] = []
    taken: set[str] = set()
    for k, node in enumerate(nodes):
        name = f"node {k}"
        rename = {}
        for run_id in node.session.runs:
            new = run_id if run_id not in taken else f"{run_id}@node{k}"
            taken.add(new)
            if new != run_id:
                rename[run_id] = new
        offset = fnodes.clock_offset(reference, node.joins, name)
        shift = offset.seconds or 0.0
        traces = {
            run_id: str(node.folder / file)
            for run_id, file in trace_names(node.session).items()
            if (node.folder / file).is_file()
        }
        own = node.session.events
        events.append(
            ev.NodeMerged(
                node=name,
                source=str(node.source),
                hosts=sorted({p.host for p in node.ranked}),
                ranks=node.ranks,
                run_ids=[rename.get(r, r) for r in node.session.runs],
                offset_s=offset.seconds,
                why=offset.why,
                waited=offset.waited,
                backend=offset.backend,
                t=min((e.t for e in own), default=ev.now()) + shift,
            )
        )
        events += [_moved(e, rename, shift, traces) for e in own]
    merged = Session.from_events(events)
    # Recorded where the reference node was, not where the merge runs.
    merged.provenance = nodes[0].session.provenance
    return merged
