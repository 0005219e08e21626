"""What a run's first call came to: compiled graphs, or nothing compiled.

Dynamo can refuse every frame it is given (an LSTM: "Attempted to wrap RNN,
GRU, or LSTM"): no graph is made and every call runs eagerly, so a speedup
would compare eager with eager. The worker then times nothing
(``NothingCompiled``), and every view says so first, with torch's reason and
hints, and states no speedup. A single frame Dynamo refused, in a run that
compiled others, is one line of the live log (``frame_failed``).

In an attached program each process says it at its end: a process (a rank)
whose frames all made no graph ran eager throughout. A model wrapped in
DistributedDataParallel is the known case on torch 2.13: Dynamo traces DDP's
own forward but starts no frame in torch.nn's modules, so an ``nn.Sequential``
given to DDP is never compiled (``DDP_HINT``). A rank that ended without ever
compiling reads "never compiled".

A compile can also raise instead of falling back to eager (an internal error
of Dynamo's, a backend that failed, a graph break under ``fullgraph=True``):
the compiled call raises it into the program, which dies unless it catches it
(``CompileRaised``). That is a crash, said first, at the user's line, with the
two ways around it (``raised_headline``, ``RAISED_FIXES``), and no "ran
eagerly" is said of it.
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.session import Run, Session
from dlcprof.trace_records import gb_catalogue

NOTHING_COMPILED = "nothing compiled"
NEVER_COMPILED = "never compiled"
ENDED_WHY = "it ended without its exit hook (a signal, or os._exit)"
# Checked on torch 2.13 (docs/ranks.md): both remedies compile the model.
DDP_HINT = (
    "the model is wrapped in DistributedDataParallel and Dynamo traced only DDP's "
    "own code: it starts no frame inside torch.nn's modules, so a torch.nn container "
    "(nn.Sequential) given to DDP is never compiled; compile the module inside DDP "
    "(DDP(torch.compile(model))) or give the model a class with its own forward"
)
_DDP_SOURCE = "torch/nn/parallel/distributed.py"
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


def hint_lines(e: ev.NothingCompiled, run: Run | None = None) -> list[str]:
    """Torch's hints, one line each (``allow_rnn=True`` for an LSTM), and ours
    for a DDP-wrapped model (``run``: the run the event belongs to)."""
    ours = [f"hint: {DDP_HINT}"] if run is not None and ddp_wrapped(run) else []
    return [f"torch's hint: {h}" for h in e.hints] + ours


def ddp_wrapped(run: Run) -> bool:
    """Dynamo broke inside DDP's forward: the compiled model is a DDP wrapper."""
    return any(
        _DDP_SOURCE in f"{g.detail} {g.location}".replace("\\", "/") for g in run.graph_breaks
    )


def status(run: Run) -> str:
    """The run's status as a view heads it: a run that compiled nothing is not "ok",
    nor is a process that ended without compiling."""
    if run.nothing_compiled is not None and run.status == "ok":
        return NOTHING_COMPILED
    if run.process is not None and not run.compiles and not run.live:
        return f"{run.status}, {NEVER_COMPILED}" if run.status != "ok" else NEVER_COMPILED
    return run.status


def frame_failed(e: ev.CompileFinished) -> str:
    """A frame whose compile failed (the live line, instead of "compile done").
    Whether it then runs eagerly or raises into the program is decided after
    torch's record: ``CompileRaised`` says the latter, ``NothingCompiled`` the former."""
    what = "backward compile" if e.is_backward else "compile"
    reason = f"{e.fail_type}: {e.fail_reason}" if e.fail_reason else str(e.fail_type)
    return f"{what} failed after {text.secs(e.wall_s)}: {reason}"


COMPILE_CRASHED = "COMPILE CRASHED"
# What gets a program past a compile that raises, in the order to try them.
RAISED_FIXES = (
    "keep the call Dynamo cannot trace out of the compiled code: decorate the function "
    "that makes it with @torch.compiler.disable, or move the call out of the compiled "
    "forward or step",
    "or compile the inner model instead of its wrapper (torch.compile(module.model) "
    "rather than the whole training module), so the logging and bookkeeping around it "
    "stay eager",
)


def raised_headline(e: ev.CompileRaised) -> str:
    """The one loud line every view shows first of a compile that raised."""
    at = f" at {e.location}" if e.location else ""
    inside = f" {text.broke_inside(e.inside)}" if e.inside else ""
    kind = f" [{e.gb_id}: {gb_catalogue.link(e.gb_id)}]" if e.gb_id else ""
    return (
        f"{COMPILE_CRASHED}{at}: torch.compile raised {e.error}{inside}{kind}; Dynamo did not "
        "fall back to eager: the compiled call raised it into the program"
    )


def raised_lines(e: ev.CompileRaised) -> list[str]:
    """The headline, then the fixes, one line each."""
    return [raised_headline(e), *(f"fix: {f}" for f in RAISED_FIXES)]


def stopped_before(run: Run, session: Session) -> str | None:
    """The stop dlcprof had passed on when ``run`` ended ("Ctrl-C"), or None. A
    rank that fails while the stop reaches the ranks one by one (its peer gone
    mid-collective) failed because of the stop, not because of its own code."""
    end = session.program_exit
    if end is None or end.stopped_t is None or (run.finished_t or 0.0) < end.stopped_t:
        return None
    return end.stopped_by


def end_line(run: Run, session: Session) -> str | None:
    """How an attached process ended, when not plainly ("crashed: uncaught
    RuntimeError: ..."; "ended without its exit hook ..."); None: it ended ok."""
    if run.process is None or run.live or run.status == "ok":
        return None
    if run.status == "crashed":
        error = next((e.message for e in reversed(run.errors) if e.stage == "program"), "")
        stop = stopped_before(run, session)
        line = "crashed" + (f" after dlcprof passed on {stop}" if stop else "")
        line += f": {error}" if error else ""
    else:
        line = f"{run.status}: {ENDED_WHY}" if run.status == "ended" else run.status
    first = min(
        (
            r
            for r in session.runs.values()
            if r.process is not None and r.status == "crashed" and r.finished_t is not None
        ),
        key=lambda r: r.finished_t or 0.0,
        default=None,
    )
    if first is not None and first is not run:
        line += f"; {first.name} crashed first"
        if run.status == "ended":
            line += ", and torchrun stops the other ranks when one fails"
    return line
