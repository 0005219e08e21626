"""The report model: everything a report states about a session, built once
per save (``build``).

JSON (``schema``), HTML (``html``) and Markdown (``markdown``) render this one
model, so the three cannot disagree. Every number comes from
``dlcprof.figures``; the renderers only place what the model words. A figure
the session does not have is ``None`` with the reason beside it, worded
"n/a (why)". By topic: ``figure`` (the small pieces), ``environment``,
``run`` (a run's section) with ``run_tables``, ``benchmark`` and ``monitors``,
``advice`` (advice and compile cost), ``program`` (an attached program) and
``ranks`` (its ranks);
this module holds the session's own sections.
"""

from __future__ import annotations

from dataclasses import field

import dlcprof
from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import device as fd
from dlcprof.figures import kernels as fk
from dlcprof.figures import modes as fm
from dlcprof.figures import paper as fpa
from dlcprof.figures import paper_tables as fpt
from dlcprof.figures import recompiles as fr
from dlcprof.figures import runs as fruns
from dlcprof.figures.job.imported import import_lines
from dlcprof.report.advice import AdviceSection, advice_section
from dlcprof.report.environment import Environment, environment
from dlcprof.report.figure import iso
from dlcprof.report.monitors import DeviceSummary, device_summary
from dlcprof.report.program import ProgramSection, program_section
from dlcprof.report.ranks import RanksSection, ranks_section
from dlcprof.report.run import RunModel, run_model
from dlcprof.session import Session

# The runs table of the HTML and Markdown reports (RunModel.summary_row).
SUMMARY_COLUMNS = (
    "#",
    "workload",
    "mode",
    "dynamic",
    "status",
    "compile",
    fk.CELL_HEAD,
    "recompiles",
    "graph breaks",
    "speedup",
    "steady alloc.",
    "break-even",
)


@data
class SweepContrast:
    """Static vs dynamic shapes over one target (the paper's finding 3)."""

    pair: fr.SweepPair
    verdict: str  # fr.sweep_verdict

    @property
    def workload(self) -> str:
        return self.pair.workload


@data
class PaperSection:
    """The paper's findings beside this machine's, for a session ``dlcprof paper`` made."""

    findings: fpa.Findings
    summary: list[tuple[str, str, str]]  # (finding, paper, measured here)
    workloads: list[list[str]]  # cells in fpt.WORKLOAD_COLUMNS order
    notes: list[str]


def paper_section(session: Session) -> PaperSection | None:
    f = fpa.findings(session)
    if f is None:
        return None
    return PaperSection(f, fpt.summary_rows(f), fpt.workload_rows(f), fpt.notes(f))


@data
class SessionError:
    stage: str
    message: str


@data
class Report:
    """One session, as every report format states it."""

    session: Session
    title: str
    version: str
    recorded: str | None
    origin_t: float | None
    environment: Environment
    runs: list[RunModel]
    sweep_runs: list[RunModel]  # every swept run, for the combined chart
    sweeps: list[SweepContrast]  # complete static/dynamic pairs
    modes: list[fm.ModeTable]  # a workload run in two or more modes, side by side
    device: DeviceSummary
    monitors: dict[str, ev.MonitorStatus]
    errors: list[SessionError] = field(default_factory=list)
    paper: PaperSection | None = None  # a session `dlcprof paper` made
    advice: AdviceSection | None = None  # the latest advised run's advice
    program: ProgramSection | None = None  # an attached program (dlcprof -- CMD)
    ranks: RanksSection | None = None  # its ranks, when it ran many (torchrun)
    imported: list[str] = field(default_factory=list)  # dlcprof import: figures/job/imported.py

    @property
    def hotspot_runs(self) -> list[RunModel]:
        return [r for r in self.runs if r.hotspots.rows]

    @property
    def device_why(self) -> str:
        """Why the session holds no device samples."""
        if self.session.imported is not None:
            return fd.NONE_IN_LOG
        return "no device samples: the monitor did not run or had no probe"

    @property
    def hotspots_why(self) -> str:
        status = self.monitors.get("py-spy")
        if status is not None and not status.available:
            return status.message
        whys = {r.hotspots.why for r in self.runs}
        return whys.pop() if len(whys) == 1 else "no py-spy samples in this session"

    @property
    def counted(self) -> str:
        return fruns.runs_counted(self.session)

    @property
    def subtitle(self) -> str:
        return f"{self.counted} · recorded {self.recorded or text.NA}"


def build(session: Session) -> Report:
    """The report model of ``session``."""
    runs = [run_model(session, r, i) for i, r in enumerate(session.runs.values(), 1)]
    swept = [r for r in runs if r.run.sweep]
    sweeps = [SweepContrast(p, p.verdict) for p in fr.sweep_pairs(session) if p.complete]
    spans = [span for r in session.runs.values() for span in fd.activity_spans(r)]
    monitors = fd.monitors(session)
    errors = [SessionError(e.stage, e.message) for e in session.errors]
    errors += [
        SessionError("worker exited", x.message)
        for x in session.worker_exits
        if x.returncode not in (0, None) or x.signal
    ]
    origin_t = fruns.session_origin(session)
    return Report(
        session=session,
        title=fruns.workload_title(session),
        version=dlcprof.__version__,
        recorded=iso(fruns.session_date(session)),
        origin_t=origin_t,
        environment=environment(session),
        runs=runs,
        sweep_runs=swept,
        sweeps=sweeps,
        modes=fm.mode_tables(session),
        device=device_summary(session.all_device_samples(), spans, monitors),
        monitors=monitors,
        errors=errors,
        paper=paper_section(session),
        advice=advice_section(session),
        program=program_section(session),
        ranks=ranks_section(session),
        imported=import_lines(session),
    )
