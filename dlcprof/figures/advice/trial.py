"""``dlcprof try``: an item of advice applied to the advised run's settings, run,
and measured beside its prediction (``AdviceTried``); for an attached program,
its recorded command run again with the item's change made by dlcprof's
probes, the only change made for it: a graph break's hatch (``options["hatch"]``)
or an input's dims made dynamic by torch's names of them
(``options["dynamic_sources"]``); or, for a cache item (``options["cache"]``),
run twice on a new cache folder: the cold fill, then the warm start measured
against it (for Mega-Cache, the warm start on another new folder with the
fill's artifacts loaded)."""

from __future__ import annotations

import dataclasses
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.figures import benchmark as fb
from dlcprof.figures import boot as fboot
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures.advice.model import CALLS_TOTAL, LATENCY, Advice, Prediction, compile_seconds
from dlcprof.figures.cache import HEADER_BUILT
from dlcprof.figures.check.baseline import FLOOR_S, beyond_noise
from dlcprof.figures.check.budgets import COMPILE_TOLERANCE
from dlcprof.session import Run, Session

# Why an attached program's item that dlcprof cannot make for it (or whose
# command cannot run again here: a merged job, imported logs) cannot be tried for you.
PROGRAM_TRY_WHY = (
    "dlcprof re-runs your program only with a graph break's setting (a hatch of "
    "torch._dynamo.config), with an input's dims made dynamic (mark_dynamic's item), or "
    "twice on a new cache folder (a cache item), on a command it started: edit your code as "
    "shown (at the file:line given), run it again under dlcprof (dlcprof run -- CMD) and "
    "compare the two sessions with dlcprof compare"
)

# The TUI follows one program: a program's item is tried on a saved session from the shell.
PROGRAM_TRY_FROM_SHELL = (
    "save the session, then run dlcprof try SESSION N in a shell: it runs your command again "
    "with the item's change (a cache item: twice, on a new cache folder)"
)


def rerunnable(session: Session) -> bool:
    """An attached program whose recorded command ``try`` can run again: one
    started here, not a job ``dlcprof merge`` joined nor logs ``dlcprof import``
    read."""
    return session.program is not None and not session.nodes and session.imported is None


def advised_run(session: Session) -> Run | None:
    """The run advice is read from: the latest that is not itself a trial."""
    trials = {t.run_id for t in session.tried}
    attached = [r for r in session.runs.values() if r.process is not None]
    if attached:  # an attached program: the process that compiled the most
        return max(attached, key=lambda r: r.compile_wall_s)
    runs = [r for r in session.runs.values() if r.run_id not in trials and r.settings]
    return runs[-1] if runs else None


def trial_settings(run: Run, item: Advice) -> dict[str, Any]:
    """The advised run's settings as it ran (cache setting included), with the item's change."""
    assert run.settings is not None
    d = dataclasses.asdict(run.settings)
    d["shapes"] = d.get("shapes") or None
    # py-spy takes CPU from a compile: the trial samples only if the advised run did.
    spy = run.monitors.get("py-spy")
    d["hotspots"] = spy is not None and spy.available
    d.update(item.options)
    return d


def _measured_s(run: Run, p: Prediction | None) -> float | None:
    what = p.what if p else "compile"
    if what == "recompiles":
        return sum(st.transition_s for st in run.sweep) if run.sweep else None
    if what == LATENCY:
        return run.benchmark.compiled_ms / 1e3 if run.benchmark else None
    compile_s = compile_seconds(run)
    if what == CALLS_TOTAL and p is not None and p.calls:
        if compile_s is None or run.benchmark is None:
            return None
        return compile_s + p.calls * run.benchmark.compiled_ms / 1e3
    return compile_s


# options["cache"] of a cache item: how `dlcprof try` runs the command twice.
KEPT_FOLDER = "kept-folder"  # both runs on one new folder
MEGA_CACHE = "mega-cache"  # the warm start on another new folder, the fill's artifacts loaded


def tried(
    advised: Run,
    trial: Run,
    item: Advice,
    walls: tuple[float | None, float | None] = (None, None),
    cold: tuple[Session, Run] | None = None,
    warm: Session | None = None,
) -> ev.AdviceTried:
    """``walls``: an attached program's wall time, before and in the trial. A
    cache item's trial: ``cold``, the fill's session and process, is measured
    before ``trial``, the warm start (of session ``warm``), and their boots too."""
    p = item.predicted
    what = p.what if p else "compile"
    first = cold[1] if cold else advised  # the run measured before
    before, after = first.benchmark, trial.benchmark
    spreads = [b.compiled_spread_ms for b in (before, after) if b is not None]
    return ev.AdviceTried(
        run_id=trial.run_id,
        advised_run=advised.run_id,
        rule=item.rule,
        title=item.title,
        options=dict(item.options),
        what=what,
        predicted_before_s=p.before_s if p else None,
        predicted_after_s=p.after_s if p else None,
        measured_before_s=_measured_s(first, p),
        measured_after_s=_measured_s(trial, p),
        steady_before_ms=before.compiled_ms if before else None,
        steady_after_ms=after.compiled_ms if after else None,
        steady_spread_ms=max(spreads) if len(spreads) == 2 else None,
        cache_before=_cache_state(first),
        cache_after=_cache_state(trial),
        breaks_before=len(fgb.breaks(first)),
        breaks_after=len(fgb.breaks(trial)),
        graphs_before=_graphs(first),
        graphs_after=_graphs(trial),
        wall_before_s=walls[0],
        wall_after_s=walls[1],
        boot_before_s=_boot_s(*cold) if cold else None,
        boot_after_s=_boot_s(warm, trial) if warm else None,
    )


