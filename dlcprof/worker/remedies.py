"""The run options that change how a workload is compiled, applied by dlcprof
for the user: ``--regional CLASS``, ``--mark-dynamic ARG:DIM``, ``--hatch NAME[=FUNCTION]``
(a graph break's hatch that is a setting, docs/graph-breaks.md) and
``--cache-artifacts PATH`` (docs/advice.md). Each is a remedy the advice
(dlcprof/figures/advice/) can predict and ``dlcprof try`` then measures.

Regional compilation compiles each instance of the class with
``module.compile()`` (the recipe of PyTorch's regional compilation tutorial)
on a deep copy of the model, so the eager model the benchmark times stays
untouched and the rest of the model runs eager around the compiled blocks.
``torch.compiler.nested_compile_region`` was the alternative: it keeps one
Dynamo graph for the whole model, so Inductor still lowers and builds every
block's kernels; measured here it saved less compile time and ran slower
(docs/advice.md).
"""

from __future__ import annotations

import copy
import importlib
import inspect
import os
from collections.abc import Callable
from typing import Any

from dlcprof.hatches import SETTINGS
from dlcprof.hatches import parse as parse_hatch
from dlcprof.settings import RunSettings, parse_mark_dynamic


class BadRemedy(Exception):
    """The option does not fit the workload: one line for the user (bad input)."""


class Remedies:
    def __init__(self, settings: RunSettings, log: Callable[..., None]) -> None:  # (message, level)
        self.s = settings
        self.log = log

    def compile(self, torch: Any, fn: Any, kwargs: dict[str, Any]) -> Any:
        """``torch.compile(fn, **kwargs)``, or with --regional each instance of the
        class compiled on its own in a copy of ``fn``."""
        self._hatch(torch)
        if not self.s.regional:
            return torch.compile(fn, **kwargs)
        if not isinstance(fn, torch.nn.Module):
            raise BadRemedy(
                f"--regional {self.s.regional}: the workload returns a function, not an "
                "nn.Module, so there are no module instances to compile on their own"
            )
        model = copy.deepcopy(fn)
        blocks = [m for m in model.modules() if type(m).__name__ == self.s.regional]
        if not blocks:
            names = sorted({type(m).__name__ for m in model.modules()})
            raise BadRemedy(
                f"--regional {self.s.regional}: no module of that class in the model "
                f"(its classes: {', '.join(names[:12])})"
            )
        if blocks[0] is model:
            raise BadRemedy(
                f"--regional {self.s.regional}: that is the whole model; name the class of "
                "its repeated blocks"
            )
        for m in blocks:
            m.compile(**kwargs)
        self.log(
            f"regional compilation: {len(blocks)} {self.s.regional} instances compiled "
            "on their own, the rest of the model runs eager"
        )
        return model

    def _hatch(self, torch: Any) -> None:
        if self.s.hatch:
            self.log(set_hatch(torch, self.s.hatch, "--hatch"))

    def mark(self, torch: Any, fn: Any, args: tuple) -> tuple:
        """Mark the --mark-dynamic input's dim dynamic on these args (a no-op without it)."""
        if not self.s.mark_dynamic:
            return args
        name, dim = parse_mark_dynamic(self.s.mark_dynamic)
        index = _input_index(fn, name, len(args))
        arg = args[index]
        if not isinstance(arg, torch.Tensor) or not -arg.dim() <= dim < arg.dim():
            shape = list(arg.shape) if isinstance(arg, torch.Tensor) else type(arg).__name__
            raise BadRemedy(
                f"--mark-dynamic {self.s.mark_dynamic}: input {name} is {shape}, "
                f"it has no dim {dim}"
            )
        torch._dynamo.mark_dynamic(arg, dim % arg.dim())
        return args

    def load_artifacts(self, torch: Any) -> None:
        """Load the --cache-artifacts file into torch's caches before the compile."""
        load_artifacts(torch, self.s.cache_artifacts, self.log)

    def save_artifacts(self, torch: Any) -> None:
        save_artifacts(torch, self.s.cache_artifacts, self.log)


def load_artifacts(torch: Any, path: str, log: Callable[..., None]) -> None:
    """Mega-Cache: the artifacts file at ``path`` loaded into torch's caches
    before the first compile (a file not there yet is saved after it)."""
    if not path or not os.path.exists(path):
        if path:
            log(f"cache artifacts: {path} does not exist yet; saved after the compile")
        return
    with open(path, "rb") as f:
        data = f.read()
    info = torch.compiler.load_cache_artifacts(data)
    log(
        f"cache artifacts loaded from {path} ({len(data):,} bytes, "
        f"{_count(info)} artifacts) before the compile"
    )


def save_artifacts(torch: Any, path: str, log: Callable[..., None]) -> None:
    """Mega-Cache: what this process compiled saved to ``path`` (atomically)."""
    if not path:
        return
    saved = torch.compiler.save_cache_artifacts()
    if saved is None:
        log(f"cache artifacts: torch had none to save; {path} not written", "warning")
        return
    data, info = saved
    tmp = f"{path}.tmp{os.getpid()}"
    with open(tmp, "wb") as f:
        f.write(data)
    os.replace(tmp, path)
    log(f"cache artifacts saved to {path} ({len(data):,} bytes, {_count(info)} artifacts)")


