"""The rules read from a run's compiles: regional compilation, recompiles on an
input's size, graph breaks, compile workers waited on while cores sit idle.
Each reads one run (``calls``: the horizon, unused by these) and returns an item,
or None where it does not apply. One idea past 600 lines: what a run's compiles advise."""

from __future__ import annotations

import dataclasses
import re
import statistics

from dlcprof import events as ev
from dlcprof import hatches, text
from dlcprof.figures import compile_cost as fc
from dlcprof.figures import graph_breaks as fgb
from dlcprof.figures import phases as fp
from dlcprof.figures.advice.call_args import Passed, passed_as
from dlcprof.figures.advice.model import Advice, Prediction, compile_seconds
from dlcprof.session import Recompile, Run, Session
from dlcprof.trace_records import gb_catalogue

# Phases paid once per process whatever is compiled: regional compilation keeps them.
FIXED_PHASES = ("inductor_codecache_torch_key",)
# Where the compiling thread builds or waits for kernels: identical blocks share their
# kernels' source, so their builds do not shrink with the number of blocks compiled.
BUILD_PHASES = (fp.COMPILE_FILE, "async_compile.wait", "PyCodeCache.load_by_key_path")
# "tensor 'x' size mismatch at index 1. expected 4, actual 6"; a keyword argument
# reads "tensor 'kwargs['input_ids']'", an element "tensor 'batch[0]'" (a Lightning
# batch, a positional argument "args[0]"): kept whole, it is the program's own name.
# A recompile's reason names every cache entry tried, newest first ("0/1: tensor 'x'
# size mismatch ...; 0/0: ..."): each match is one entry's, with its sizes.
_SIZE_MISMATCH = re.compile(
    r"(?:\S+: )?tensor '(\S+?)' size mismatch at index (\d+)(?:\. expected (\d+), actual (\d+))?"
)
_KEYED = re.compile(r"[A-Za-z_]*\['([^']+)'\]")
_GUARDED = re.compile(r"([A-Za-z_]\w*)((?:\[[^\]]+\])*)")  # a local, then its items
_EXPECTED = re.compile(r"size mismatch at index \d+\. expected (\d+)")
# A dynamic compile against a static one of the same code, where the session has no
# dynamic sweep to measure it (benchmarks/RESULTS.md §7).
DYNAMIC_PREMIUM = 2.0
# Waiting on compile workers for this share of the compile, with cores idle.
WAIT_SHARE = 0.2
WAIT_PHASE = "async_compile.wait"


# --- regional compilation ------------------------------------------------------------


def regional(session: Session, run: Run, calls: int) -> Advice | None:
    cost = fc.compile_cost(run)
    before = compile_seconds(run)
    if cost is None or before is None or not cost.lowered_s:
        return None
    if run.settings is not None and run.settings.regional:
        return None  # already regional
    blocks = [r for r in fc.repeated(cost) if r.forward is not None and text.users_code(r.location)]
    if not blocks:
        return None
    b = blocks[0]
    assert b.forward is not None
    n = len(b.instances)
    share = b.lowering_s / cost.lowered_s
    fixed = _phase_s(run, FIXED_PHASES)
    builds = _builds_s(run)
    dynamo = cost.dynamo_s if cost.dynamo_s is not None else cost.traced_s
    backend = max(0.0, before - dynamo - fixed - builds)
    guards = max(0.0, dynamo - cost.traced_s)
    after = b.forward.total_s / n + backend * share / n + fixed + guards + builds
    how = (
        f"one {b.cls} compiled instead of {n}: its Dynamo tracing "
        f"({text.secs(b.forward.total_s)} for {n}) and its {text.pct(share)} share of the "
        f"rest of the backend ({text.secs(backend)}, by lowering time) divided by {n}; the "
        f"code around the blocks no longer compiles; kernel builds ({text.secs(builds)}: "
        f"identical blocks share kernels) and one-time work ({text.secs(fixed + guards)}) "
        "stay"
    )
    name = "module" if b.cls[0].isupper() else "m"
    return Advice(
        rule="regional",
        title=f"compile each {b.cls} on its own (regional compilation)",
        change=(
            f"compile the {n} {b.cls} instances one by one instead of the whole model: "
            "they share one compiled graph"
        ),
        evidence=[
            f"{b.cls}.forward traced {b.forward.traced} times, {text.secs(b.forward.total_s)} "
            f"of Dynamo's {text.secs(dynamo)}",
            f"its {n} instances are {text.pct(share)} of Inductor's lowering "
            f"({text.secs(b.lowering_s)} of {text.secs(cost.lowered_s)}, {b.nodes} FX nodes)",
            f"compile {text.secs(before)}",
        ],
        cost=(
            "the code around the blocks runs eager and nothing fuses across a block's edge: "
            "steady latency may rise (try measures it)"
        ),
        predicted=Prediction("compile", before, after, how),
        snippet=(
            f"for {name} in model.modules():\n    if isinstance({name}, {b.cls}):\n"
            f"        {name}.compile()  # instead of torch.compile(model)"
        ),
        where=b.location,
        options={"regional": b.cls},
    )


