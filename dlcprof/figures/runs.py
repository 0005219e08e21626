"""Runs and sessions as a whole: their clocks, names and labels."""

from __future__ import annotations

from dlcprof.session import Run, Session


def session_origin(session: Session) -> float | None:
    """The earliest timestamp in the session (phase starts can precede their event)."""
    ts = [e.t for e in session.events]
    for r in session.runs.values():
        for c in r.compiles.values():
            ts.extend(p.start_t for p in c.phases)
            if c.start_t is not None:
                ts.append(c.start_t)
    return min(ts) if ts else None


def run_origin(run: Run) -> float | None:
    """Run start (RunStarted); else its earliest phase, for a stream cut short."""
    if run.started_t is not None:
        return run.started_t
    starts = [p.start_t for c in run.compiles.values() for p in c.phases]
    return min(starts) if starts else None


def run_label(run: Run) -> str:
    """ "pointwise-chain · default · dynamic=auto · inductor"."""
    s = run.settings
    if s is None:
        return run.name
    return f"{run.name} · {s.mode} · dynamic={s.dynamic} · {s.backend}"


def run_number(session: Session, run: Run) -> int:
    """1-based, as every view numbers runs ("Run 2", "#2")."""
    return list(session.runs).index(run.run_id) + 1


def workload_title(session: Session) -> str:
    """Every workload in the session, in run order."""
    names = list(dict.fromkeys(r.name for r in session.runs.values()))
    return ", ".join(names) if names else "empty session"


def latest_benchmarked(session: Session) -> Run | None:
    return next((r for r in reversed(session.runs.values()) if r.benchmark is not None), None)
