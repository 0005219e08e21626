"""Where torch is installed, found without importing it: the payloads tell
torch's frames from the user's by it, and the graph-break catalogue is a file
in it."""

from __future__ import annotations

import importlib.util
import os


def package_dir(name: str) -> str | None:
    """Where a package is installed, found without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    locations = list(spec.submodule_search_locations or []) if spec else []
    return os.path.realpath(locations[0]) + os.sep if locations else None


TORCH_DIR = package_dir("torch")