def _builds_s(run: Run) -> float:
    """Seconds the compiling thread spent building or waiting for kernels (nested
    phases counted once)."""
    total = 0.0
    for c in run.compiles.values():
        main = {p.thread for p in c.phases if p.name == "entire_frame_compile"}
        spans = sorted(
            (p.start_t, p.end_t) for p in c.phases if p.name in BUILD_PHASES and p.thread in main
        )
        end = float("-inf")
        for a, b in spans:
            if b > end:
                total += b - max(a, end)
                end = b
    return total


def _phase_s(run: Run, names: tuple[str, ...]) -> float:
    return sum(p.duration_s for c in run.compiles.values() for p in c.phases if p.name in names)


# --- shape-driven recompiles -----------------------------------------------------------


def size_mismatch(reason: str) -> tuple[str, int] | None:
    """("x", 1) from "tensor 'x' size mismatch at index 1 ...", ("batch[0]", 0) from
    "tensor 'batch[0]' size mismatch at index 0 ...", ("input_ids", 0) from
    "tensor 'kwargs['input_ids']' ..."."""
    m = _SIZE_MISMATCH.search(reason)
    return None if m is None else (_input_name(m.group(1)), int(m.group(2)))


def _passed(call: Recompile, guarded: str) -> Passed | None:
    """What the program's own call passed as the compiled code's ``guarded``
    (``call_args.passed_as``); None through a library, or where the call is
    not known or does not say."""
    return passed_as(call.call, guarded) if call.call and not call.through else None


def passed_tensor(call: Recompile | None, reason: str) -> str | None:
    """The program's expression for the tensor of ``reason``'s first size guard,
    where writing it again gives the same tensor; None where the call does not say."""
    m = _SIZE_MISMATCH.search(reason)
    passed = _passed(call, m.group(1)) if call is not None and m is not None else None
    return passed.expression if passed is not None and passed.same_tensor else None


def _input_name(guarded: str) -> str:
    keyed = _KEYED.fullmatch(guarded)
    return keyed.group(1) if keyed else guarded


def avoidable_sizes(reason: str) -> dict[tuple[str, int], str]:
    """Each input's dim whose size guard failed in a cache entry the recompile
    tried, and the entry's words, where that dim marked dynamic would have let the
    entry serve: neither size 0 or 1, which torch specializes whatever mark_dynamic
    says (a ``generate()``'s prompt, then its one-token steps). The first size
    guard is not enough: the newest entry may be one of another size of 1."""
    found: dict[tuple[str, int], str] = {}
    for m in _SIZE_MISMATCH.finditer(reason):
        sizes = {int(n) for n in m.group(3, 4) if n is not None}
        if not sizes & {0, 1}:
            found.setdefault((_input_name(m.group(1)), int(m.group(2))), m.group(0))
    return found


def _most_paid(paid_by: list[tuple[tuple[str, int], float]]) -> tuple[str, int]:
    """The input's dim that recompiled most, of several the one whose recompiles cost
    the most seconds, then the first seen: the same item however the names hash."""
    count: dict[tuple[str, int], tuple[int, float]] = {}
    for d, seconds in paid_by:
        n, s = count.get(d, (0, 0.0))
        count[d] = (n + 1, s + seconds)
    return max(count, key=lambda d: count[d])


def _from_size_0_or_1(reason: str) -> bool:
    """ "... size mismatch at index 0. expected 1, actual 2": the guard of a size torch
    specializes even on a dim marked dynamic."""
    m = _EXPECTED.search(reason)
    return m is not None and int(m.group(1)) in (0, 1)


