"""Rich renderables of compile cost by the user's code and of the advice, for
the console (``dlcprof run``, ``dlcprof try``) and the TUI; the figures and
their words are in figures/compile_cost.py and figures/advice/."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.table import Table
from rich.text import Text
from rich.tree import Tree

from dlcprof import text
from dlcprof.figures import compile_cost as fc
from dlcprof.figures.advice import model as fam
from dlcprof.figures.advice import rules as far
from dlcprof.figures.advice import trial as fat
from dlcprof.session import Run, Session


def compile_cost_view(run: Run, limit: int = 8, tree: bool = False) -> RenderableType | None:
    """``tree``: Inductor's lowering as a tree by module (the TUI) instead of its
    largest modules' table."""
    cost = fc.compile_cost(run)
    if cost is None:
        why = fc.why_none(run)
        return Text(f"compile cost by your code: {text.na(why)}", style="yellow") if why else None
    parts: list[RenderableType] = [Text("Compile cost by your code", style="bold")]
    tables: list[tuple[str, tuple[str, ...], list[tuple[str, ...]]]] = [
        (fc.dynamo_line(cost), fc.FUNCTION_COLUMNS, fc.function_rows(cost, limit))
    ]
    if not tree:
        tables.append((fc.lowering_line(cost), fc.MODULE_COLUMNS, fc.module_rows(cost, limit)))
    for title, columns, rows in tables:
        if not rows:  # a line says why there is none
            parts.append(Text(title))
            continue
        table = Table(title=title, title_justify="left", box=box.SIMPLE_HEAD)
        for i, c in enumerate(columns):
            table.add_column(c, justify="right" if i >= 2 else "left", overflow="fold")
        for row in rows:
            table.add_row(*row)
        parts.append(table)
    if tree:
        parts.append(Text(fc.lowering_line(cost)))
        if fc.module_rows(cost, 1):  # none lowered: the line says why, no empty tree
            parts.append(module_tree_view(fc.module_tree(cost)))
    parts.append(Text(fc.probe_line(cost), style="dim"))
    return Group(*parts)


def module_tree_view(root: fc.ModuleNode) -> Tree:
    view = Tree(fc.tree_label(root, None), guide_style="dim")
    stack = [(root, view)]
    while stack:
        node, branch = stack.pop()
        for child in node.sorted_children():
            stack.append((child, branch.add(fc.tree_label(child, node))))
    return view


def advice_view(session: Session, run: Run, calls: int | None = None) -> RenderableType:
    advice = far.advise(session, run, calls)
    parts: list[RenderableType] = [Text("Advice", style="bold")]
    if advice.nothing:
        parts.append(Text(advice.nothing, style="green"))
    for i, item in enumerate(advice.items, 1):
        parts.append(Text.assemble((f"{i}. {item.title}", "bold cyan")))
        parts.append(Text(f"   change: {item.change}"))
        if item.snippet:
            where = f"   at {text.short_path(item.where)}:" if item.where else "   code:"
            parts.append(Text(where, style="dim"))
            from rich.syntax import Syntax  # Pygments: only once a snippet is shown

            # Highlighted text, not a Syntax block: that pads each line to the
            # console's width, spaces a copy of the code would carry.
            code = Syntax(item.snippet, "python", theme="ansi_dark").highlight(item.snippet)
            parts += [Text("      ").append_text(line) for line in code.split()]
        for e in item.evidence:
            parts.append(Text(f"   evidence: {e}", style="dim"))
        parts.append(
            Text(f"   predicted: {fam.predicted_text(item.predicted, item.predicted_why)}")
        )
        if item.predicted is not None:
            parts.append(Text(f"     how: {item.predicted.how}", style="dim"))
        parts.append(Text(f"   known cost: {item.cost}"))
        trial = (
            f"dlcprof try SESSION.json {i}"
            if item.options
            else f"cannot be tried for you: {item.try_why}"
        )
        parts.append(Text(f"   try: {trial}", style="dim"))
    for line in advice.hidden:
        parts.append(Text(f"not shown: {line}", style="dim"))
    for t in session.tried:
        if t.advised_run == run.run_id:
            parts.append(Text(f"tried: {t.title}: {fat.tried_text(t)}", style="magenta"))
    return Group(*parts)
