"""Number formatting shared by the Markdown, HTML and terminal renderers.

A value the session does not have is never guessed: it renders as "n/a"
with the reason next to it.
"""

from __future__ import annotations

from typing import Any

NA = "n/a"


def na(why: str) -> str:
    return f"{NA} ({why})"


def secs(x: float | None, why: str = "not recorded") -> str:
    """Seconds with a unit that fits: 840 ms, 1.93 s, 2 min 05 s."""
    if x is None:
        return na(why)
    if x < 0:
        return f"-{secs(-x)}"
    if x < 1e-3:
        return f"{x * 1e6:.0f} µs"
    if x < 1:
        return f"{x * 1e3:.0f} ms"
    if x < 100:
        return f"{x:.2f} s"
    m, s = divmod(x, 60)
    if m < 60:
        return f"{int(m)} min {s:02.0f} s"
    h, m = divmod(m, 60)
    return f"{int(h)} h {int(m):02d} min"


def ms(x: float | None, why: str = "not recorded") -> str:
    if x is None:
        return na(why)
    if abs(x) >= 100:
        return f"{x:.0f} ms"
    if abs(x) >= 10:
        return f"{x:.1f} ms"
    if abs(x) >= 0.1:
        return f"{x:.2f} ms"
    return f"{x * 1000:.1f} µs"


def signed_secs(x: float | None) -> str:
    if x is None:
        return NA
    return ("+" if x > 0 else "") + (secs(x) if x >= 0 else "-" + secs(-x))


def speedup(x: float | None, why: str = "compiled time is zero") -> str:
    return na(why) if x is None else f"{x:.2f}x"


def count(x: float | None) -> str:
    """Large counts made readable: 16,400 / 1.2 M."""
    if x is None:
        return NA
    if x >= 1e6:
        return f"{x / 1e6:.1f} M"
    return f"{x:,.0f}"


def break_even(iters: float | None, have_benchmark: bool = True) -> str:
    if not have_benchmark:
        return na("no benchmark in this run")
    if iters is None:
        return "never (compiled is not faster)"
    return f"{count(max(iters, 1.0))} calls"


def pct(x: float | None) -> str:
    if x is None:
        return NA
    if 0 < x < 0.005:
        return "<1%"
    return f"{x * 100:.0f}%"


def value(x: Any) -> str:
    """Any setting or metric value as short text."""
    if x is None:
        return NA
    if isinstance(x, bool):
        return "yes" if x else "no"
    if isinstance(x, float):
        return f"{x:.4g}"
    if isinstance(x, (list, tuple)):
        return ", ".join(value(v) for v in x) if x else "—"
    return str(x)


SETTING_KEYS = (
    "mode",
    "dynamic",
    "backend",
    "device",
    "device_name",
    "dtype",
    "size",
    "cache",
    "threads",
    "iters",
    "shapes",
    "torch_version",
)


def settings_items(settings: dict[str, Any]) -> list[tuple[str, str]]:
    """The run settings in a stable order, known keys first."""
    keys = [k for k in SETTING_KEYS if k in settings]
    keys += [k for k in settings if k not in keys and k not in ("target", "workload")]
    return [(k, value(settings[k])) for k in keys]


def short_reason(reason: str | None, limit: int = 140) -> str:
    if not reason:
        return ""
    one = " ".join(reason.split())
    return one if len(one) <= limit else one[: limit - 1] + "…"