def _dynamic_premium(session: Session, run: Run) -> tuple[float, str]:
    """How many times a static compile a dynamic one costs, and where that came from:
    a dynamic sweep of the same workload in the session, else DYNAMIC_PREMIUM."""
    first = run.sweep[0].transition_s if run.sweep else 0.0
    for other in reversed(session.runs.values()):
        o = other.settings
        if (
            o is not None
            and o.dynamic == "true"
            and other.sweep
            and first > 0
            and run.settings is not None
            and o.target == run.settings.target
        ):
            ratio = other.sweep[0].transition_s / first
            return ratio, f"{ratio:.1f}x, measured by this session's dynamic sweep"
    return DYNAMIC_PREMIUM, f"{DYNAMIC_PREMIUM:.0f}x, as measured on variable-length here"


def mark_dynamic_sweep(session: Session, run: Run, calls: int) -> Advice | None:
    """A workload's shape sweep that recompiled on an input's size."""
    if run.settings is None or run.settings.mark_dynamic or run.settings.dynamic == "true":
        return None
    steps = run.sweep
    recompiled = [st for st in steps[1:] if st.recompiled and st.reason]
    found = [size_mismatch(st.reason or "") for st in recompiled]
    paid_by = [(d, st.transition_s) for st, d in zip(recompiled, found, strict=True) if d]
    if not paid_by:
        return None
    name, dim = _most_paid(paid_by)
    paid = [st for st, d in zip(recompiled, found, strict=True) if d == (name, dim)]
    before = sum(st.transition_s for st in steps)
    # One compile, dynamic from the first size: what the other sizes paid to recompile
    # goes, and the first compile, now dynamic, costs more.
    premium, source = _dynamic_premium(session, run)
    paid_s = sum(st.transition_s for st in paid)
    gone = f"the {text.plural(len(paid), 'recompile')} on {name}'s dim {dim} ({text.secs(paid_s)})"
    gone += " no longer happens" if len(paid) == 1 else " no longer happen"
    # torch specializes a size of 0 or 1 whatever mark_dynamic says: the recompile away
    # from it stays, and is the compile that turns dynamic.
    kept = next((st for st in paid if _from_size_0_or_1(st.reason or "")), None)
    if kept is None:
        first = steps[0].transition_s
        after = before - paid_s + first * (premium - 1)
        how = f"{gone}; the first compile, now dynamic, costs more: {text.secs(first)} × {source}"
    else:
        after = before - paid_s + kept.transition_s * premium
        how = (
            f"{gone}, but the one away from a size of 0 or 1 (torch "
            f"specializes those), now dynamic and costing more: "
            f"{text.secs(kept.transition_s)} × {source}"
        )
    evidence = [
        f"{len(paid)} of {len(steps)} sweep sizes recompiled on {name} dim {dim} "
        f"({text.secs(paid_s)})",
        f"sweep transitions {text.secs(before)} in all",
    ]
    return _mark_dynamic_item(name, dim, evidence, Prediction("recompiles", before, after, how))


