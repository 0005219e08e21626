"""``dlcprof/figures/__init__.py`` maps its modules: every module and package
under figures/ (and each job figure) is named there, and nothing else is."""

from __future__ import annotations

import re
from pathlib import Path

import dlcprof.figures

FIGURES = Path(dlcprof.figures.__file__).parent


def _named() -> set[str]:
    doc = dlcprof.figures.__doc__ or ""
    return set(re.findall(r"``(\w+)/?``", doc))


def test_the_figures_map_names_every_module():
    named = _named()
    here = {p.stem for p in FIGURES.glob("*.py") if p.stem != "__init__"}
    here |= {p.name for p in FIGURES.iterdir() if (p / "__init__.py").is_file()}
    job = {p.stem for p in (FIGURES / "job").glob("*.py") if p.stem != "__init__"}
    assert here - named == set(), f"not in figures/__init__.py's map: {sorted(here - named)}"
    assert job - named == set(), f"job figures not in the map: {sorted(job - named)}"
    missing = named - here - job
    assert not missing, f"the map names modules that do not exist: {sorted(missing)}"
