"""Torch's escape hatches for a graph break, by the break's id in torch's
catalogue (trace_records/gb_catalogue.py) and the call that broke: what each
changes, what it costs, and for a hatch that is a setting of
``torch._dynamo.config``, the setting ``dlcprof try`` applies (``--hatch NAME[=FUNCTION]``,
worker/remedies.py) to the same workload without a change to its code.
docs/graph-breaks.md lists them."""

from __future__ import annotations

import re

from dlcprof.data import data


@data(frozen=True)
class Hatch:
    name: str
    change: str  # what to change, in words
    snippet: str  # the code; "{fn}" stands for the function the break is in
    cost: str
    # (torch._dynamo.config attribute, value): a set of functions gets the value,
    # a dotted name, added ("": the function is named with the hatch, see spec);
    # () for a change to the user's code.
    config: tuple[str, object] | tuple[()] = ()
    removes: bool = True  # False: the break stays, moved out of the compiled code
    # Why the compile after it is not predicted, "" where the merged graph
    # compiles the same ops as the graphs it joins.
    unpredicted: str = ""


CAPTURE_SCALAR = Hatch(
    "capture_scalar_outputs",
    "set torch._dynamo.config.capture_scalar_outputs = True before the first compiled call: "
    "Dynamo keeps .item() in the graph as a symbolic scalar instead of breaking",
    "torch._dynamo.config.capture_scalar_outputs = True",
    "the scalar is unbacked in the graph: code that branches on it or sizes a tensor by it "
    "can break or recompile there, and a kernel that takes it cannot specialize on its value",
    ("capture_scalar_outputs", True),
)
CAPTURE_DYNAMIC = Hatch(
    "capture_dynamic_output_shape_ops",
    "set torch._dynamo.config.capture_dynamic_output_shape_ops = True before the first "
    "compiled call: ops whose output shape depends on the data (nonzero, unique, masked "
    "indexing) stay in the graph",
    "torch._dynamo.config.capture_dynamic_output_shape_ops = True",
    "the ops after it compile with a symbolic size: their kernels cannot specialize on it, "
    "and a later use of the size as a Python int breaks there",
    ("capture_dynamic_output_shape_ops", True),
    unpredicted="the merged graph compiles the ops after it with a symbolic size: new "
    "kernels, not the ones the graphs of this run compiled",
)
REORDER_PRINT = Hatch(
    "reorderable_logging_functions",
    "add print to torch._dynamo.config.reorderable_logging_functions before the first "
    "compiled call: Dynamo moves the call after the graph instead of breaking it",
    "import builtins\n\ntorch._dynamo.config.reorderable_logging_functions.add(builtins.print)",
    "the print runs after the graph, not where it is written: it prints the values it was "
    "given, in a different order with other output; only tensors, constants and strings",
    ("reorderable_logging_functions", "builtins.print"),
)
IGNORE_LOGGING = Hatch(
    "ignore_logging_functions",
    "add the logging method to torch._dynamo.config.ignore_logging_functions before the "
    "first compiled call: Dynamo skips the call instead of breaking the graph",
    "torch._dynamo.config.ignore_logging_functions.add(logging.Logger.warning)",
    "the call no longer runs inside compiled code: its message is not logged there",
    ("ignore_logging_functions", ""),
)
COND = Hatch(
    "torch.cond",
    "write the data-dependent branch as torch.cond(pred, true_fn, false_fn, operands): "
    "both branches go into the graph",
    "out = torch.cond(pred, lambda x: true_branch(x), lambda x: false_branch(x), (x,))",
    "both branches are traced and compiled; they must return tensors of the same structure "
    "and change no state outside them",
)
NONSTRICT = Hatch(
    "nonstrict_trace",
    "decorate the function Dynamo cannot trace with @torch._dynamo.nonstrict_trace: the "
    "call stays in the graph, traced without Dynamo's checks",
    "@torch._dynamo.nonstrict_trace\ndef {fn}(...):",
    "its inputs and outputs must be tensors, plain values or registered pytrees; side "
    "effects inside it are not seen by Dynamo",
)
ALLOW_IN_GRAPH = Hatch(
    "allow_in_graph",
    "mark the function with torch._dynamo.allow_in_graph: Dynamo puts the call in the graph "
    "without looking inside",
    "torch._dynamo.allow_in_graph({fn})",
    "its Python runs only when traced, on fake tensors: it must be pure tensor ops, with no "
    "side effects and no branch on values",
)
DISABLE = Hatch(
    "torch._dynamo.disable",
    "decorate the function the break is in with @torch._dynamo.disable: the break stays but "
    "moves to the call of that function, which runs eager",
    "@torch._dynamo.disable\ndef {fn}(...):",
    "the function runs eager on every call; the code around it still compiles in a graph on "
    "each side of the call",
    removes=False,
)