def mark_dynamic_recompiles(session: Session, run: Run, calls: int) -> Advice | None:
    """An attached process's recompiles on an input's size: what they cost, from torch's
    wall time of each compile they triggered, against what one dynamic compile adds."""
    found = [(rc, avoidable_sizes(rc.reason)) for rc in run.recompiles]
    paid_by = [(d, rc.cost_s or 0.0) for rc, dims in found for d in dims]
    if not paid_by:
        return None
    name, dim = _most_paid(paid_by)
    paid = [rc for rc, dims in found if (name, dim) in dims]
    words = next(dims[name, dim] for _, dims in found if (name, dim) in dims)
    priced = [rc for rc in paid if rc.cost_s is not None]
    # A training step compiles each graph's backward too: a recompile's goes with it.
    backward = sum(_backward_s(run, rc.compile_id) for rc in priced if rc.compile_id)
    premium, source = _dynamic_premium(session, run)
    # A recompile that made the dim dynamic (automatic dynamic shapes) compiled the
    # dynamic graph already: its graph's work as a static compile is its cost ÷ premium.
    made_dynamic = {d.compile_id for d in run.dynamic_dims}
    by_frame: dict[str, list[float]] = {}  # each recompile's static seconds, backward included
    for rc in priced:
        if rc.compile_id:
            cost = (rc.cost_s or 0.0) + _backward_s(run, rc.compile_id)
            cost /= premium if rc.compile_id in made_dynamic else 1.0
            by_frame.setdefault(rc.compile_id.split("/")[0], []).append(cost)
    paid_s = sum(rc.cost_s or 0.0 for rc in priced) + backward
    frames = {rc.compile_id.split("/")[0] for rc in paid if rc.compile_id}
    firsts = [run.compiles[f"{f}/0"].wall_s for f in frames if f"{f}/0" in run.compiles]
    first = sum(w for w in firsts if w is not None)
    first += sum(_backward_s(run, f"{f}/0") for f in frames)
    # What the dynamic compile adds is its graph's work × (premium - 1), not the whole
    # first compile's: that one also did the process's one-time work (imports, cold
    # caches), which stays. A recompile of the frame is its graph's work without it.
    graph = min(first, sum(statistics.median(costs) for costs in by_frame.values()))
    dynamic = any(rc.compile_id in made_dynamic for rc in priced)
    extra = graph * (premium - 1)
    unpriced = len(paid) - len(priced)
    gone = (
        f"the {text.plural(len(priced), 'recompile')} on {name}'s dim {dim} "
        f"({text.secs(paid_s)}, torch's wall time of each"
        + (f", {text.secs(backward)} of it their backward" if backward else "")
        + (") no longer happens" if len(priced) == 1 else ") no longer happen")
    )
    unfinished = f"; {unpriced} not finished yet, not counted" if unpriced else ""
    how = (
        f"{gone}; the first compile, now dynamic, costs more: its graph's "
        f"work, {text.secs(graph)} as a recompile of it took"
        + (" (÷ the premium where that recompile made the dim dynamic)" if dynamic else "")
        + f" (the first compile's {text.secs(first)} also did the process's one-time work), "
        f"× ({premium:.1f} - 1), the dynamic premium {source}{unfinished}"
    )
    evidence = [
        f"{text.plural(len(paid), 'recompile')} on {name} dim {dim} "
        f"({text.secs(paid_s)}): {text.short(words, 200)}"
    ]
    predicted = None
    static = None  # a change that keeps the compile static: no premium to pay
    if priced:
        predicted = Prediction("compile", first + paid_s, first + extra, how)
        kept = f"{gone}; the compiles stay static, each costing what it did{unfinished}"
        static = Prediction("compile", first + paid_s, first, kept)
    call = next((rc for rc in paid if rc.called_at or rc.through), None)
    if call is None:  # an imported log: no stack says who called
        return _mark_dynamic_item(name, dim, evidence, predicted)
    guarded = m.group(1) if (m := _SIZE_MISMATCH.match(words)) else name
    ids = {rc.compile_id for rc in paid}
    made = [d.source for d in run.dynamic_dims if d.compile_id in ids]
    together = _made_dynamic_with((guarded, dim), made)
    return _at_the_call(run, call, (name, together), evidence, (predicted, static))


# Frameworks whose own option bounds the sizes a batch comes in, by the installed
# package the compiled code or its caller is in: (the option, its cost) for dim 0
# and for a later dim.
PADDING = {
    "transformers": (
        (
            "TrainingArguments(dataloader_drop_last=True): no partial last batch",
            "the partial last batch's examples are left out of each epoch",
        ),
        (
            "pad_to_multiple_of where the batch is padded: the data collator "
            "(DataCollatorWithPadding, DataCollatorForLanguageModeling; TRL: "
            "SFTConfig(pad_to_multiple_of=...)), or the tokenizer (tokenizer(texts, "
            "padding=True, pad_to_multiple_of=8)): the lengths fall into a few sizes, each "
            "compiled once",
            "padding computes tokens for nothing",
        ),
    ),
}
PADDING["trl"] = PADDING["transformers"]
# transformers' generate() calls the compiled forward with a prompt's length, then
# one token at a time over a KV cache that grows: a data collator is not in it.
# (the option, its cost, whether the compiles stay static)
GENERATE = "transformers/generation/"
PROMPT_PADDING = (
    "pad the prompts to a few lengths: tokenizer(prompts, padding=True, pad_to_multiple_of=8, "
    'return_tensors="pt") with padding_side="left" (a decoder-only model), its attention_mask '
    "passed to generate(): each length compiled once",
    "padding computes tokens for nothing",
    False,
)
STATIC_CACHE = (
    'a static KV cache: generate(..., cache_implementation="static", max_cache_len=N), N at '
    "least the longest prompt plus max_new_tokens: one cache size for every prompt and step",
    "the cache holds N positions from the first step, and each step attends over them all",
    True,
)
# The KV cache's tensors, not the positions of the tokens in it (a prompt's length).
_KV_CACHE = re.compile(r"past_key_values|cache(?!_position)")


