"""Graph breaks: each break once, however many frames hit it, and the graphs it
added to the compile.

A break inside nested calls (a logger's ``warning_once`` three modules deep)
makes Dynamo compile the caller up to the call, then each nested frame on its
own, each breaking at the same line: one break, hit by several frames. Each
broken frame then resumes in a frame of its own
(``torch_dynamo_resume_in_<function>_at_<line>``).
"""

from __future__ import annotations

import re

from dlcprof import text
from dlcprof.data import data
from dlcprof.figures.phases import restarts
from dlcprof.session import Compile, Run
from dlcprof.trace_records import gb_catalogue

# Torch's name for the frame a broken function resumes in (torch/_dynamo/resume_execution.py).
_RESUME = re.compile(r"^torch_dynamo_resume_in_(?P<fn>.+)_at_(?P<line>\d+)$")
# Dynamo's debug context of a logging call it refused: "method: <Logger name (LEVEL)>.warning_once".
_LOGGING_CALL = re.compile(r"method: <(?P<cls>\w+) (?P<logger>\S+) \([A-Z]+\)>\.(?P<method>\w+)")
# The setting torch's hint names (ignore_logger_methods in older releases).
_LOGGING_HINT = re.compile(r"ignore_logg(?:ing_functions|er_methods)")


@data
class Break:
    """One graph break: its reason at one line of the user's code, and every frame that hit it."""

    reason: str
    location: str
    detail: str
    hints: list[str]
    compile_ids: list[str]  # the frames that broke there, in order
    gb_id: str = ""  # torch's id of the break type, "" when torch named none
    link: str = ""
    context: str = ""  # Dynamo's debug context: the call that broke

    @property
    def kind(self) -> str:
        """ "GB0124" , or n/a with why."""
        return self.gb_id or text.na("torch named no id for this break")

    @property
    def frames(self) -> str:
        """ "0/0", or "0/0, 1/0, 2/0 (×3 frames)"."""
        ids = ", ".join(self.compile_ids) or text.NA
        n = len(self.compile_ids)
        return ids + (f" (×{n} frames)" if n > 1 else "")


def breaks(run: Run) -> list[Break]:
    """Each break once (its reason and the user's line), in the order first hit."""
    out: dict[tuple[str, str, str], Break] = {}
    for gb in run.graph_breaks:
        key = (gb.reason, gb.location, gb.detail)
        b = out.get(key)
        if b is None:
            # A session recorded before breaks carried their id: the catalogue's.
            gb_id, link = gb_catalogue.identify(gb.gb_id, gb.reason)
            b = out[key] = Break(
                gb.reason, gb.location, gb.detail, list(gb.hints), [], gb_id, link, gb.context
            )
        if gb.compile_id and gb.compile_id not in b.compile_ids:
            b.compile_ids.append(gb.compile_id)
    return list(out.values())


@data
class Kind:
    """One type of break (torch's id) across runs: the frames that hit it and the lines."""

    gb_id: str
    title: str
    link: str
    frames: int
    lines: list[str]

    def words(self) -> str:
        """ "GB0124 × 3 at 2 lines: Unsupported Tensor.item() call ..."."""
        where = text.plural(len(self.lines), "line")
        return f"{self.gb_id or text.NA} × {self.frames} at {where}: {self.title}"


def kinds(runs: list[Run]) -> list[Kind]:
    """The breaks of ``runs`` (ranks, imported traces) grouped by torch's id
    (by Dynamo's reason where torch named no id), most frames first."""
    out: dict[str, Kind] = {}
    for run in runs:
        for b in breaks(run):
            k = out.setdefault(b.gb_id or b.reason, Kind(b.gb_id, b.reason, b.link, 0, []))
            k.frames += max(1, len(b.compile_ids))
            if b.location and b.location not in k.lines:
                k.lines.append(b.location)
    return sorted(out.values(), key=lambda k: -k.frames)


@data
class Added:
    """What a break added to the compile: the graphs compiled because of it (the
    nested frames compiled on their own, the frames the broken ones resumed in),
    and the frames Dynamo traced that made no graph (0 ops)."""

    graphs: list[Compile]
    empty: list[Compile]

    @property
    def seconds(self) -> float:
        return sum(c.wall_s or 0.0 for c in (*self.graphs, *self.empty))


def _frame(c: Compile) -> tuple[str, str, bool]:
    """(file, function, resumed) of a frame compile; a resumed frame's function
    is the one it resumes."""
    m = c.record.metrics if c.record is not None else {}
    name = str(m.get("co_name") or "")
    resumed = _RESUME.match(name)
    return str(m.get("co_filename") or ""), resumed["fn"] if resumed else name, bool(resumed)


def function_name(co_name: str) -> str:
    """A frame's function as its author knows it: the frame torch resumes a
    broken function in reads "head (resumed at line 21)"."""
    resumed = _RESUME.match(co_name)
    return f"{resumed['fn']} (resumed at line {resumed['line']})" if resumed else co_name


def users(run: Run, b: Break) -> bool:
    """The break is in the user's code: a frame that hit it is a file of theirs
    (or no frame is known). A break only in frames of an installed package or
    the standard library (DDP's forward, contextlib) is not the user's to change,
    whatever torch's hint says to avoid."""
    files = [_frame(run.compiles[cid])[0] for cid in b.compile_ids if cid in run.compiles]
    known = [f for f in files if f]
    return not known or any(text.users_code(f) for f in known)


