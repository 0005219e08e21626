"""README.md says what scripts/setup.sh installs, true wherever it runs: the
exact torch pin, and that the build is whichever pip finds (a CPU build only
from an index that serves one)."""

from __future__ import annotations

import re

from helpers.paths import REPO


def test_readme_names_the_pin_setup_installs_and_no_build_it_does_not_choose() -> None:
    setup = (REPO / "scripts/setup.sh").read_text()
    readme = " ".join((REPO / "README.md").read_text().split())
    pins = re.findall(r"pip install -q (torch==[\d.]+)", setup)
    assert len(pins) == 1, setup
    assert f"installs `{pins[0]}`" in readme
    # setup.sh passes no index: it cannot promise the CPU build.
    assert "--index-url" not in setup
    assert "installs the CPU build" not in readme
    assert "CPU build only where the index pip reads serves one" in readme