def _package(where: str) -> str:
    inside = text.in_package(where) or ""
    return inside.split("/", 1)[0]


# A dim torch made dynamic, as its records name it: L['kwargs']['mask'].size()[1].
_MADE_DYNAMIC = re.compile(r"L\['(\w+)'\]((?:\[[^\]]+\])*)\.size\(\)\[(\d+)\]")


def _made_dynamic_with(first: tuple[str, int], made: list[str]) -> list[tuple[str, int]]:
    """The input's dim (its size guard's name) and the inputs' dims torch made
    dynamic in the same recompiles (``made``: their sources): an attention mask
    whose length is the ids' own. Marking one of them alone, torch specializes
    it to the other's static size and raises (ConstraintViolationError)."""
    out = [first]
    for source in made:
        m = _MADE_DYNAMIC.fullmatch(source)
        if m and m[1] != "self" and (d := (m[1] + m[2], int(m[3]))) not in out:
            out.append(d)
    return out


def _at_the_call(
    run: Run,
    call: Recompile,
    names: tuple[str, list[tuple[str, int]]],
    evidence: list[str],
    predicted: tuple[Prediction | None, Prediction | None],
) -> Advice:
    """The item at the program's call that reached the recompiled code: mark the
    size dynamic there, or the framework's own option where the call went
    through one that has it. ``names``: the input's, and its size guard's name
    and dim with those torch made dynamic with it (``_made_dynamic_with``).
    ``predicted``: with the dim dynamic, and with the compiles kept static (an
    option that gives the dim fewer sizes)."""
    name, together = names
    dim = together[0][1]
    frame = run.compiles.get(f"{(call.compile_id or '').split('/')[0]}/0")
    compiled = str(frame.record.metrics.get("co_filename") or "") if frame and frame.record else ""
    option = _option(call.through, compiled, name, dim)
    at = f" at {call.called_at}" if call.called_at else ""
    # The compiled code's name for the tensor is not the program's (its ``args[0]``,
    # or ``x`` where the program passes ``inputs``): the snippet names what the call passed.
    passes = [_passed(call, g) for g, _ in together]
    passed = passes[0]
    same = [p for p in passes if p is not None and p.same_tensor]
    item = _mark_dynamic_item(name, dim, evidence, predicted[0])
    title, snippet = item.title, ""
    # One input may be named by two frames (a graph break passes it on): one dim.
    shown = list(dict.fromkeys(f"{_input_name(g)} dim {d}" for g, d in together))
    if len(shown) > 1:
        evidence = [
            *evidence,
            "torch made these dynamic together: "
            + ", ".join(shown)
            + " (one marked alone is specialized to the others' size: torch raises)",
        ]
    others = " (and each dim torch made dynamic with it)" if len(shown) > 1 else ""
    if call.through:
        mark = (
            f"if the tensor is one your code passes in, mark its dim {dim}{others} dynamic "
            f"before your call{at} (torch._dynamo.mark_dynamic; the compiled code names it {name})"
        )
        via = text.in_package(call.through) or call.through
        evidence = [*evidence, f"the compiled code is called by {via}, not by your code"]
    elif passed is None:
        mark = (
            f"mark dim {dim} of the tensor your call{at} passes as the compiled code's "
            f"{name}{others} dynamic before the call (torch._dynamo.mark_dynamic)"
        )
    elif len(same) == len(passes):
        # The same tensor passed twice (``input_ids=ids, labels=ids``) is marked once.
        calls = list(
            dict.fromkeys(
                f"torch._dynamo.mark_dynamic({p.expression}, {d})"
                for p, (_, d) in zip(same, together, strict=True)
            )
        )
        snippet = "\n".join(calls)
        mark = f"call {' and '.join(calls)} before the compiled call{at}"
        title = f"mark {passed.expression}'s dim {dim} dynamic"
    elif passed.same_tensor:  # what another of them is, the call does not say
        mark = (
            f"call torch._dynamo.mark_dynamic({passed.expression}, {dim}){others} before "
            f"the compiled call{at}"
        )
    else:
        mark = (
            f"your call{at} passes {passed.expression} as the compiled code's {name}: bind it "
            f"to a name before the call, mark that tensor's dim {dim}{others} dynamic "
            f"(torch._dynamo.mark_dynamic) and pass the name"
        )
    change = f"{mark} (or compile with dynamic=True): one compile serves every size"
    sources = [_torch_source(g) for g, _ in together]
    # `dlcprof try` marks the dims by torch's names of them: no edit of the program.
    tried = ",".join(f"{s}:{d}" for s, (_, d) in zip(sources, together, strict=True))
    item = dataclasses.replace(
        item,
        title=title,
        change=change,
        evidence=evidence,
        where=call.called_at,
        snippet=snippet,
        options={"dynamic_sources": tried} if None not in sources else {},
    )
    if option is None:
        return item
    own, cost, static = option
    return dataclasses.replace(
        item,
        title=f"fewer sizes of {name}'s dim {dim}",
        change=f"{own}; or {change}",
        cost=f"{cost}; {item.cost}",
        predicted=predicted[1] if static else item.predicted,
        # The framework's option is an edit of the program; `try` makes the other
        # change, the dims dynamic, which the prediction is of unless it is static's.
        options={} if static else item.options,
    )


