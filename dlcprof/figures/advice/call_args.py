"""The program's own expression for an input the compiled code names: the
program's call that reached the compiled code (its source, recorded live)
read for the argument that became the compiled code's ``args[0]``,
``kwargs['input_ids']`` or parameter ``x``. Advice written with the compiled
code's name would not run at the program's line: its ``model(batch)`` has no
``args``, and its ``model(inputs)`` no ``x``."""

from __future__ import annotations

import ast
import re

from dlcprof.data import data

# A size guard's name: its root (a parameter, ``args``, ``kwargs``), then what
# indexes it or reads an attribute of it.
_GUARDED = re.compile(r"([A-Za-z_]\w*)((?:\[[^\]]+\]|\.\w+)*)")
_INDEX = re.compile(r"\[(\d+)\]")
_KEY = re.compile(r"\[(['\"])(\w+)\1\]")
_LINE_BREAK = re.compile(r"\s*\n\s*")


@data(frozen=True)
class Passed:
    """What the call passed as the input the compiled code names."""

    expression: str  # the program's source for it (``batch['input_ids']``)
    # Whether writing the expression again gives the same tensor (names, their
    # attributes and items): else it makes a new one (``torch.randn(8, 4)``).
    same_tensor: bool


def passed_as(call: str, guarded: str) -> Passed | None:
    """What ``call`` (the program's call's source) passed as the compiled code's
    ``guarded`` (a size guard's name), None where the call does not say: a
    parameter among several passed by position, an unpacked ``*args``."""
    try:
        node = ast.parse(call, mode="eval").body
    except (SyntaxError, ValueError):  # a NUL byte: ValueError on older Pythons
        return None
    m = _GUARDED.fullmatch(guarded)
    if not isinstance(node, ast.Call) or m is None:
        return None
    root, rest = m.groups()
    if root == "self":  # the module's own state, not an input
        return None
    if root == "args" and (index := _INDEX.match(rest)):
        positional = node.args[: int(index[1]) + 1]
        found = (
            _source(call, positional[-1])
            if len(positional) > int(index[1]) and not _starred(positional)
            else None
        )
        rest = rest[index.end() :]
    elif root == "kwargs" and (key := _KEY.match(rest)):
        found = _keyword(call, node, key[2], unpacked=True)
        rest = rest[key.end() :]
    else:
        # A parameter: passed by its name, else the one input passed by position,
        # else (none by position) an item of the mapping unpacked into the keywords.
        found = _keyword(call, node, root, unpacked=not node.args)
        if found is None and len(node.args) == 1 and not _starred(node.args):
            found = _source(call, node.args[0])
    if found is None:
        return None
    expression, same = found
    return Passed(expression + rest, same)


def _keyword(call: str, node: ast.Call, name: str, unpacked: bool) -> tuple[str, bool] | None:
    """The argument passed as keyword ``name``; else (``unpacked``) the item of
    the one mapping unpacked into the keywords (``**batch``)."""
    named = [k.value for k in node.keywords if k.arg == name]
    if named:
        return _source(call, named[0])
    mappings = [k.value for k in node.keywords if k.arg is None]
    if not unpacked or len(mappings) != 1:
        return None
    mapping, same = _source(call, mappings[0])
    return (f"{mapping}[{name!r}]", same) if same else None


def _source(call: str, node: ast.expr) -> tuple[str, bool]:
    """The argument's source on one line, and whether it is the same tensor again."""
    text = ast.get_source_segment(call, node) or ast.unparse(node)
    return _LINE_BREAK.sub(" ", text), _same_tensor(node)


def _same_tensor(node: ast.expr) -> bool:
    while isinstance(node, (ast.Attribute, ast.Subscript)):
        if isinstance(node, ast.Subscript) and not isinstance(node.slice, (ast.Constant, ast.Name)):
            return False
        node = node.value
    return isinstance(node, ast.Name)


def _starred(args: list[ast.expr]) -> bool:
    return any(isinstance(a, ast.Starred) for a in args)
