"""An attached program's section of a report (dlcprof -- CMD): its
command and end, per compiling process the compile share of wall time, each
graph's life and its boot, split. Figures and words come from
figures/job/program.py and figures/boot.py."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof.data import data
from dlcprof.figures import boot as fboot
from dlcprof.figures.job import nodes as fnodes
from dlcprof.figures.job import program as fprog
from dlcprof.session import Node, Session


@data
class Process:
    timeline: fprog.Timeline
    lives: list[fprog.GraphLife]
    sampling: fprog.Sampling
    boot: fboot.Boot | None

    @property
    def run_id(self) -> str:
        return self.timeline.run.run_id


@data
class ProgramNode:
    """One node of a merged session (dlcprof merge) and how its clock was aligned."""

    node: Node
    clock: str  # fnodes.clock_line


@data
class ProgramSection:
    program: ev.ProgramStarted
    end: ev.ProgramExited | None
    wall_s: float | None
    processes: list[Process]
    eager_baseline: fprog.EagerBaseline | None
    lines: list[str]  # fprog.program_lines
    nodes: list[ProgramNode]  # a session `dlcprof merge` joined: each node's program and clock


def program_section(session: Session) -> ProgramSection | None:
    p = session.program
    if p is None:
        return None
    return ProgramSection(
        p,
        session.program_exit,
        fprog.program_wall_s(session),
        [
            Process(
                fprog.timeline(session, r),
                fprog.graph_lives(r),
                fprog.sampling(r),
                fboot.boot(session, r),
            )
            for r in fprog.attached_runs(session)
        ],
        fprog.eager_baseline(session),
        fprog.program_lines(session) + fboot.boot_lines(session),
        [ProgramNode(n, fnodes.clock_line(n, i == 0)) for i, n in enumerate(session.nodes)],
    )