def _torch_source(guarded: str) -> str | None:
    """torch's name of a compiled frame's input, from its size guard's ("args[0]"
    → "L['args'][0]"); None for what is no local's (a module's attribute)."""
    m = _GUARDED.fullmatch(guarded)
    return f"L['{m[1]}']{m[2]}" if m and m[1] != "self" else None


def _option(through: str, compiled: str, name: str, dim: int) -> tuple[str, str, bool] | None:
    """The framework's own way to give the dim fewer sizes, by the package the
    call went through or the compiled code is in: None where none has one."""
    if (text.in_package(through) or "").startswith(GENERATE):
        if _KV_CACHE.search(name):
            return STATIC_CACHE
        return PROMPT_PADDING if dim > 0 or name == "cache_position" else None
    packages = [_package(through), _package(compiled)]
    found = next((PADDING[p] for p in packages if p in PADDING), None)
    if found is None:
        return None
    own, cost = found[0] if dim == 0 else found[1]
    return own, cost, False


def _backward_s(run: Run, compile_id: str) -> float:
    """torch's wall time of the backward compiled for a frame compile (0: none)."""
    c = run.compiles.get(ev.backward_id(compile_id))
    return (c.wall_s or 0.0) if c is not None else 0.0


def _mark_dynamic_item(
    name: str, dim: int, evidence: list[str], predicted: Prediction | None
) -> Advice:
    return Advice(
        rule="mark-dynamic",
        title=f"mark {name}'s dim {dim} dynamic",
        change=(
            f"call torch._dynamo.mark_dynamic({name}, {dim}) on the input before the compiled "
            f"call (or compile with dynamic=True): one compile serves every size"
        ),
        evidence=evidence,
        cost="a kernel with a symbolic size may run slower than one specialized to a size",
        predicted=predicted,
        snippet=f"torch._dynamo.mark_dynamic({name}, {dim})",
        options={"mark_dynamic": f"{name}:{dim}"},
    )


# --- graph breaks ---------------------------------------------------------------------


def _breaks(run: Run) -> list[fgb.Break]:
    """Each break once, a sweep's left out (they are the first call's again)."""
    found = []
    for b in fgb.breaks(run):
        ids = [cid for cid in b.compile_ids if not cid.startswith(ev.SWEEP)]
        if ids or not b.compile_ids:
            found.append(dataclasses.replace(b, compile_ids=ids))
    return found


def _yours(run: Run, b: fgb.Break) -> bool:
    """A break the user can act on: a workload's (dlcprof's own code stands for
    theirs, wherever it is installed), one in an attached program's code, or a
    logging call they can let Dynamo ignore wherever it is."""
    return run.process is None or fgb.users(run, b) or fgb.logging_call(run, b) is not None


def breaks_not_yours(session: Session, run: Run, calls: int) -> str | None:
    """The breaks inside an installed package or the standard library (DDP's own
    forward): one line for ``hidden``, no item: no change of the user's removes them."""
    found = [b for b in _breaks(run) if not _yours(run, b)]
    if not found:
        return None
    each = "; ".join(
        f"{text.short(b.reason, 80)} {text.broke_inside(b.detail)}".rstrip() for b in found
    )
    return (
        f"{text.plural(len(found), 'graph break')} in code not yours (an installed "
        f"package's, the standard library's), reached from "
        f"{text.short_path(found[0].location) or 'your call'}: {each}: no change to your "
        "code removes them (torch's hint to avoid a call there names its own code)"
    )