def set_dynamic_sources(torch: Any, sources: str, said: str) -> str:
    """Make the input dims ``sources`` names ("L['x']:1,...": torch's names of a
    compiled frame's inputs, each with a dim) dynamic from the first compile, as
    ``mark_dynamic`` on each does, through torch.compiler.config.dynamic_sources
    (every frame whose input has that name). The line that says so, or
    BadRemedy (``said``: how the user gave it) where this torch cannot mark one
    dim alone: its entries before the ":N" suffix mark every dim of a tensor."""
    config = getattr(getattr(torch, "compiler", None), "config", None)
    if config is None or not hasattr(config, "dynamic_sources"):
        raise BadRemedy(
            f"{said} {sources}: this torch has no torch.compiler.config.dynamic_sources"
        )
    from torch._dynamo.variables.builder import is_dynamic_source

    name, _, dim = sources.split(",")[0].rpartition(":")
    before, config.dynamic_sources = config.dynamic_sources, sources
    try:
        one_dim = is_dynamic_source(name, int(dim)) and not is_dynamic_source(name, int(dim) + 1)
    except TypeError:  # no dim to ask about: every dim of an entry's tensor
        one_dim = False
    if not one_dim:
        config.dynamic_sources = before
        raise BadRemedy(
            f"{said} {sources}: this torch's dynamic_sources cannot mark one dim of a tensor "
            "(no ':N' suffix), only all of them"
        )
    return f"mark_dynamic's trial: torch.compiler.config.dynamic_sources set ({sources})"


def set_hatch(torch: Any, hatch: str, said: str) -> str:
    """Set the setting of torch._dynamo.config that graph-break hatch ``hatch``
    names ("name", or "name=dotted.function": hatches.spec), before the first
    compile: a set of functions gets the function added; one not defined yet
    (transformers' ``logging.Logger.warning_once``, patched on when transformers
    is imported, after torch) is added at the start of each compile until it
    is. The line that says so, or BadRemedy (``said``: how the user gave it).
    For a workload's run here, for an attached program's process in its probes
    (worker/attached/probe.py)."""
    found, function = parse_hatch(hatch)
    if found is None:
        raise BadRemedy(f"invalid {said} {hatch!r}: choose one of {', '.join(SETTINGS)}")
    config = found.config
    assert config, hatch  # SETTINGS holds the hatches that have one
    name, value = config
    current = getattr(torch._dynamo.config, name, None)
    if current is None:
        raise BadRemedy(f"{said} {found.name}: this torch has no dynamo config {name}")
    if not isinstance(current, set):
        if function:
            raise BadRemedy(f"{said} {hatch}: {found.name} takes no function")
        setattr(torch._dynamo.config, name, value)
        return f"graph-break hatch: torch._dynamo.config.{name} set ({value})"
    function = function or str(value)
    if not function:
        raise BadRemedy(
            f"{said} {found.name}: name the function to add ({found.name}=module.function, "
            "e.g. logging.Logger.warning_once)"
        )
    if _add_function(current, function):
        return f"graph-break hatch: {function} added to torch._dynamo.config.{name}"
    handler = getattr(torch._dynamo, "callback_handler", None)
    if handler is None:
        raise BadRemedy(
            f"{said} {hatch}: {function} is not defined, and this torch has no compile "
            "callback to add it at the first compile"
        )
    _add_when_defined(handler, current, function)
    return (
        f"graph-break hatch: {function} is not defined yet; added to "
        f"torch._dynamo.config.{name} at the first compile that finds it"
    )


def _add_function(functions: set[Any], dotted: str) -> bool:
    """Add the object ``dotted`` names (a module's attribute, or an attribute
    of one: "logging.Logger.warning_once") to ``functions``; False where it is
    not defined (yet)."""
    parts = dotted.split(".")
    for cut in range(len(parts) - 1, 0, -1):
        try:
            obj: Any = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        for attr in parts[cut:]:
            obj = getattr(obj, attr, None)
            if obj is None:
                return False
        functions.add(obj)
        return True
    return False


def _add_when_defined(handler: Any, functions: set[Any], dotted: str) -> None:
    """At the start of each compile (Dynamo's callback handler, before it
    traces), add ``dotted``'s object once it is defined."""
    added = False

    def start(_args: Any) -> None:
        nonlocal added
        # Never removed from the handler: removing one while it runs the list skips the next.
        added = added or _add_function(functions, dotted)

    handler.register_start_callback(start)


def _input_index(fn: Any, name: str, n_args: int) -> int:
    """Which positional arg ``name`` is (a parameter name of fn, or of its forward)."""
    if name.isdigit():
        index = int(name)
    else:
        target = getattr(fn, "forward", fn)
        try:
            params = [
                p.name
                for p in inspect.signature(target).parameters.values()
                if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD)
            ]
        except (TypeError, ValueError):
            params = []
        if name not in params:
            inputs = ", ".join(params) or "unnamed"
            raise BadRemedy(
                f"--mark-dynamic {name}: the workload's inputs are {inputs}; "
                "name one, or give its position"
            )
        index = params.index(name)
    if index >= n_args:
        raise BadRemedy(f"--mark-dynamic {name}: the workload is called with {n_args} inputs")
    return index


def _count(info: Any) -> int:
    """Artifacts in torch's CacheInfo (``artifacts``: one list per kind)."""
    kinds = getattr(info, "artifacts", None) or {}
    return sum(len(v) for v in kinds.values())
