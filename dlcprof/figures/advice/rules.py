"""Every rule of the advice in one table, and ``advise``, which reads a run
through it.

An item whose predicted saving is inside the measured noise is not shown; a run
that needs no change gets one "nothing to change" line saying why. An attached
program's process (``dlcprof run -- CMD``) gets the rules whose row has a
``program`` reader (its own compiles: regional compilation, recompiles on an
input's size, graph breaks in its own code; a rank's recompiles no other rank
made); only a graph break's setting and a cache item can be tried for you
(``dlcprof try`` re-runs the command with the setting, or twice on a new cache
folder), and the rules that read the benchmark are not checked.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures import benchmark as fb
from dlcprof.figures import compile_cost as fc
from dlcprof.figures.advice import cache_rules as cacher
from dlcprof.figures.advice import compile_rules as cr
from dlcprof.figures.advice import failure_rules as fr
from dlcprof.figures.advice import job_rules as jr
from dlcprof.figures.advice import speed_rules as sr
from dlcprof.figures.advice.model import DEFAULT_CALLS, Advice, AdviceList, compile_noise
from dlcprof.figures.advice.trial import PROGRAM_TRY_WHY, rerunnable
from dlcprof.figures.runs import ATTACHED, IMPORTED, TEST, kind
from dlcprof.session import Run, Session

# What a rule finds: an item (a list of them), a line for ``AdviceList.hidden``, or None.
Found = Advice | list[Advice] | str | None
Reader = Callable[[Session, Run, int], Found]


@data(frozen=True)
class Rule:
    label: str  # the remedy in words
    run: Reader | None  # on a workload's run; None: not applied (a job's rule)
    program: Reader | None = None  # on an attached program's process; None: not applied
    noise: bool = False  # an item whose predicted saving is inside the noise is hidden
    benchmark: bool = False  # reads the benchmark, which an attached program lacks


# In the order the items are listed.
RULES = (
    Rule("a compile that raised", fr.compile_raised, program=fr.compile_raised),
    Rule("the recompile limit", fr.recompile_limit, program=fr.recompile_limit),
    # A job's: what a rank's recompile cost every rank.
    Rule("a rank's solo recompile", None, program=jr.solo_recompiles),
    Rule("kernel-build workers per host", None, program=jr.compile_workers),
    Rule("regional compilation", cr.regional, program=cr.regional, noise=True),
    Rule(
        "recompiles on an input's size",
        cr.mark_dynamic_sweep,
        program=cr.mark_dynamic_recompiles,
        noise=True,
    ),
    Rule("graph breaks", cr.graph_breaks, program=cr.graph_breaks),
    Rule("graph breaks not in your code", None, program=cr.breaks_not_yours),
    Rule("keep the cache", sr.keep_cache, benchmark=True),
    # An attached program's warm start: the caches it missed, by its folder.
    Rule("a cache folder a container loses", None, program=cacher.kept_folder),
    Rule("Mega-Cache for fresh machines", None, program=cacher.mega_cache),
    Rule("a mode that pays back sooner", sr.mode, benchmark=True),
    Rule("freezing", sr.freezing, benchmark=True),
    Rule("reduce-overhead", sr.reduce_overhead, benchmark=True),
    # Reads the worker's core count: an attached program's is not recorded.
    Rule("compile threads", cr.compile_threads),
    Rule("no payback", sr.no_payback, benchmark=True),
)


def _unchecked(who: str) -> str:
    """What the advice of ``who`` (no benchmark) does not check."""
    rules = ", ".join(r.label for r in RULES if r.benchmark)
    return f"{rules}: not checked: {who} has no benchmark (no eager timing)"


PROGRAM_UNCHECKED = _unchecked("an attached program")
# A program's advice, by whose process it is (runs.kind).
_UNCHECKED = {
    ATTACHED: PROGRAM_UNCHECKED,
    TEST: _unchecked("a test of the pytest plugin"),
    IMPORTED: _unchecked("a process read from its TORCH_TRACE log"),
}


def advise(session: Session, run: Run, calls: int | None = None) -> AdviceList:
    """The advice for one run, or one attached program's process (no benchmark, so
    no noise to compare with there: a saving must be positive). ``calls``: the
    payback horizon, else the run's own (``--calls``), else the default."""
    calls = calls or (run.settings.calls if run.settings else None) or DEFAULT_CALLS
    program = run.process is not None
    noise = 0.0 if program else compile_noise(run)
    items: list[Advice] = []
    hidden: list[str] = []
    for rule in RULES:
        read = rule.program if program else rule.run
        found = read(session, run, calls) if read is not None else None
        if found is None:
            continue
        if isinstance(found, str):
            hidden.append(found)
            continue
        found = found if isinstance(found, list) else [found]
        items += _above_noise(found, noise, hidden) if rule.noise else found
    nothing = None if items else _nothing(run, hidden)
    if program:
        rerun = rerunnable(session)
        items = [
            i
            if rerun and i.options.keys() & {"hatch", "cache", "dynamic_sources"}
            else dataclasses.replace(i, options={}, try_why=PROGRAM_TRY_WHY)
            for i in items
        ]
        hidden.append(_UNCHECKED[kind(run)])
    return AdviceList(run.run_id, items, nothing, hidden)


def _above_noise(found: list[Advice], noise: float, hidden: list[str]) -> list[Advice]:
    """The items whose predicted saving is above the noise; the others go to ``hidden``."""
    items = []
    for item in found:
        saving = item.predicted.saving_s if item.predicted is not None else None
        if saving is not None and saving <= noise:
            if saving < 0:  # a loss, whatever the noise
                hidden.append(f"{item.title}: predicted to cost {text.secs(-saving)} more")
            else:
                hidden.append(
                    f"{item.title}: predicted {text.secs(saving)}, "
                    f"inside the compile's noise ({text.secs(noise)})"
                )
            continue
        items.append(item)
    return items


def _nothing(run: Run, hidden: list[str]) -> str:
    facts = []
    speed = fb.run_speed(run)
    if speed is not None and speed.break_even is not None:
        facts.append(f"the compile pays back after {text.runs(speed.break_even)}")
    n = len(run.recompiles)
    on_size = any(cr.size_mismatch(rc.reason) for rc in run.recompiles)
    facts.append(
        "no recompiles"
        if not n
        else text.plural(n, "recompile") + ("" if on_size else ", none on an input's size")
    )
    facts.append("no graph breaks")
    if hidden:
        facts.append(f"{text.plural(len(hidden), 'change')} would save less than the noise")
    elif fc.compile_cost(run) is not None:
        facts.append("no module class of your code repeated")
    return "nothing to change: " + ", ".join(facts)
