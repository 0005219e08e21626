"""Where a gate's violations are: at the user's own line, as a path relative
to the repository (what GitHub places on a diff), and the findings only
inside libraries (no line of the user's to change) said once, at the user's
``torch.compile`` call where it is known."""

from __future__ import annotations

import os
from pathlib import Path

from dlcprof import text
from dlcprof.figures.check.findings import Finding, reached, split_where
from dlcprof.session import Run


def repository_root(cwd: Path | None = None) -> Path:
    """GitHub's checkout ($GITHUB_WORKSPACE), else the git repository holding
    the working folder, else the working folder."""
    if os.environ.get("GITHUB_WORKSPACE"):
        return Path(os.environ["GITHUB_WORKSPACE"])
    here = (cwd or Path.cwd()).resolve()
    return next((d for d in (here, *here.parents) if (d / ".git").exists()), here)


def relative(path: str, root: Path) -> str:
    """``path`` relative to the repository ``root`` when inside it, else as given."""
    if not Path(path).is_absolute():
        return path
    try:
        return Path(path).resolve().relative_to(root.resolve()).as_posix()
    except ValueError:
        return path


def relative_where(where: str, root: Path) -> str:
    """ "/repo/a/b.py:23" -> "a/b.py:23" under ``root``."""
    file, line = split_where(where)
    return relative(file, root) + (f":{line}" if line is not None else "")


def users(f: Finding) -> bool:
    """At a line of the user's own code (or at no known line)."""
    return not f.file or text.users_code(f.file)


def compile_call(run: Run) -> str:
    """The user's one line that called ``torch.compile``; "" when no call was
    seen, each was made inside a package, or several lines of theirs did."""
    calls = {c.caller for c in run.compile_calls if c.caller and not c.package}
    return calls.pop() if len(calls) == 1 else ""


def inside_libraries(found: list[Finding], run: Run) -> tuple[str, str]:
    """(where, words) of the findings at no line of the user's, said once:
    "3 graph breaks only inside libraries, at no line of yours: accelerate/…:925
    Data-dependent branching; …", placed at the user's torch.compile call, else
    (a library compiled: a trainer's, torchtitan's) at the user's one line whose
    call reached their compiles."""
    kind = found[0].kind
    shown = "; ".join(
        f"{text.short_path(f.where)} {text.short(f.reason, 80)}".strip() for f in found[:3]
    )
    more = f"; {len(found) - 3} more" if len(found) > 3 else ""
    at = compile_call(run)
    call = " (the torch.compile call that reached them)" if at else ""
    calls = reached(run)
    lines = {calls.get(f.compile_id, "") for f in found}
    if not at and len(lines) == 1 and "" not in lines:
        at, call = lines.pop(), " (your call that reached them)"
    many = kind + ("es" if kind.endswith("s") else "s")  # "cache misses"
    words = (
        f"{text.plural(len(found), kind, many)} only inside libraries, at no line of yours{call}"
    )
    return at, f"{words}: {shown}{more}"
