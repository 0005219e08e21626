"""``e``: the user's file at a row's line, in ``$VISUAL`` or ``$EDITOR`` (as
k9s and lazygit do). Which row has a place is the pane's to say
(``Row.place``); this reads a place and words the editor's command line."""

from __future__ import annotations

import os
import re
import shlex
import site
import subprocess
import sysconfig
from collections.abc import Iterable, Mapping

_PLACE = re.compile(r"^(?P<path>.+?):(?P<line>\d+)(?:\s.*)?$")
# Editors that take "path:line" rather than "+line path".
_COLON = {"subl", "hx", "helix", "zed"}
_GOTO = {"code", "codium", "code-insiders", "cursor"}  # -g path:line

NO_EDITOR = "e opens the row's file at its line: set $VISUAL or $EDITOR (e.g. export EDITOR=vim)"
NO_PLACE = "e: this row has no file:line to open"


def not_here(path: str) -> str:
    return f"e: {path} is not in this folder, the installed packages or the standard library"


def place(where: str) -> tuple[str, int] | None:
    """(path, line) of "path/file.py:13" or "path/file.py:13 code"; None if not one."""
    m = _PLACE.match(where.strip())
    if m is None:
        return None
    return m["path"], int(m["line"])


def _roots() -> list[str]:
    """Where a short path (text.short_path) may start: the working folder, the
    installed packages, the standard library, of the interpreter the worker
    runs with (this one)."""
    paths = sysconfig.get_paths()
    roots = [os.getcwd(), *site.getsitepackages(), site.getusersitepackages()]
    roots += [paths[k] for k in ("purelib", "platlib", "stdlib", "platstdlib")]
    return list(dict.fromkeys(roots))


def absolute(path: str, roots: Iterable[str] | None = None) -> str | None:
    """The file a place names, as an absolute path an editor opens from any
    folder: "torch/_inductor/codecache.py" in site-packages, "subprocess.py" in
    the standard library; an absolute path as it is; None when no root holds it."""
    if os.path.isabs(path):
        return path
    for root in _roots() if roots is None else roots:
        found = os.path.join(root, path)
        if os.path.isfile(found):
            return os.path.abspath(found)
    return None


def command(path: str, line: int, env: Mapping[str, str] = os.environ) -> list[str] | None:
    """The command that opens ``path`` at ``line``; None when no editor is set."""
    words = shlex.split(env.get("VISUAL") or env.get("EDITOR") or "")
    if not words:
        return None
    name = os.path.basename(words[0])
    if name in _GOTO:
        return [*words, "-g", f"{path}:{line}"]
    if name in _COLON:
        return [*words, f"{path}:{line}"]
    return [*words, f"+{line}", path]


def run(argv: list[str]) -> str | None:
    """Run the editor and wait for it; the one line that says why not, if it failed."""
    try:
        done = subprocess.run(argv, check=False)
    except OSError as e:
        return f"e: {argv[0]} could not start ({e.strerror}): check $VISUAL / $EDITOR"
    if done.returncode != 0:
        return f"e: {argv[0]} exited with {done.returncode}"
    return None
