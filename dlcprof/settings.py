"""Run settings, declared once: ``OPTIONS`` makes the CLI flags and their help,
the TUI's selects, the short labels, the command that repeats a run and the
table of options in docs/cli.md.

Every invalid value raises SettingsError whose message is one line naming the
bad value and the valid ones.
"""

from __future__ import annotations

import dataclasses
import os
import shlex
from dataclasses import field
from typing import Any, Protocol

from dlcprof.data import data

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DYNAMIC = ("auto", "true", "false")
BACKENDS = ("inductor", "aot_eager", "eager")
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("float32", "bfloat16", "float16")
SIZES = ("small", "default")
CACHES = ("warm", "cold", "fresh")
# What the modes turn on in Inductor (torch._inductor.list_mode_options()).
CUDAGRAPH_MODES = ("reduce-overhead", "max-autotune")
AUTOTUNE_MODES = ("max-autotune", "max-autotune-no-cudagraphs")
# `--mode all`: every mode, one run each, side by side (the CLI's run, the TUI's `a`).
ALL_MODES = "all"


class SettingsError(ValueError):
    """A bad setting; str() is the one-line message for the user."""


def default_threads() -> int:
    # On small boxes OpenMP threads stall under background load: leave one
    # core for the UI and the monitors.
    return max(1, (os.cpu_count() or 2) - 1)


@data(frozen=True)
class Option:
    """One run setting as the CLI, the TUI, the repro line and docs/cli.md show it."""

    name: str  # the RunSettings field
    help: str  # what it means (docs/cli.md's "meaning" column)
    choices: tuple[str, ...] = ()  # a closed set; empty for numbers, sizes and switches
    kind: str = "choice"  # "choice" | "int" | "sizes" | "text" | "switch" | "off-switch"
    values: str = ""  # docs/cli.md's "values" column, when not the choices
    short: dict[str, str] = field(default_factory=dict)  # narrow labels of long values
    tui: bool = False  # in the TUI's settings panel: a select, or a checkbox for a switch
    also: tuple[str, ...] = ()  # values the CLI takes beyond the choices (`--mode all`)

    @property
    def flag(self) -> str:
        name = self.name.replace("_", "-")
        return f"--no-{name}" if self.kind == "off-switch" else f"--{name}"

    def label(self, value: Any) -> str:
        return self.short.get(str(value), str(value))


OPTIONS: tuple[Option, ...] = (
    Option(
        "mode",
        "Inductor mode: CUDA graphs (reduce-overhead) and autotuning (max-autotune); "
        "`all` runs each mode in turn and compares them",
        MODES,
        tui=True,
        also=(ALL_MODES,),
        short={
            "reduce-overhead": "red-ovh",
            "max-autotune": "max-at",
            "max-autotune-no-cudagraphs": "max-at-nocg",
        },
    ),
    Option(
        "dynamic",
        "`auto` is torch's automatic dynamic (static first, dynamic after a size changes)",
        DYNAMIC,
        tui=True,
    ),
    Option("backend", "bisect: is it Dynamo, AOTAutograd or Inductor?", BACKENDS, tui=True),
    Option("device", "`auto`: CUDA when available", DEVICES, tui=True),
    Option("dtype", "the dtype the workload builds its model and inputs in", DTYPES, tui=True),
    Option("size", "the workload's input size (`small` is for tests)", SIZES, tui=True),
    Option(
        "cache",
        "`cold`: a fresh `TMPDIR` and Inductor cache dir, so the compile time is "
        "reproducible; `fresh`: a fresh Inductor cache dir only (every kernel is built "
        "again, the one-time precompiled header is kept)",
        CACHES,
        tui=True,
    ),
    Option(
        "freezing",
        "Inductor freezing: weights become constants (CPU inference; what lets "
        "max-autotune tune CPU matmuls)",
        kind="switch",
        tui=True,
    ),
    Option(
        "threads",
        "torch threads for compile and timing (default: cores − 1)",
        kind="int",
        values="N",
    ),
    Option("iters", "timed calls per repetition", kind="int", values="N"),
    Option("reps", "repetitions (median and spread are over reps)", kind="int", values="N"),
    Option("shapes", "shape sweep over these sizes", kind="sizes", values="16,32,64"),
    Option("sweep", "shape sweep over the workload's `SIZES`", kind="switch"),
    Option("benchmark", "compile only: no eager-vs-compiled timing", kind="off-switch"),
    Option(
        "regional",
        "regional compilation: each instance of this module class is compiled on "
        "its own (`module.compile()`), the rest of the model runs eager",
        kind="text",
        values="CLASS",
    ),
    Option(
        "mark_dynamic",
        "`torch._dynamo.mark_dynamic` on this input's dim before every "
        "compiled call (the input by its parameter name or position)",
        kind="text",
        values="ARG:DIM",
    ),
    Option(
        "hatch",
        "a graph break's escape hatch that is a `torch._dynamo.config` setting, set before "
        "the first compile: capture_scalar_outputs, capture_dynamic_output_shape_ops, "
        "reorderable_logging_functions, or ignore_logging_functions=MODULE.FUNCTION (the "
        "logging method to skip, e.g. logging.Logger.warning_once; docs/graph-breaks.md)",
        kind="text",
        values="NAME",
    ),
    Option(
        "cache_artifacts",
        "Mega-Cache: load this file's compile artifacts before compiling "
        "when it exists, save them after (`torch.compiler.save_cache_artifacts`)",
        kind="text",
        values="PATH",
    ),
    Option(
        "hotspots",
        "no py-spy on the worker: no hot frames, and none of its CPU taken from "
        "the compile (it never runs while the benchmark is timed)",
        kind="off-switch",
    ),
)
OPTION = {o.name: o for o in OPTIONS}


