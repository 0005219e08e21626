"""A job's nodes, joined by ``dlcprof merge``: each node's clock against the
reference node's, and the sentences that say how far to trust it.

The clocks: every rank records when its ``init_process_group`` returned
(``ProcessGroupJoined``, by its own host's clock). Where that call waited for
every rank (gloo; ``TORCH_DIST_INIT_BARRIER=1``) those moments are one
instant, so a node's offset is the reference node's median join time minus
its own. Where it did not wait (NCCL connects at its first collective) the
offset is only as good as the ranks' arrival spread, and the sentence says so.
"""

from __future__ import annotations

import statistics

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.session import Node, Run, Session

REFERENCE = "the reference clock (it holds the lowest rank)"
NOT_WAITED = (
    "approximate: init_process_group did not wait for every rank ({backend}); "
    "TORCH_DIST_INIT_BARRIER=1 makes it"
)


@data
class Offset:
    """What to add to a node's timestamps to put them on the reference clock."""

    seconds: float | None  # None: not aligned
    why: str  # why not, "" when aligned
    waited: bool  # every join waited for all ranks: an exact rendezvous
    backend: str = ""


def clock_offset(
    reference: list[ev.ProcessGroupJoined], node: list[ev.ProcessGroupJoined], name: str
) -> Offset:
    """The offset of a node whose ranks joined at ``node`` (its clock) from the
    reference node's joins; ``name`` words the node in the reason."""
    if not reference or not node:
        where = "the reference node" if not reference else name
        return Offset(None, f"no rendezvous recorded on {where}", False)
    joins = (*reference, *node)
    seconds = statistics.median(j.t for j in reference) - statistics.median(j.t for j in node)
    backends = sorted({j.backend for j in joins})
    return Offset(seconds, "", all(j.waited for j in joins), ", ".join(backends))


def node_of(session: Session, run: Run) -> Node | None:
    """The node a run came from, in a merged session."""
    return next((n for n in session.nodes if run.run_id in n.merged.run_ids), None)


def clock_line(node: Node, first: bool) -> str:
    """How this node's clock stands against the reference node's."""
    m = node.merged
    if first:
        return REFERENCE
    if m.offset_s is None:
        return f"clocks not aligned: {m.why}"
    line = f"clocks aligned on the rendezvous (offset {m.offset_s:+.3f} s for {m.node})"
    if not m.waited:
        line += f" ({NOT_WAITED.format(backend=m.backend or 'its backend')})"
    return line


def node_lines(session: Session) -> list[str]:
    """Each node of a merged session: where it came from, its ranks, its
    program and how it ended, and its clock. Empty for a session of one node."""
    out = []
    for i, node in enumerate(session.nodes):
        m = node.merged
        ranks = ", ".join(map(str, m.ranks)) or "none"
        command = (
            text.command_words(node.program.argv, node.program.cwd)
            if node.program
            else "program not recorded"
        )
        end = node.program_exit.message if node.program_exit else "its end not recorded"
        wall = f", {text.secs(node.program_exit.wall_s)}" if node.program_exit else ""
        out.append(
            f"{m.node} ({m.source}; {', '.join(m.hosts) or 'host unknown'}; "
            f"rank{'s' if len(m.ranks) != 1 else ''} {ranks}): {command}: {end}{wall}; "
            f"{clock_line(node, i == 0)}"
        )
    return out


def node_wall_s(session: Session, run: Run) -> float | None:
    """The wall time of the program on the run's node (merged sessions), else None."""
    node = node_of(session, run)
    if node is None or node.program_exit is None:
        return None
    return node.program_exit.wall_s
