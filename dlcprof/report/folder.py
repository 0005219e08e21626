"""Save a session as a folder of reports.

    <dir>/session.json            the JSON report (load it back with load_session)
    <dir>/report.html             one self-contained page
    <dir>/report.md               the summary to paste into an issue
    <dir>/trace.json              Chrome trace (Perfetto)
    <dir>/pyspy.speedscope.json   the py-spy profile, when the session has one
    <dir>/torch_trace.log         torch's raw structured trace (tlparse opens it);
                                  torch_trace-run-N.log per run when several have one;
                                  a rank's under torch's own name,
                                  dedicated_log_torch_trace_rank_N_<random>.log
                                  (tlparse --all-ranks-html opens the folder)

Never overwrites: an existing non-empty folder makes it pick ``dir-2``,
``dir-3``, ... Every file is written atomically; everything is rendered
before the first byte is written, so a rendering bug leaves nothing behind.
"""

from __future__ import annotations

import datetime as _dt
import json
import os
import re
import shutil
from pathlib import Path
from typing import Any

from dlcprof import events as ev
from dlcprof.figures.runs import session_origin
from dlcprof.report import model as rm
from dlcprof.report.atomic import os_reason, write_atomic
from dlcprof.report.errors import ReportError
from dlcprof.report.html import render_html
from dlcprof.report.markdown import render_markdown
from dlcprof.report.schema import build_report, dumps_report
from dlcprof.report.trace import render_chrome_trace
from dlcprof.session import Session

__all__ = [
    "PROFILE_NAME",
    "TRACE_NAME",
    "ReportError",
    "default_report_dir",
    "save_session",
    "trace_names",
]

PROFILE_NAME = "pyspy.speedscope.json"
TRACE_NAME = "torch_trace.log"
REPORTS_ROOT = Path("dlcprof-reports")
_MAX_SUFFIX = 10_000


def _slug(name: str) -> str:
    s = re.sub(r"[^A-Za-z0-9._-]+", "-", name).strip("-.")
    return s[:60] or "session"


def default_report_dir(session: Session, root: str | os.PathLike[str] = REPORTS_ROOT) -> Path:
    """``dlcprof-reports/<workload>-<YYYYmmdd-HHMMSS>``, stamped with the session start."""
    t = session_origin(session)
    stamp = (_dt.datetime.fromtimestamp(t) if t is not None else _dt.datetime.now()).strftime(
        "%Y%m%d-%H%M%S"
    )
    run = session.latest_run
    name = run.workload if run else ""
    return Path(root) / f"{_slug(name or 'session')}-{stamp}"


def _claim_dir(directory: Path) -> tuple[Path, bool]:
    """A directory that is new or empty: ``directory`` or ``directory-N``.
    Returns it and whether we created it (to remove it again on failure)."""
    for n in range(1, _MAX_SUFFIX):
        candidate = directory if n == 1 else directory.with_name(f"{directory.name}-{n}")
        try:
            candidate.mkdir(parents=True)
            return candidate, True
        except FileExistsError:
            if candidate.is_dir() and not any(candidate.iterdir()):
                return candidate, False
        except OSError as e:
            raise ReportError(f"cannot create {candidate}: {os_reason(e)}") from e
    raise ReportError(
        f"cannot create {directory}: {_MAX_SUFFIX} folders of that name already exist"
    )


def _profile_source(session: Session, profile_path: str | None) -> Path | None:
    if profile_path:
        return Path(profile_path)
    # The latest run's py-spy profile (each run's monitors save their own).
    e = next((r.profile for r in reversed(session.runs.values()) if r.profile), None)
    return Path(e.path) if e is not None else None


def trace_names(session: Session) -> dict[str, str]:
    """The file name in a report folder of each run's raw trace, by run id: a
    rank's keeps torch's per-rank name; else ``torch_trace.log``, or
    ``torch_trace-run-N.log`` (N as in ``runs[]``) when several runs have one."""
    runs = [(n, r) for n, r in enumerate(session.runs.values(), 1) if r.raw_trace]
    names = {}
    for n, run in runs:
        assert run.raw_trace is not None
        base = os.path.basename(run.raw_trace.path)
        if base.startswith(ev.RANK_TRACE_PREFIX):
            names[run.run_id] = base
        else:
            names[run.run_id] = TRACE_NAME if len(runs) == 1 else f"torch_trace-run-{n}.log"
    return names


def _raw_traces(session: Session) -> tuple[dict[str, bytes], list[str]]:
    """torch's raw trace of each run that has one: {file name: bytes}, and a
    note per trace that could not be read."""
    files: dict[str, bytes] = {}
    notes = []
    for run_id, name in trace_names(session).items():
        trace = session.runs[run_id].raw_trace
        assert trace is not None  # trace_names names the runs that have one
        path = trace.path
        try:
            files[name] = Path(path).read_bytes()
        except OSError as e:
            notes.append(f"torch trace {path} not copied: {os_reason(e)}")
    return files, notes


def save_session(
    session: Session, directory: str | os.PathLike[str], profile_path: str | None = None
) -> Path:
    """Write the report folder; returns the folder actually written (never an
    existing non-empty one). One-line ReportError on failure; ``session`` is
    not modified, so a failed save can be retried elsewhere."""
    profile = _profile_source(session, profile_path)
    profile_bytes: bytes | None = None
    profile_note = None
    if profile is not None:
        try:
            profile_bytes = profile.read_bytes()
        except OSError as e:
            # The recording is still worth saving without its profile: say why it is absent.
            profile_note = f"py-spy profile {profile} not copied: {os_reason(e)}"
    traces, trace_notes = _raw_traces(session)
    extra: dict[str, Any] = {
        "files": {
            "profile": PROFILE_NAME if profile_bytes is not None else None,
            "torch_trace": sorted(traces),
        }
    }
    if profile_note:
        extra["files"]["profile_note"] = profile_note
    if trace_notes:
        extra["files"]["torch_trace_note"] = "; ".join(trace_notes)
    model = rm.build(session)  # once: every file below places the same figures
    files: dict[str, str | bytes] = {
        "session.json": dumps_report(build_report(model, extra)),
        "report.html": render_html(model),
        "report.md": render_markdown(model),
        "trace.json": json.dumps(render_chrome_trace(model), separators=(",", ":"), default=str),
    }
    if profile_bytes is not None:
        files[PROFILE_NAME] = profile_bytes
    files.update(traces)

    target, created = _claim_dir(Path(directory))
    written: list[Path] = []
    try:
        for name, data in files.items():
            write_atomic(target / name, data)
            written.append(target / name)
    except ReportError:
        for p in written:
            p.unlink(missing_ok=True)
        if created:
            shutil.rmtree(target, ignore_errors=True)
        raise
    return target
