"""What a run's first call came to: compiled graphs, or nothing compiled.

Dynamo can refuse every frame it is given (an LSTM: "Attempted to wrap RNN,
GRU, or LSTM"): no graph is made and every call runs eagerly, so a speedup
would compare eager with eager. The worker then times nothing
(``NothingCompiled``), and every view says so first, with torch's reason and
hints, and states no speedup. A single frame Dynamo refused, in a run that
compiled others, is one line of the live log (``frame_failed``).
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.session import Run

NOTHING_COMPILED = "nothing compiled"
# Why a run that compiled nothing has no benchmark, kernel times or sweep.
NO_SPEEDUP = "nothing compiled: every call ran eagerly, there is no speedup to state"


def refusal(e: ev.NothingCompiled) -> str:
    """Torch's reason, as it gave it ("Unsupported: Attempted to wrap RNN, GRU, or LSTM")."""
    if e.fail_reason:
        return f"{e.fail_type}: {e.fail_reason}" if e.fail_type else e.fail_reason
    if e.frames:
        return f"Dynamo found no tensor operation to compile in {text.plural(e.frames, 'frame')}"
    return "Dynamo compiled no frame of it"


def headline(e: ev.NothingCompiled) -> str:
    """The one loud line every view shows first."""
    at = f" at {e.location}" if e.location else ""
    return (
        f"NOTHING COMPILED: Dynamo made no graph ({refusal(e)}{at}); "
        "every call ran eagerly, so there is no speedup to state"
    )


def hint_lines(e: ev.NothingCompiled) -> list[str]:
    """Torch's hints, one line each (``allow_rnn=True`` for an LSTM)."""
    return [f"torch's hint: {h}" for h in e.hints]


def status(run: Run) -> str:
    """The run's status as a view heads it: a run that compiled nothing is not "ok"."""
    if run.nothing_compiled is not None and run.status == "ok":
        return NOTHING_COMPILED
    return run.status


def frame_failed(e: ev.CompileFinished) -> str:
    """A frame Dynamo refused: it runs eagerly (the live line, instead of "compile done")."""
    what = "backward compile" if e.is_backward else "compile"
    reason = f"{e.fail_type}: {e.fail_reason}" if e.fail_reason else str(e.fail_type)
    return f"{what} failed after {text.secs(e.wall_s)}: {reason} (this frame runs eagerly)"