def added(run: Run, b: Break, claimed: set[str]) -> Added:
    """The compiles ``b`` caused: the frames after the first that hit it, and for
    each frame that hit it, the first later frame resuming its function (not
    already ``claimed`` by another break; those found are added to it)."""
    frames = [run.compiles[cid] for cid in b.compile_ids if cid in run.compiles]
    found = [c for c in frames[1:] if c.record is not None]
    later = sorted(
        (c for c in run.compiles.values() if c.start_t is not None and _frame(c)[2]),
        key=lambda c: c.start_t or 0.0,
    )
    for f in frames:
        file, function, _ = _frame(f)
        resume = next(
            (
                c
                for c in later
                if c.compile_id not in claimed
                and (c.start_t or 0.0) > (f.start_t or float("inf"))
                and _frame(c)[:2] == (file, function)
            ),
            None,
        )
        if resume is not None:
            claimed.add(resume.compile_id)
            found.append(resume)
    found.sort(key=lambda c: c.start_t or 0.0)
    graphs = [c for c in found if c.record is not None and c.record.graph_op_count != 0]
    return Added(graphs, [c for c in found if c not in graphs])


def function_of(run: Run, b: Break) -> str:
    """The function the break is in (the one a resumed frame resumes), "" when unknown."""
    frames = [run.compiles[cid] for cid in b.compile_ids if cid in run.compiles]
    return _frame(frames[0])[1] if frames else ""


def restart_s(c: Compile) -> float:
    """The seconds of ``c``'s compile Dynamo threw away restarting (0.0 when none)."""
    r = restarts(c)
    return r.cost_s if r is not None else 0.0


def kept_s(c: Compile) -> float:
    """``c``'s compile less the attempts Dynamo threw away."""
    return max(0.0, (c.wall_s or 0.0) - restart_s(c))


def restarted_by(run: Run, b: Break) -> list[Compile]:
    """The frames that hit ``b`` and restarted for it alone: each threw an
    attempt away to compile up to the break, an attempt that goes with it."""
    out = []
    for cid in b.compile_ids:
        c = run.compiles.get(cid)
        r = restarts(c) if c is not None else None
        if c is not None and r is not None and r.reasons == [f"graph break: {b.reason}"]:
            out.append(c)
    return out


def graph_overhead(run: Run, graph: Compile) -> tuple[float, str] | None:
    """What compiling ``graph`` on its own costs beyond its ops, at most, and
    how that was taken: the shortest compile of another graph of the run (a
    graph's compile is its overhead plus its ops'), the first compile left out
    (it pays the process's one-time costs); without one, the shortest compile of
    a frame traced to no graph (Dynamo's part only); None without either. Each
    less the attempts Dynamo threw away restarting (``restarted_by``)."""
    done = [
        c
        for c in run.compiles.values()
        if c.record is not None and c.wall_s is not None and not c.is_backward
    ]
    first = min(done, key=lambda c: c.start_t or 0.0) if done else None
    others = [
        kept_s(c)
        for c in done
        if c.record is not None
        and c.record.graph_op_count
        and c is not first
        and c.compile_id != graph.compile_id
    ]
    if others:
        return min(others), "the shortest other graph compile in this run, the first left out"
    empty = [kept_s(c) for c in done if c.record is not None and c.record.graph_op_count == 0]
    if empty:
        return min(empty), "the shortest frame compile with no ops in this run"
    return None


def logging_call(run: Run, b: Break) -> tuple[str, str] | None:
    """(the logger's class, the method) of a logging call Dynamo refused, from
    the debug context of the broken frames' restarts; None for another break."""
    if not any(_LOGGING_HINT.search(h) for h in b.hints):
        return None
    for cid in b.compile_ids:
        c = run.compiles.get(cid)
        reasons = c.record.metrics.get("restart_reasons") if c and c.record else None
        for r in reasons or []:
            m = _LOGGING_CALL.search(str(r))
            if m:
                return m["cls"], m["method"]
    return None


# --- the words of a break -----------------------------------------------------------


def added_words(a: Added) -> str:
    """ "an extra graph compiled after it: 153 ms", "3 extra graphs compiled
    because of it (1/0, 3/0, 4/0): 1.2 s; 1 frame traced with no graph (2/0): 42 ms"."""
    if not a.graphs and not a.empty:
        return f"an extra graph compiled after it: {text.na('no resumed frame found')}"
    if len(a.graphs) == 1 and not a.empty:
        return f"an extra graph compiled after it: {text.secs(a.graphs[0].wall_s)}"
    ids = ", ".join(c.compile_id for c in a.graphs)
    out = (
        f"{text.plural(len(a.graphs), 'extra graph')} compiled because of it ({ids}): "
        f"{text.secs(sum(c.wall_s or 0.0 for c in a.graphs))}"
    )
    if a.empty:
        empty = ", ".join(c.compile_id for c in a.empty)
        out += (
            f"; {text.plural(len(a.empty), 'frame')} traced with no graph, 0 ops ({empty}): "
            f"{text.secs(sum(c.wall_s or 0.0 for c in a.empty))}"
        )
    return out


def ignore_logging(cls: str, method: str) -> tuple[str, str, str]:
    """(the change, its snippet, the method's dotted name for ``--hatch``: ""
    where its class's module is not known) for a logging call Dynamo breaks on.
    transformers' ``warning_once`` is an lru_cache'd function set on
    ``logging.Logger``: Dynamo matches the object ``logging.Logger.warning_once``,
    not the ``Logger.warning`` it calls."""
    owner = f"logging.{cls}" if cls == "Logger" else cls
    imports = "import logging\n\n" if cls == "Logger" else ""
    return (
        f"add {owner}.{method} to torch._dynamo.config.ignore_logging_functions before the "
        "first compiled call: Dynamo then skips the call instead of breaking the graph",
        f"{imports}torch._dynamo.config.ignore_logging_functions.add({owner}.{method})",
        f"{owner}.{method}" if cls == "Logger" else "",
    )
