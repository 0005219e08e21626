"""The one adapter to how an attached program calls ``torch.compile``: its mode,
dynamic and backend, read from torch.compile's own frame as it calls Dynamo's
``optimize`` (looked up on ``torch._dynamo`` at each call, so wrapping it there
catches the program's first call too: that call imports Dynamo, and the probes
install as the import ends). A frame not found or not readable degrades to what
``optimize`` itself was given, then to nothing said.

A module's compile happens in Dynamo's own wrapper, so no file tells which
call compiled it: the module a call returns says when it first runs
(``ModuleCompileRan``), then unwraps itself; one that never ran compiled
nothing (Lightning's Fabric compiles the module again and drops the first)."""

from __future__ import annotations

import functools
import itertools
import sys
from collections.abc import Callable, Iterator
from typing import Any

from dlcprof import events as ev
from dlcprof import text
from dlcprof.worker.probes import ProbeNotes

PROBE = "compile-calls"
_DYNAMIC = {None: "auto", True: "true", False: "false"}


def install(
    run_id: Callable[[], str],
    sink: ev.Sink,
    notes: ProbeNotes,
    returned: Callable[[Any, str], Any] | None = None,
) -> None:
    """Wrap ``torch._dynamo.optimize`` (once per process: it outlives a fork);
    ``returned(compiled, caller)`` gets what each torch.compile call returns
    and returns what the program gets instead."""
    dynamo: Any = sys.modules.get("torch._dynamo")
    original = getattr(dynamo, "optimize", None)
    if not callable(original):
        notes.unavailable(PROBE, "torch._dynamo.optimize not found: mode, dynamic, backend n/a")
        return

    modules = itertools.count(1)

    @functools.wraps(original)
    def optimize(*args: Any, **kwargs: Any) -> Any:
        call: ev.CompileCalled | None = None
        try:
            frame = sys._getframe(1)
            call = called(run_id(), frame, kwargs, modules)
        except Exception:  # noqa: BLE001 - never break the program's compile
            notes.unavailable(PROBE, "torch.compile's arguments could not be read on this torch")
        if call is None or not _in_compile(frame.f_code):
            if call is not None:
                sink.emit(call)
            return original(*args, **kwargs)
        try:
            context = original(*args, **kwargs)
        except BaseException:
            sink.emit(call)
            raise
        number = call.module_call

        # torch.compile calls what optimize returns on the model at once; the
        # call is said then, with the file of the frame Dynamo will compile.
        def apply(model: Any) -> Any:
            try:
                compiled = context(model)
                call.target = _started_in(compiled, call.target)
            finally:
                sink.emit(call)
            if number:
                _on_first_run(
                    compiled, lambda: sink.emit(ev.ModuleCompileRan(run_id=run_id(), number=number))
                )
            return returned(compiled, call.caller) if returned is not None else compiled

        return apply

    dynamo.optimize = optimize


def _in_compile(code: Any) -> bool:
    return code.co_name == "compile" and code.co_filename.endswith("torch/__init__.py")


def _on_first_run(compiled: Any, ran: Callable[[], None]) -> None:
    """``ran()`` at the first call of an ``OptimizedModule``'s forward outside a
    compile (inside one Dynamo traces this wrapper and folds the test away),
    then its own forward back: no cost after the first call."""
    forward = getattr(compiled, "forward", None)
    if not hasattr(compiled, "_orig_mod") or not callable(forward):
        return
    is_compiling = sys.modules["torch"].compiler.is_compiling
    fired = [False]

    @functools.wraps(forward)
    def first(*args: Any, **kwargs: Any) -> Any:
        if not fired[0] and not is_compiling():
            fired[0] = True
            if compiled.__dict__.get("forward") is first:  # else another wrapper holds it
                compiled.forward = forward
            ran()
        return forward(*args, **kwargs)

    compiled.forward = first


def called(
    run_id: str, frame: Any, kwargs: dict[str, Any], modules: Iterator[int] | None = None
) -> ev.CompileCalled:
    """The settings of the call whose frame called ``optimize``: torch.compile's
    locals (its ``backend`` is by then the wrapper it built), else ``optimize``'s
    own arguments; a module's call numbered from ``modules``."""
    in_compile = _in_compile(frame.f_code)
    given = frame.f_locals if in_compile else kwargs
    backend = kwargs.get("backend", given.get("backend"))
    name = getattr(backend, "compiler_name", None) or getattr(backend, "__name__", None)
    options = given.get("options") if in_compile else None
    target = _target_file(given.get("model")) if in_compile else ""
    while frame is not None and text.in_torch(frame.f_code.co_filename):
        frame = frame.f_back
    where = f"{frame.f_code.co_filename}:{frame.f_lineno}" if frame is not None else ""
    package = (text.in_package(where) or "").split("/", 1)[0]
    made_at = ""
    if package:  # the call a package's wrapper made it for: the first frame out of it
        outer = frame.f_back if frame is not None else None
        while outer is not None and (
            text.in_torch(outer.f_code.co_filename)
            or (text.in_package(outer.f_code.co_filename) or "").split("/", 1)[0] == package
            or outer.f_code.co_filename.startswith("<frozen ")  # importing the package
        ):
            outer = outer.f_back
        made_at = f"{outer.f_code.co_filename}:{outer.f_lineno}" if outer is not None else ""
    return ev.CompileCalled(
        run_id=run_id,
        mode=given.get("mode") if in_compile else None,
        dynamic=_DYNAMIC.get(given.get("dynamic"), str(given.get("dynamic"))),
        backend=str(name or backend),
        fullgraph=bool(given.get("fullgraph", kwargs.get("nopython", False))),
        caller=where,
        package=package,
        made_at=made_at,
        options=", ".join(f"{k!r}: {v!r}" for k, v in options.items())
        if isinstance(options, dict)
        else "",
        target=target,
        module_call=next(modules) if in_compile and modules and _is_module(given) else 0,
    )


def _is_module(given: dict[str, Any]) -> bool:
    return hasattr(given.get("model"), "forward")


def _target_file(model: Any) -> str:
    """The file of the function torch.compile is given, where Dynamo compiles
    its frames (under its wrappers: a guess, until ``_started_in`` reads what
    torch did); "" for a module (Dynamo compiles it in a wrapper of its own) or
    when not found. ``module.compile()`` compiles the module's ``_call_impl``,
    whose frame Dynamo skips: its forward's file."""
    if hasattr(model, "forward"):
        return ""
    forward = getattr(getattr(model, "__self__", None), "forward", None)
    if getattr(model, "__name__", "") == "_call_impl" and callable(forward):
        model = forward
    fn = getattr(model, "__func__", model)
    while hasattr(fn, "__wrapped__"):
        fn = fn.__wrapped__
    code = getattr(fn, "__code__", None)
    return str(code.co_filename) if code is not None else ""


def _started_in(compiled: Any, guess: str) -> str:
    """The file of the frame Dynamo starts at in what torch.compile returned for
    a function: the function its wrapper holds (``__wrapped__``), not what that
    wraps. A package's wrapper is that frame (transformers wraps every model's
    forward), and one Dynamo would skip torch put in a frame of its own
    (``external_utils``: a ``torch.no_grad()`` function); ``_call_impl`` and
    a module, or a torch without the attribute: ``guess``."""
    started = getattr(compiled, "__wrapped__", None)
    code = getattr(started, "__code__", None)
    if not guess or code is None or code.co_name == "_call_impl":
        return guess
    return str(code.co_filename)