def graph_breaks(session: Session, run: Run, calls: int) -> list[Advice]:
    """One item per distinct break in the user's code (reason and line, however
    many frames hit it): torch's hatch for it (hatches.py), the graphs it added
    to the compile, and what removing it saves."""
    found = [b for b in _breaks(run) if _yours(run, b)]
    total = compile_seconds(run)
    claimed: set[str] = set()
    items = []
    for b in found:
        extra = fgb.added(run, b, claimed)
        options = hatches.hatches(b.gb_id, f"{b.context} {b.reason}")
        best = options[0]
        logging_call = fgb.logging_call(run, b)
        function = ""
        if logging_call is not None:
            change, snippet, function = fgb.ignore_logging(*logging_call)
            best = dataclasses.replace(hatches.IGNORE_LOGGING, change=change, snippet=snippet)
        elif best is hatches.DISABLE:
            # No hatch known for this kind: torch's own hint first, disable beside it.
            options = [hatches.hint(b.hints[0] if b.hints else ""), *options]
            best = options[0]
        code_change = not best.config and logging_call is None
        hatch = hatches.spec(best, function)
        snippet = best.snippet.replace("{fn}", fgb.function_of(run, b) or "fn")
        frames = [f"hit by {len(b.compile_ids)} frames ({', '.join(b.compile_ids)})"]
        others = [h for h in options if h.name != best.name]
        predicted, why = _merged(run, b, total, extra, best)
        kind = f"{b.gb_id} " if b.gb_id else ""
        at = f"at {text.short_path(b.location) or 'unknown line'}"
        if b.detail and not fgb.users(run, b):  # a logging call inside a package
            at = f"inside {text.short_path(b.detail)}" + (
                f", reached from {text.short_path(b.location)}" if b.location else ""
            )
        items.append(
            Advice(
                rule="graph-break",
                title=f"graph break {kind}{at}: {text.short(b.reason, 80)}",
                change=best.change,
                evidence=[
                    f"Dynamo: {text.short(b.reason, 200)}",
                    _catalogued(b),
                    *(frames if len(b.compile_ids) > 1 else []),
                    fgb.added_words(extra),
                    "eager time between the graphs: "
                    + text.na("not timed: the Python between graphs runs unobserved"),
                    *(
                        [
                            "other hatches: "
                            + "; ".join(f"{h.name} ({h.change}; cost: {h.cost})" for h in others)
                        ]
                        if others
                        else []
                    ),
                ],
                cost=best.cost,
                predicted=predicted,
                predicted_why=why,
                snippet=snippet if best.snippet else "",
                where=b.location if code_change else "",  # a setting goes before the first call
                options={"hatch": hatch} if hatch else {},
                try_why="" if hatch else _untried(b, best),
            )
        )
    return items


def _untried(b: fgb.Break, best: hatches.Hatch) -> str:
    """Why ``try`` cannot apply ``best``."""
    if best.config:  # a set of functions, and the call names none dlcprof can import
        return (
            f"{best.name}: the function to add is not one dlcprof can name by its module "
            "(a logger of a class of your own): add it as shown"
        )
    return (
        f"{best.name} is a change to your code at "
        f"{text.short_path(b.location) or 'the line that broke'}: dlcprof cannot make it for you"
    )


def _catalogued(b: fgb.Break) -> str:
    """ "torch's catalogue: GB0124 (link): explanation", or n/a with why."""
    if not b.gb_id:
        return f"torch's catalogue: {b.kind}"
    entry = gb_catalogue.installed().entry(b.gb_id)
    # Some explanations are torch's source, not prose ('"Detected ..." + trace_info').
    if entry is None or not entry.explanation or re.search(r'^["f]|[{}+]', entry.explanation):
        said = ""
    else:
        said = f": {text.short(entry.explanation, 200)}"
    return f"torch's catalogue: {b.gb_id} ({b.link}){said}"