def _boot_s(session: Session, run: Run) -> float | None:
    """The process's start to its first compiled call or step."""
    b = fboot.boot(session, run)
    return b.first.seconds if b is not None else None


def _graphs(run: Run) -> int:
    """Forward frame compiles that made a graph (ops), a sweep's left out."""
    return sum(
        1
        for c in run.compiles.values()
        if c.record is not None
        and not c.is_backward
        and c.record.graph_op_count != 0
        and not c.compile_id.startswith(ev.SWEEP)
    )


def _cache_state(run: Run) -> str | None:
    cache = fb.compile_cache(run)
    state = cache.state if cache else None
    return f"{state}{_HEADER}" if run.header_built is not None else state


def prediction_error(t: ev.AdviceTried) -> float | None:
    """|predicted saving − measured saving| / measured saving."""
    p0, p1, m0, m1 = (
        t.predicted_before_s,
        t.predicted_after_s,
        t.measured_before_s,
        t.measured_after_s,
    )
    if p0 is None or p1 is None or m0 is None or m1 is None:
        return None
    if t.what != LATENCY and _within_noise(m0, m1):
        return None  # no measured saving to be wrong about
    predicted = p0 - p1
    measured = m0 - m1
    return abs(predicted - measured) / abs(measured) if measured else None


def _change(before: float | None, after: float | None) -> float | None:
    return after / before - 1.0 if before and after is not None else None


def tried_text(t: ev.AdviceTried) -> str:
    """ "predicted −71% compile, measured −64%; steady latency +9%"."""
    predicted = _change(t.predicted_before_s, t.predicted_after_s)
    measured = _change(t.measured_before_s, t.measured_after_s)
    said = (
        f"predicted {text.signed_pct(predicted)} {t.what}"
        if predicted is not None
        else f"no prediction; {t.what}"
    )
    # A latency's repetitions have a spread (the steady part below); seconds
    # measured once a side, none: what two runs differ by is the noise.
    noisy = t.what != LATENCY and _within_noise(t.measured_before_s, t.measured_after_s)
    shown = text.NO_DIFFERENCE if noisy else text.signed_pct(measured)
    words = (
        f"{said}, measured {shown} ({text.secs(t.measured_before_s)} "
        f"→ {text.secs(t.measured_after_s)})"
    )
    if t.options.get("dynamic_sources"):  # what the trial changed, by torch's names
        words += f"; made dynamic: {t.options['dynamic_sources'].replace(',', ', ')}"
    if t.breaks_before is not None and t.breaks_after is not None:
        words += f"; graph breaks {t.breaks_before} → {t.breaks_after}"
    if t.graphs_before is not None and t.graphs_after is not None:
        words += f", graphs {t.graphs_before} → {t.graphs_after}"
    if t.steady_before_ms is not None and t.steady_after_ms is not None:
        spread = t.steady_spread_ms or 0.0
        if abs(t.steady_after_ms - t.steady_before_ms) <= spread:
            words += f"; steady latency: {text.NO_DIFFERENCE}"
        else:
            steady = text.signed_pct(_change(t.steady_before_ms, t.steady_after_ms))
            words += (
                f"; steady latency {steady} ({text.ms(t.steady_before_ms)} → "
                f"{text.ms(t.steady_after_ms)})"
            )
    for label, before, after in (
        ("program wall", t.wall_before_s, t.wall_after_s),
        ("boot to the first compiled call", t.boot_before_s, t.boot_after_s),
    ):
        if before is not None and after is not None:
            within = _within_noise(before, after)
            noisy = noisy or within
            change = text.NO_DIFFERENCE if within else text.signed_pct(_change(before, after))
            words += f"; {label} {change} ({text.secs(before)} → {text.secs(after)})"
    if "cache" in t.options:  # the two caches' states are what was tried
        words += f"; {_cache_words(t.cache_before)} (fill) → {_cache_words(t.cache_after)}"
    elif t.cache_before != t.cache_after:
        words += (
            f"; not comparable: {_cache_words(t.cache_before)} before, "
            f"{_cache_words(t.cache_after)} in the trial"
        )
    if noisy:
        words += f" ({ONE_RUN_EACH})"
    return words


ONE_RUN_EACH = (
    f"one run each: two runs of one command differ by up to {text.pct(COMPILE_TOLERANCE)} "
    f"or {text.secs(FLOOR_S)} with nothing changed"
)


def _within_noise(before: float | None, after: float | None) -> bool:
    return before is not None and after is not None and not beyond_noise(before, after)


# A run whose first compile also built Inductor's precompiled header paid a
# one-time cost the other run did not: its compile seconds are not comparable.
_HEADER = "+header"


def _cache_words(state: str | None) -> str:
    header = state is not None and state.endswith(_HEADER)
    state = state.removesuffix(_HEADER) if state else state
    # The state alone: how many graphs hit is not kept.
    words = "a cache hit for some graphs" if state == "partial" else fb.cache_state(state)
    return f"{words} {HEADER_BUILT}" if header else words
