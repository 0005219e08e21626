"""Runs and sessions as a whole: their clocks, names and labels."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import recompiles as fr
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


def event_line(e: ev.Event) -> tuple[str, str] | None:
    """(head, body) of a run's event as both live logs word it, the console's
    and the TUI's Log pane (each adds its own mark and style), or None for an
    event each words its own way."""
    match e:
        case ev.RunStarted():
            return "", (
                f"{e.workload} on {e.device} ({e.device_name}) · mode={e.mode} · "
                f"dynamic={e.dynamic} · backend={e.backend} · {e.dtype} · size={e.size} · "
                f"cache={e.cache} · threads={e.threads} · torch {e.torch_version}"
            )
        case ev.RecompileTriggered():
            return "recompile: ", str(fr.newest_reason(e.reason))
        case ev.RecompileLimitHit():
            return "RECOMPILE LIMIT HIT: ", e.message
        case ev.EagerCallsCounted():
            return "after the recompile limit: ", text.eager_calls(e.calls)
    return None
