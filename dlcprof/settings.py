"""Run settings shared by the CLI, the TUI and the worker, with validation.

Every invalid value raises SettingsError whose message is one line naming the
bad value and the valid ones.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field
from typing import Any

MODES = ("default", "reduce-overhead", "max-autotune", "max-autotune-no-cudagraphs")
DYNAMIC = ("auto", "true", "false")
BACKENDS = ("inductor", "aot_eager", "eager")
DEVICES = ("auto", "cpu", "cuda")
DTYPES = ("float32", "bfloat16", "float16")
SIZES = ("small", "default")
CACHES = ("warm", "cold")


class SettingsError(ValueError):
    """A bad setting; str() is the one-line message for the user."""


def default_threads() -> int:
    # On small boxes OpenMP threads stall under background load (TORCH_NOTES §7):
    # leave one core for the UI and monitors.
    return max(1, (os.cpu_count() or 2) - 1)


@dataclass
class RunSettings:
    target: str
    mode: str = "default"
    dynamic: str = "auto"
    backend: str = "inductor"
    device: str = "auto"
    dtype: str = "float32"
    size: str = "default"
    cache: str = "warm"
    threads: int = field(default_factory=default_threads)
    iters: int = 20  # timed calls per repetition
    reps: int = 7  # repetitions; median and spread are over these
    shapes: list[int] | None = None  # sweep these sizes (else the workload's SIZES)
    sweep: bool = False
    benchmark: bool = True

    def validate(self) -> RunSettings:
        for name, valid in (
            ("mode", MODES),
            ("dynamic", DYNAMIC),
            ("backend", BACKENDS),
            ("device", DEVICES),
            ("dtype", DTYPES),
            ("size", SIZES),
            ("cache", CACHES),
        ):
            value = getattr(self, name)
            if value not in valid:
                raise SettingsError(f"invalid --{name} {value!r}: choose one of {', '.join(valid)}")
        for name in ("threads", "iters", "reps"):
            value = getattr(self, name)
            if not isinstance(value, int) or value < 1:
                raise SettingsError(f"invalid --{name} {value!r}: give a whole number >= 1")
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
        raise SettingsError(
            f"invalid --shapes {text!r}: give comma-separated positive integers, e.g. 16,32,64"
        ) from None
    if not shapes or min(shapes) < 1:
        raise SettingsError(
            f"invalid --shapes {text!r}: give comma-separated positive integers, e.g. 16,32,64"
        )
    return shapes
