"""Fused kernels: grouped across compiles, and where each came from."""

from __future__ import annotations

import re
from dataclasses import dataclass

from dlcprof import events as ev
from dlcprof.session import Run

_GRAPH_SHORT = {"forward": "fwd", "backward": "bwd", "inference": ""}
_SOURCE_LINE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?:\s+(?P<code>.*))?$")


def kernel_key(k: ev.KernelGenerated) -> str:
    """Unique within a run: names repeat across compiles and across a compile's
    forward and backward graphs."""
    return f"{k.compile_id}|{k.graph}|{k.name}|{k.order}"


def compile_label(k: ev.KernelGenerated) -> str:
    """"0/0", "0/0 fwd", "0/0 (bwd)": the compile that generated it, and which
    of its graphs (a backward compiled lazily is a compile of its own)."""
    if k.compile_id.endswith(ev.BACKWARD):
        return k.compile_id
    short = _GRAPH_SHORT.get(k.graph, k.graph) if k.graph else ""
    return f"{k.compile_id} {short}".strip()


@dataclass
class KernelGroup:
    """One generated kernel and every compile that generated it identically
    (a static-shape sweep regenerates the same kernel once per shape)."""

    kernel: ev.KernelGenerated
    compile_ids: list[str]


def kernel_groups(run: Run) -> list[KernelGroup]:
    groups: dict[tuple[str, tuple[str, ...], str], KernelGroup] = {}
    for c in run.compiles.values():
        for k in sorted(c.kernels, key=lambda k: k.order):
            key = (k.name, tuple(k.fused_ops), k.source)
            g = groups.get(key)
            if g is None:
                groups[key] = KernelGroup(k, [k.compile_id])
            elif k.compile_id not in g.compile_ids:
                g.compile_ids.append(k.compile_id)
    return list(groups.values())


def source_line(line: str) -> tuple[str, str]:
    """("file.py:13", "y = torch.sin(x)") from a "path/file.py:13 code" line;
    the path shortened to its file name (the full one is in the report)."""
    m = _SOURCE_LINE.match(line.strip())
    if not m:
        return "", line.strip()
    name = m["path"].replace("\\", "/").rsplit("/", 1)[-1]
    return f"{name}:{m['line']}", (m["code"] or "").strip()


def compile_list(ids: list[str], limit: int = 4) -> str:
    shown = ", ".join(ids[:limit])
    return shown + (f" +{len(ids) - limit}" if len(ids) > limit else "")


def short_ops(k: ev.KernelGenerated) -> list[str]:
    """Fused ops without the ``aten.`` prefix every one of them carries."""
    return [op.removeprefix("aten.") for op in k.fused_ops]