@data
class RunSettings:
    target: str
    mode: str = "default"
    dynamic: str = "auto"
    backend: str = "inductor"
    device: str = "auto"
    dtype: str = "float32"
    size: str = "default"
    cache: str = "warm"
    freezing: bool = False
    threads: int = field(default_factory=default_threads)
    iters: int = 20  # timed calls per repetition
    reps: int = 7  # repetitions; median and spread are over these
    shapes: list[int] | None = None  # sweep these sizes (else the workload's SIZES)
    sweep: bool = False
    benchmark: bool = True
    regional: str = ""  # a module class name: its instances compiled on their own
    mark_dynamic: str = ""  # "ARG:DIM"
    hatch: str = ""  # a graph-break hatch that is a setting (hatches.spec; the worker checks)
    cache_artifacts: str = ""  # a Mega-Cache artifacts file
    hotspots: bool = True  # py-spy samples the worker (parent side: monitors only)
    calls: int | None = None  # the calls advice judges payback within (--calls); None: its default

    def validate(self) -> RunSettings:
        for o in OPTIONS:
            value = getattr(self, o.name)
            if o.kind == "choice" and value not in o.choices:
                also = f" (or {', '.join(o.also)})" if o.also else ""
                raise SettingsError(
                    f"invalid {o.flag} {value!r}: choose one of {', '.join(o.choices)}{also}"
                )
            if o.kind == "int" and (not isinstance(value, int) or value < 1):
                raise SettingsError(f"invalid {o.flag} {value!r}: give a whole number >= 1")
        if self.regional and not self.regional.isidentifier():
            raise SettingsError(
                f"invalid --regional {self.regional!r}: give a module class name, e.g. Block"
            )
        if self.mark_dynamic:
            parse_mark_dynamic(self.mark_dynamic)
        if self.shapes is not None:
            if not self.shapes or any(not isinstance(s, int) or s < 1 for s in self.shapes):
                raise SettingsError(
                    f"invalid --shapes {self.shapes!r}: give positive integers, e.g. 16,32,64"
                )
        if not self.target:
            raise SettingsError("no workload given: name a bundled one (dlcprof list) or a file")
        return self

    @property
    def sweeping(self) -> bool:
        return self.sweep or self.shapes is not None

    def each_mode(self) -> list[RunSettings]:
        """These settings once per Inductor mode, in MODES order (`--mode all`)."""
        return [dataclasses.replace(self, mode=m) for m in MODES]

    def to_dict(self) -> dict[str, Any]:
        return dataclasses.asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> RunSettings:
        names = {f.name for f in dataclasses.fields(cls)}
        return cls(**{k: v for k, v in d.items() if k in names})


def parse_shapes(text: str) -> list[int]:
    """'16,32,64' -> [16, 32, 64]; one-line SettingsError otherwise."""
    try:
        shapes = [int(p) for p in text.split(",") if p.strip()]
    except ValueError:
        shapes = []
    if not shapes or min(shapes) < 1:
        raise SettingsError(
            f"invalid --shapes {text!r}: give comma-separated positive integers, e.g. 16,32,64"
        )
    return shapes


def parse_mark_dynamic(text: str) -> tuple[str, int]:
    """'x:1' -> ('x', 1); '0:1' names the first input; one-line SettingsError otherwise."""
    arg, sep, dim = text.rpartition(":")
    if not sep or not (arg.isidentifier() or arg.isdigit()) or not dim.lstrip("-").isdigit():
        raise SettingsError(
            f"invalid --mark-dynamic {text!r}: give ARG:DIM, an input's name or position and "
            "a dim, e.g. x:1"
        )
    return arg, int(dim)


class _Settled(Protocol):
    """RunSettings, or a run's RunStarted event (the settings as the worker resolved them)."""

    target: str
    sweep: bool
    benchmark: bool

    @property  # read only: RunStarted's is a list, never None
    def shapes(self) -> list[int] | None: ...


def repro_command(s: _Settled, target: str | None = None) -> str:
    """The CLI line that repeats a run."""
    parts = ["dlcprof", "run", target or s.target]
    for o in OPTIONS:
        value = getattr(s, o.name, None)
        if o.kind in ("choice", "int", "text") and value not in (None, ""):
            parts += [o.flag, str(value)]
        elif o.kind == "switch" and o.name != "sweep" and value:
            parts.append(o.flag)
    if s.shapes:
        parts += ["--shapes", ",".join(str(x) for x in s.shapes)]
    elif s.sweep:
        parts.append("--sweep")
    if not s.benchmark:
        parts.append("--no-benchmark")
    if not getattr(s, "hotspots", True):  # RunStarted does not carry it: the parent's choice
        parts.append("--no-hotspots")
    return shlex.join(parts)


def markdown_table() -> str:
    """docs/cli.md's table of options (a test keeps it in step)."""
    rows = ["| option | values | meaning |", "|---|---|---|"]
    for o in OPTIONS:
        flag = f"{o.flag} {o.values}".strip() if o.kind in ("int", "sizes", "text") else o.flag
        values = ", ".join(f"`{c}`" for c in (*o.choices, *o.also))
        rows.append(f"| `{flag}` | {values} | {o.help} |")
    return "\n".join(rows)