def hint(words: str) -> Hatch:
    """A break no hatch is known for: torch's hint, a change to the user's code."""
    return Hatch(
        "torch's hint",
        words or "move the line out of the compiled code",
        "",
        "none known; the change may alter what the code computes: check its output",
    )


# Break id, a word of the call that broke ("" for any), the hatches that apply, best first.
TABLE: tuple[tuple[str, str, tuple[Hatch, ...]], ...] = (
    ("GB0124", "", (CAPTURE_SCALAR,)),  # Tensor.item()
    ("GB0036", "", (CAPTURE_DYNAMIC,)),  # dynamic shape operator
    ("GB0059", "print", (REORDER_PRINT,)),  # builtin print
    ("GB0291", "", (IGNORE_LOGGING,)),  # a logging.Logger method
    ("GB0170", "", (COND,)),  # data-dependent branching
    ("GB0035", "", (COND,)),  # data-dependent branching on an object's truthiness
    ("GB0007", "", (NONSTRICT, ALLOW_IN_GRAPH)),  # call to a function marked as skipped
    ("GB0008", "", (NONSTRICT, ALLOW_IN_GRAPH)),
    ("GB0009", "", (NONSTRICT, ALLOW_IN_GRAPH)),
)
# The hatches `dlcprof try --hatch` applies: the settings among them.
SETTINGS = {h.name: h for _, _, hs in TABLE for h in hs if h.config}


def spec(hatch: Hatch, function: str = "") -> str:
    """What ``--hatch`` takes for ``hatch`` (so what ``dlcprof try`` can apply):
    its name, or "name=dotted.function" for a setting that is a set the
    function is added to (the logging method a break names:
    ``ignore_logging_functions=logging.Logger.warning_once``); "" for a hatch
    that is a change to the code, or that needs a function none names."""
    if not hatch.config or (hatch.config[1] == "" and not function):
        return ""
    return f"{hatch.name}={function}" if function else hatch.name


def parse(given: str) -> tuple[Hatch | None, str]:
    """(the setting hatch ``--hatch`` names, the function it names, "" when
    none); (None, "") for a name that is no setting."""
    name, _, function = given.partition("=")
    return SETTINGS.get(name.strip()), function.strip()


# Dynamo's debug context names each argument's kind ("builtin print [<class
# '...ConstantVariable'>, <class '...TupleVariable'>] False"); it reorders a
# call whose arguments are these only (DebuggingVariable.can_reorder_logs), and
# breaks again on any other (GB0296).
_ARG_KIND = re.compile(r"<class '(?:[\w.]+\.)?(\w+)'>")
_REORDERABLE_ARGS = {"TensorVariable", "ConstantVariable", "StringFormatVariable"}


def _applies(hatch: Hatch, call: str) -> bool:
    if hatch is REORDER_PRINT:
        return set(_ARG_KIND.findall(call)) <= _REORDERABLE_ARGS
    return True


def hatches(gb_id: str, call: str) -> list[Hatch]:
    """The hatches for a break of type ``gb_id`` at ``call`` (Dynamo's debug
    context: "builtin print [...]"), best first; ``disable``, which moves any
    break, last."""
    found = [
        h for i, word, hs in TABLE if i == gb_id and word in call for h in hs if _applies(h, call)
    ]
    return [*found, DISABLE]
