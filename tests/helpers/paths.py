"""The repository's folders as the tests reach them."""

from __future__ import annotations

from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
PKG = REPO / "dlcprof"
FIXTURES = REPO / "tests" / "fixtures"
PROGRAMS = REPO / "tests" / "programs"
