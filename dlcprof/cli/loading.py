"""What a command loads before it runs anything: a workload (found, not run)
and a saved session; what cannot be loaded is one line and exit 2."""

from __future__ import annotations

from pathlib import Path

from dlcprof.settings import RunSettings


class LoadError(Exception):
    """A workload or report that cannot be loaded: one line, exit 2."""


def resolve_target(target: str, settings: RunSettings | None = None) -> str:
    """Find the workload without running it; with ``settings``, also check what a
    sweep needs where the source shows it (before torch is imported)."""
    from dlcprof.workloads import WorkloadError, check_sweep, resolve

    try:
        spec = resolve(target)
        if settings is not None and settings.sweeping:
            check_sweep(spec, settings.shapes)
    except WorkloadError as e:
        raise LoadError(str(e)) from None
    return spec.name


def load_report(path: Path):
    """A saved session (LoadError: one line, exit 2)."""
    from dlcprof.report.errors import ReportError
    from dlcprof.report.load import load_session

    try:
        return load_session(path)
    except ReportError as e:
        raise LoadError(str(e)) from None


def load_report_or_trace(path: Path):
    """A saved session, or a TORCH_TRACE log or folder imported on the fly."""
    from dlcprof.report.errors import ReportError
    from dlcprof.trace_import.job import import_trace
    from dlcprof.trace_import.sources import holds_trace, no_log_in

    if not holds_trace(path):
        if path.is_dir() and not (path / "session.json").exists():
            raise LoadError(no_log_in(path, sessions=True))
        return load_report(path)
    try:
        return import_trace([str(path)])
    except ReportError as e:
        raise LoadError(str(e)) from None


def default_target() -> str:
    from dlcprof.workloads import DEFAULT_WORKLOAD

    return DEFAULT_WORKLOAD
