"""DDPOptimizer and friends: what DistributedDataParallel did to a compile.

Under ``torch.compile`` a DDP model's one Dynamo graph is split by
DDPOptimizer at DDP's gradient bucket boundaries, so each bucket's allreduce
can start while the rest of the backward runs. Every piece is an Inductor graph
of its own, forward and backward, all under the frame's one compile id: Dynamo
counts one graph, Inductor compiles 2 × pieces. Whether the split happens is
set by ``torch._dynamo.config.optimize_ddp`` ("ddp_optimizer" splits;
"python_reducer" leaves the graph whole and needs compiled autograd);
both settings are read once per process, at its first compile (a rank that
never compiled: at its end).
"""

from __future__ import annotations

from dlcprof import events as ev
from dlcprof import text
from dlcprof.data import data
from dlcprof.session import Run, Session

# DDP's bucket_cap_mb counts mebibytes.
_MIB = 1024 * 1024


def _mib(n: float) -> str:
    return f"{n / _MIB:.3g}"


@data
class Split:
    """One compile DDPOptimizer split, with what Inductor made of its pieces."""

    event: ev.GraphSplitForDDP
    backward_graphs: int  # backward pieces compiled so far, lazily (each its own record) or ahead

    @property
    def pieces(self) -> int:
        return len(self.event.pieces)

    @property
    def buckets(self) -> str:
        """The buckets in words (bucket_cap_mb 1: buckets of 1, 1 MiB ...), or why not known."""
        e = self.event
        cap = f"bucket_cap_mb {_mib(e.bucket_cap_bytes)}" if e.bucket_cap_bytes else ""
        sizes = ", ".join(f"{_mib(b)}" for b in e.bucket_bytes)
        if not sizes:
            return cap or text.na("DDPOptimizer's buckets not readable on this torch")
        return f"{cap + ': ' if cap else ''}buckets of {sizes} MiB of parameters"

    @property
    def line(self) -> str:
        e = self.event
        ahead = " (the backward's compiled with the forward)" if e.backward_graphs else ""
        graphs = (
            f"{e.forward_graphs} forward + {self.backward_graphs} backward Inductor graphs{ahead}"
            if self.backward_graphs
            else f"{e.forward_graphs} forward Inductor graphs (the backward not compiled yet)"
        )
        return (
            f"Dynamo's graph {e.compile_id} was split into {text.plural(self.pieces, 'piece')} "
            f"at DDP bucket boundaries ({self.buckets}): {graphs}, while Dynamo counts "
            f"1 graph; each call of {e.compile_id} runs its {self.pieces} pieces "
            "(its calls are counted per piece)"
        )


def splits(run: Run) -> list[Split]:
    out = []
    for e in run.ddp_splits:
        bwd = run.compiles.get(ev.backward_id(e.compile_id))
        out.append(Split(e, e.backward_graphs + (len(bwd.records) if bwd is not None else 0)))
    return out


def graphs(run: Run) -> int:
    """Graphs the process compiled (by Inductor, or the backend it used), each DDP
    piece counted (Dynamo's own count says one per split frame): a split's
    forward Inductor graphs and those of its backward compiled with them, each
    other forward compile that made a graph, and every backward record."""
    split = {e.compile_id: e.forward_graphs + e.backward_graphs for e in run.ddp_splits}
    n = 0
    for c in run.compiles.values():
        r = c.record
        if r is None or r.fail_type:
            continue
        if r.is_backward:
            n += len(c.records)
        elif r.compile_id in split:
            n += split[r.compile_id]
        elif r.graph_op_count not in (0, None):
            n += 1
    return n


def settings_line(run: Run) -> str | None:
    """Dynamo's DDP mode and compiled autograd, as the process compiled with them
    (None: not read, the process never compiled); a process that built only
    FSDP or FSDP2 is told the mode is not its own."""
    s = run.compile_settings
    if s is None:
        return None
    mode = s.optimize_ddp if s.optimize_ddp is not None else text.na(s.unavailable)
    only_fsdp = s.wrappers and "DDP" not in s.wrappers and not run.ddp_splits
    if s.optimize_ddp not in (None, "False") and only_fsdp:
        mode += " (it splits DDP's graphs only: not this process's)"  # FSDP's are never split
    autograd = {True: "on", False: "off", None: text.na(s.unavailable)}[s.compiled_autograd]
    return f"optimize_ddp {mode}, compiled autograd {autograd}"


def wrapped(run: Run) -> str:
    """The data-parallel wrappers the process built ("FSDP2", "DDP and FSDP"),
    else "distributed": a rank need not wrap its model in DDP."""
    s = run.compile_settings
    names = s.wrappers if s is not None else []
    if run.ddp_splits and "DDP" not in names:
        names = ["DDP", *names]  # DDPOptimizer split a DDP model's graph
    return " and ".join(names) or "distributed"


def distributed(run: Run) -> bool:
    """The process is a rank of a distributed job, or DDP split its graph."""
    p = run.process
    return bool(run.ddp_splits) or (p is not None and (p.world_size or 0) > 1)


def lines(run: Run) -> list[str]:
    """The run's DDP story: its settings, then each split."""
    if not distributed(run):
        return []
    out = []
    settings = settings_line(run)
    if settings is not None:
        out.append(f"{wrapped(run)} compile settings: {settings}")
    out += [s.line for s in splits(run)]
    return out


def session_lines(session: Session) -> list[str]:
    """Every process's DDP lines, each named by its process where there are several."""
    runs = [r for r in session.runs.values() if r.process is not None and lines(r)]
    many = len(runs) > 1
    return [f"{r.name}: {line}" if many else line for r in runs for line in lines(r)]
