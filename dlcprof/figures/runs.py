"""Runs and sessions as a whole: their clocks, names and labels."""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.session import Run, Session, script_name

# Why an imported run has no figure that a live one would: said wherever it is n/a.
NOT_IN_LOG = "not in a TORCH_TRACE log"


def session_date(session: Session) -> float | None:
    """When the session was recorded, on the epoch: its origin, unless it is
    an import whose logs hold no epoch time (its times are then the logs' own
    clock, seconds into an unwritten year: no date)."""
    if session.imported is not None and not session.imported.dated:
        return None
    return session_origin(session)


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
    """Every workload in the session, in run order; an import, by its logs; a
    program's processes, by their script once ("train.py, 8 processes"), never
    a name per rank."""
    if (imp := session.imported) is not None:
        ranks = len(session.rank_summaries)
        what = f"{ranks} ranks" if ranks else text.plural(imp.processes, "process", "processes")
        return f"TORCH_TRACE of {', '.join(imp.sources)} ({what})"
    runs = list(session.runs.values())
    if of_tests(session):  # never a title of a thousand test ids
        files = list(dict.fromkeys(r.run_id.split("::")[0] for r in runs))
        more = f" and {len(files) - _FILES_NAMED} more" if len(files) > _FILES_NAMED else ""
        return (
            f"pytest, {len(runs)} test{'' if len(runs) == 1 else 's'} of "
            f"{', '.join(files[:_FILES_NAMED])}{more}"
        )
    names = list(dict.fromkeys(_title_name(r) for r in session.runs.values()))
    processes = [r for r in session.runs.values() if not (r.workload or r.target) and r.process]
    if len(names) == 1 and len(processes) == len(session.runs) > 1:
        return f"{names[0]}, {len(processes)} processes"
    return ", ".join(names) if names else "empty session"


_FILES_NAMED = 3
# Why a test has no call, kernel time or speedup of its own.
TEST_UNTIMED = "the pytest plugin watches each test's compiles, not its calls"


def is_test(run: Run) -> bool:
    """A test of dlcprof's pytest plugin: the run is the test (setup to its
    end), one of the runs of a process that runs every test."""
    return run.process is not None and run.process.test


def is_imported(run: Run) -> bool:
    """A process read from its TORCH_TRACE log by ``dlcprof import``."""
    return run.status == ev.LOG_ENDED


# Whose run it is, as the words of a figure it lacks depend on it.
IMPORTED, TEST, ATTACHED, WORKLOAD = "imported", "test", "attached", "workload"


def kind(run: Run) -> str:
    """Whose run it is: a process read from its TORCH_TRACE log, a test of the
    pytest plugin, an attached program's process, else a workload dlcprof ran."""
    if is_imported(run):
        return IMPORTED
    if is_test(run):
        return TEST
    return ATTACHED if run.process is not None else WORKLOAD


def of_tests(session: Session) -> bool:
    """A pytest plugin's session: it has runs, and every one is a test."""
    return bool(session.runs) and all(is_test(r) for r in session.runs.values())


def runs_counted(session: Session) -> str:
    """ "12 runs"; a pytest plugin's session, "12 tests"."""
    return text.plural(len(session.runs), "test" if of_tests(session) else "run")


def _title_name(run: Run) -> str:
    if run.workload or run.target or run.process is None:
        return run.name
    return script_name(run.process)


def latest_benchmarked(session: Session) -> Run | None:
    return next((r for r in reversed(session.runs.values()) if r.benchmark is not None), None)
