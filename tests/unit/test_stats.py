"""dlcprof/stats.py: the one median_iqr, on the ground floor both processes import."""

from __future__ import annotations

import ast
import math

from helpers.paths import PKG

from dlcprof.stats import median_iqr

STATS = PKG / "stats.py"


def test_stats_imports_only_the_standard_library():
    """The worker (torch, no Rich) and the UI side (no torch) both import it."""
    tree = ast.parse(STATS.read_text())
    imported = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    imported |= {n.module for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module}
    assert imported <= {"__future__", "statistics", "collections.abc"}, imported


def test_median_iqr():
    assert median_iqr([1.0, 2.0, 3.0, 4.0, 100.0]) == (3.0, 2.0)  # the outlier moves neither
    assert median_iqr([2.0]) == (2.0, 0.0)
    assert all(math.isnan(x) for x in median_iqr([]))