def _merged(
    run: Run, b: fgb.Break, total: float | None, extra: fgb.Added, hatch: hatches.Hatch
) -> tuple[Prediction | None, str]:
    """The compile once the break is gone: the frames traced with no graph no longer
    compile, each frame that restarted to compile up to the break no longer
    throws that attempt away, and each graph after the break merges into the
    one before it, saving its per-graph overhead only: its ops still compile,
    in the merged graph (benchmarks/RESULTS.md, graph breaks). Where the frame
    that broke first made no graph (a print at the top of forward, a call
    nested frames broke at), the biggest graph after it becomes the merged one
    and keeps its overhead."""
    if not hatch.removes:
        return None, "the break stays, moved to the call of the function: not predicted"
    if hatch.unpredicted:
        return None, hatch.unpredicted
    if not total:
        return None, "no compile seconds measured in this run"
    empty_s = sum(c.wall_s or 0.0 for c in extra.empty)
    # A frame saved whole (0 ops) has its restart in empty_s already.
    restarted = [c for c in fgb.restarted_by(run, b) if c not in extra.empty]
    restart_s = sum(fgb.restart_s(c) for c in restarted)
    first = run.compiles.get(b.compile_ids[0]) if b.compile_ids else None
    merging = list(extra.graphs)
    merged_into = None
    if merging and first is not None and first.record and first.record.graph_op_count == 0:
        merged_into = max(merging, key=fgb.kept_s)
        merging.remove(merged_into)
    overheads = [fgb.graph_overhead(run, c) for c in merging]
    known = [o for o in overheads if o is not None]
    if len(known) < len(overheads):
        return None, (
            "the ops after the break move into the merged graph, whose compile grows by "
            "theirs; the per-graph overhead that merging saves is not measured in this run "
            "(no other graph, no frame compiled without ops)"
        )
    # A graph shorter than the overhead taken saves no more than its own compile.
    merged_s = sum(min(o[0], fgb.kept_s(c)) for o, c in zip(known, merging, strict=True))
    saved = empty_s + restart_s + merged_s
    if not saved or saved >= total:
        return None, "the graphs it added are not found in this run"
    how = []
    if merged_into is not None:
        how.append(
            f"the frame that broke first made no graph: {merged_into.compile_id} becomes the "
            "merged graph, its compile kept"
        )
    if merging:
        many = len(merging) > 1
        how.append(
            f"{text.plural(len(merging), 'graph')} after the break "
            f"{'merge' if many else 'merges'} into {'it' if merged_into else 'the one before it'}"
            f": {'their' if many else 'its'} ops still compile there; the per-graph overhead "
            f"saved, {text.secs(merged_s)}, is {'each' if many else 'its'} compile up to "
            f"{text.secs(min(o[0] for o in known))} ({known[0][1]})"
        )
    if extra.empty:
        how.append(
            f"{text.plural(len(extra.empty), 'frame')} traced with no graph, no longer "
            f"compiled ({text.secs(empty_s)})"
        )
    if restarted:
        ids = ", ".join(c.compile_id for c in restarted)
        how.append(
            f"the attempts Dynamo threw away restarting {ids} up to the break, no longer "
            f"made ({text.secs(restart_s)})"
        )
    return Prediction("compile", total, total - saved, "; ".join(how)), ""


# --- compile workers waited on while cores sit idle -----------------------------------------


def _most_at_once(spans: list[tuple[float, float]]) -> int:
    edges = sorted([(a, 1) for a, _ in spans] + [(b, -1) for _, b in spans])
    now = most = 0
    for _, step in edges:
        now += step
        most = max(most, now)
    return most


def compile_threads(session: Session, run: Run, calls: int) -> Advice | None:
    cores = session.worker.cpu_count if session.worker else None
    before = compile_seconds(run)
    if not cores or not before:
        return None
    phases = [p for c in run.compiles.values() for p in c.phases]
    builds = [(p.start_t, p.end_t) for p in phases if p.name == fp.COMPILE_FILE]
    wait = sum(p.duration_s for p in phases if p.name == WAIT_PHASE)
    at_once = _most_at_once(builds)
    if not builds or wait < WAIT_SHARE * before or at_once >= cores - 1:
        return None
    after = before - wait * (1 - at_once / (cores - 1))
    return Advice(
        rule="compile-threads",
        title=f"build kernels on {cores - 1} threads",
        change=(
            f"set torch._inductor.config.compile_threads = {cores - 1} (or "
            f"TORCHINDUCTOR_COMPILE_THREADS) before the first compile"
        ),
        evidence=[
            f"the compile waited {text.secs(wait)} on kernel builds, at most {at_once} "
            f"at once on a {cores}-core machine"
        ],
        cost="the builds take cores from whatever else runs",
        predicted=Prediction(
            "compile",
            before,
            after,
            f"the wait shrinks as {at_once} builds at once become {cores - 1}",
        ),
        snippet=f"torch._inductor.config.compile_threads = {cores - 1}",
        try_why="no run option sets compile_threads yet",
    )
