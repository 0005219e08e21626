"""A run's events as both live logs word them: the console's live lines
(``dlcprof run``) and the TUI's Log pane. A line is a list of (words, part)
pieces; each view adds its own mark, styles each part, and chooses which
events it shows (the console only what went wrong, the Log pane every one).
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import outcome as fout
from dlcprof.figures import recompiles as fr

# The parts of a line, for the views to style.
HEAD = "head"  # what happened
PLAIN = ""  # the event's own words (a reason, a message)
PLACE = "place"  # a place in the user's code
ASIDE = "aside"  # a side note: where Dynamo broke, a hint, where a log line came from
TRACE = "trace"  # one line of a traceback's tail (the Log pane shows them under the line)

Line = list[tuple[str, str]]

# Traceback lines shown under an error.
TRACE_LINES = 6


def event_line(e: ev.Event) -> Line | None:
    """A run's event as both live logs word it, or None for an event a live log
    does not word (or words its own way)."""
    match e:
        case ev.RunStarted():
            body = (
                f"{e.workload} on {e.device} ({e.device_name}) · mode={e.mode} · "
                f"dynamic={e.dynamic} · backend={e.backend} · {e.dtype} · size={e.size} · "
                f"cache={e.cache} · threads={e.threads} · torch {e.torch_version}"
            )
            return [("", HEAD), (body, PLAIN)]
        case ev.RecompileTriggered():
            return [("recompile: ", HEAD), (str(fr.newest_reason(e.reason)), PLAIN)]
        case ev.RecompileLimitHit():
            place = [(f"{e.location} ", PLACE)] if e.location else []
            return [
                ("RECOMPILE LIMIT HIT ", HEAD),
                *place,
                (fr.limit_words(e), PLAIN),
                (f"  fix: {fr.LIMIT_FIX}", ASIDE),
            ]
        case ev.CompileRaised():
            place = [(f"{e.location} ", PLACE)] if e.location else []
            inside = [(f" {text.broke_inside(e.inside)}", ASIDE)] if e.inside else []
            kind = [(f" [{e.gb_id}]", ASIDE)] if e.gb_id else []
            return [
                (f"{fout.COMPILE_CRASHED} ", HEAD),
                *place,
                (f"torch.compile raised {e.error}", PLAIN),
                *inside,
                *kind,
                (f"  fix: {fout.RAISED_FIXES[0]}", ASIDE),
            ]
        case ev.EagerCallsCounted():
            return [
                ("after the recompile limit: ", HEAD),
                (f"{text.eager_calls(e.calls)}; {fr.eager_each(e.call_s, e.untimed)}", PLAIN),
            ]
        case ev.GraphBroken():
            gb = f"{e.gb_id} " if e.gb_id else ""
            line = [(f"graph break {gb}", HEAD), (f"{e.location} ", PLACE), (e.reason, PLAIN)]
            line += [(f" {text.broke_inside(e.detail)}", ASIDE)] if e.detail else []
            return line + ([(f"  hint: {e.hints[0]}", ASIDE)] if e.hints else [])
        case ev.LogEmitted():
            return [(f"{e.level} ", HEAD), (f"[{e.source}] ", ASIDE), (e.message, PLAIN)]
        case ev.ErrorRaised():
            tail = [ln for ln in e.traceback.strip().splitlines() if ln.strip()][-TRACE_LINES:]
            return [(f"ERROR ({e.stage}) ", HEAD), (" " + e.message, PLAIN)] + [
                (ln, TRACE) for ln in tail
            ]
        case ev.ProbeUnavailable():
            return [(f"{e.probe}: {text.NA} ", HEAD), (f"because {e.reason}", PLAIN)]
        case ev.WorkerExited():
            return [("worker exited: ", HEAD), (e.message, PLAIN)]
        case ev.MonitorStatus():
            return [(f"monitor {e.monitor}: ", HEAD), (e.message, PLAIN)]
    return None
