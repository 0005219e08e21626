"""Import a resolved workload and pick out its contract: the worker's half of
``dlcprof.workloads`` (which finds the code without running it).

Errors raised by the user's code become one-line ``WorkloadError``s naming
the line in the user's file, with the full traceback (user frames only) kept.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import importlib.util
import inspect
import itertools
import os
import re
import sys
import traceback as traceback_mod
from collections.abc import Callable
from dataclasses import field
from pathlib import Path
from typing import Any

from dlcprof.data import data
from dlcprof.worker.oom import oom_hint
from dlcprof.workloads import (
    TARGET_HINT,
    WorkloadError,
    WorkloadSpec,
    accepts_size,
    check_build_signature,
    find_module_spec,
    first_line,
    int_list,
    missing_function,
    syntax_message,
)


@data
class LoadedWorkload:
    """An imported workload (worker only)."""

    name: str
    description: str
    spec: WorkloadSpec
    build_fn: Callable[..., Any]
    inputs_for_fn: Callable[..., Any] | None = None
    declared_sizes: list[int] = field(default_factory=list)
    declared_small_sizes: list[int] | None = None
    module: Any = None

    def build(self, device: Any, dtype: Any, size: str = "default") -> tuple[Any, tuple]:
        """``(fn, args)``; ``size`` is passed only when the build function accepts it."""
        sig = _signature(self.build_fn)
        kwargs = {"size": size} if sig is not None and accepts_size(sig) else {}
        where = f"{self.spec.function}()"
        result = self._call(self.build_fn, where, device, dtype, **kwargs)
        if not isinstance(result, (tuple, list)) or len(result) != 2:
            raise WorkloadError(
                f"{where} in {self.spec.source} must return (fn, args), got {_describe(result)}"
            )
        fn, args = result
        if not callable(fn):
            raise WorkloadError(
                f"{where} in {self.spec.source} must return (fn, args) with a callable fn, "
                f"got {_describe(fn)}"
            )
        return fn, self._as_args(args, where)

    @property
    def inputs_for(self) -> Callable[[int, Any, Any], tuple] | None:
        """``inputs_for(n, device, dtype) -> args``, or None when the workload has none."""
        fn = self.inputs_for_fn
        if fn is None:
            return None

        def inputs_for(n: int, device: Any, dtype: Any) -> tuple:
            args = self._call(fn, "inputs_for()", n, device, dtype)
            return self._as_args(args, "inputs_for()")

        return inputs_for

    def sizes(self, size: str = "default") -> list[int]:
        """Sweep sizes for a preset: SIZES, or SMALL_SIZES for "small" (else the 3 smallest)."""
        if size == "small":
            if self.declared_small_sizes is not None:
                return list(self.declared_small_sizes)
            return sorted(self.declared_sizes)[:3]
        return list(self.declared_sizes)

    def _call(self, fn: Callable[..., Any], where: str, *args: Any, **kwargs: Any) -> Any:
        try:
            return fn(*args, **kwargs)
        except Exception as e:
            raise _user_error(e, self.spec, where) from e

    def _as_args(self, args: Any, where: str) -> tuple:
        if isinstance(args, tuple):
            return args
        if isinstance(args, list):
            return tuple(args)
        if isinstance(args, dict):
            raise WorkloadError(
                f"{where} in {self.spec.source} returned a dict of args: "
                "return a tuple of positional args instead"
            )
        return (args,)  # a single tensor: the one positional arg


_counter = itertools.count(1)


def load(spec: WorkloadSpec) -> LoadedWorkload:
    """Import the workload's module and pick out its contract (runs the user's code)."""
    if spec.path is not None:
        module = _exec_file(spec)
    elif spec.module is not None:
        module = _import_module(spec)
    else:
        raise WorkloadError(f"workload {spec.target!r} names neither a file nor a module")

    build_fn = getattr(module, spec.function, None)
    if build_fn is None:
        defined = [
            k
            for k, v in vars(module).items()
            if inspect.isfunction(v) and getattr(v, "__module__", None) == module.__name__
        ]
        raise missing_function(spec.source, spec.function, spec.function != "build", defined)
    if not callable(build_fn):
        raise WorkloadError(
            f"{spec.function} in {spec.source} is a {type(build_fn).__name__}, not a function"
        )
    sig = _signature(build_fn)
    if sig is not None:
        check_build_signature(sig, spec.function, spec.source)

    inputs_for = getattr(module, "inputs_for", None) if spec.function == "build" else None
    if inputs_for is not None and not callable(inputs_for):
        inputs_for = None
    sizes = _declared_sizes(module, "SIZES", spec) or []
    small = _declared_sizes(module, "SMALL_SIZES", spec)

    description = ""
    if spec.function != "build":
        description = first_line(inspect.getdoc(build_fn))
    description = description or first_line(getattr(module, "__doc__", None))
    if not description and spec.function == "build":
        description = first_line(inspect.getdoc(build_fn))

    return LoadedWorkload(
        name=spec.name,
        description=description,
        spec=spec,
        build_fn=build_fn,
        inputs_for_fn=inputs_for,
        declared_sizes=sizes,
        declared_small_sizes=small,
        module=module,
    )


def _exec_file(spec: WorkloadSpec) -> Any:
    assert spec.path is not None
    path = spec.path
    if not os.path.isfile(path):
        raise WorkloadError(f"workload file not found: {spec.source} ({TARGET_HINT})")
    stem = re.sub(r"\W", "_", Path(path).stem)
    prefix = "dlcprof_bundled" if spec.bundled else "dlcprof_workload"
    mod_name = f"{prefix}_{stem}_{next(_counter)}"
    loader = importlib.machinery.SourceFileLoader(mod_name, path)
    mspec = importlib.util.spec_from_file_location(mod_name, path, loader=loader)
    if mspec is None:
        raise WorkloadError(f"cannot load workload {spec.source}: not a Python file")
    module = importlib.util.module_from_spec(mspec)
    folder = os.path.dirname(path)
    if folder not in sys.path:
        sys.path.insert(0, folder)  # so the file can import its siblings
    sys.modules[mod_name] = module  # dataclasses, pickling and typing look it up
    try:
        loader.exec_module(module)
    except BaseException as e:
        sys.modules.pop(mod_name, None)
        if isinstance(e, KeyboardInterrupt):
            raise
        raise _user_error(e, spec, None) from e
    return module


def _import_module(spec: WorkloadSpec) -> Any:
    assert spec.module is not None
    cwd = os.getcwd()
    if cwd not in sys.path and "" not in sys.path:
        sys.path.insert(0, cwd)
    try:
        return importlib.import_module(spec.module)
    except BaseException as e:
        if isinstance(e, KeyboardInterrupt):
            raise
        if isinstance(e, ModuleNotFoundError) and e.name and spec.module.startswith(e.name):
            raise WorkloadError(
                f"no module named {spec.module!r} (for {spec.target}: check the name, and run "
                "from the folder that holds it or add that folder to PYTHONPATH)"
            ) from e
        raise _user_error(e, spec, None) from e


def _signature(fn: Any) -> inspect.Signature | None:
    try:
        return inspect.signature(fn)
    except (TypeError, ValueError):
        return None  # builtins, C callables: just call them


def _declared_sizes(module: Any, attr: str, spec: WorkloadSpec) -> list[int] | None:
    value = getattr(module, attr, None)
    if value is None:
        return None
    sizes = int_list(value)
    if sizes is None:
        raise WorkloadError(
            f"{attr} in {spec.source} must be a list of positive integers, got {value!r}"
        )
    return sizes


def _user_files(spec: WorkloadSpec) -> set[str]:
    files = set()
    if spec.path:
        files.add(os.path.abspath(spec.path))
    elif spec.module:
        mod = sys.modules.get(spec.module)
        origin = getattr(mod, "__file__", None)
        if origin is None:
            found = find_module_spec(spec.module)
            origin = getattr(found, "origin", None)
        if origin:
            files.add(os.path.abspath(origin))
    return files


def _user_error(e: BaseException, spec: WorkloadSpec, where: str | None) -> WorkloadError:
    """A one-line WorkloadError for an exception raised by the user's code.

    The message names the line in the user's file; ``traceback`` holds the full
    traceback with dlcprof's and importlib's own frames trimmed off the top.
    """
    files = _user_files(spec)
    if isinstance(e, SyntaxError) and e.filename and os.path.abspath(e.filename) in files:
        tb_text = "".join(traceback_mod.format_exception_only(e))
        return WorkloadError(syntax_message(spec.source, e), tb_text, bad_input=True)

    tb = e.__traceback__
    # Drop the frames of this module and of importlib's bootstrap.
    while tb is not None and _is_plumbing(tb.tb_frame.f_code.co_filename):
        tb = tb.tb_next
    tb_text = "".join(traceback_mod.format_exception(type(e), e, tb))

    line, func = None, None
    t = tb
    while t is not None:
        if os.path.abspath(t.tb_frame.f_code.co_filename) in files:
            line, func = t.tb_lineno, t.tb_frame.f_code.co_name
        t = t.tb_next
    detail = first_line(str(e))
    what = type(e).__name__ + (f": {detail}" if detail else "")
    where_txt = ""
    if line is not None:
        where_txt = f" (line {line}" + (f", in {func}" if func and func != "<module>" else "") + ")"
    elif where:
        where_txt = f" (in {where})"
    return WorkloadError(
        f"workload {spec.source} raised {what}{where_txt}{oom_hint(e)}", tb_text, bad_input=False
    )


def _is_plumbing(filename: str) -> bool:
    return filename.startswith("<frozen importlib") or os.path.abspath(filename) == os.path.abspath(
        __file__
    )


def _describe(value: Any) -> str:
    kind = type(value).__name__
    article = "an" if kind[:1].lower() in "aeiou" else "a"
    if isinstance(value, (tuple, list)):
        return f"{article} {kind} of {len(value)}"
    return f"{article} {kind}"
