"""Every link of the README and the docs/ pages leads somewhere: a file of the
repository and, after a #, one of its headings (GitHub's anchors)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from helpers.paths import REPO

PAGES = [REPO / "README.md", *sorted((REPO / "docs").glob("*.md"))]
_LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")


def _anchor(heading: str) -> str:
    """GitHub's anchor of a heading: lower case, punctuation dropped, spaces to hyphens."""
    return re.sub(r"[^\w\- ]", "", heading.strip().lower()).replace(" ", "-")


def _anchors(page: Path) -> set[str]:
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text())
    return {_anchor(m) for m in re.findall(r"(?m)^#+ (.+)$", text)}


def test_the_readme_is_a_front_page():
    assert len((REPO / "README.md").read_text().splitlines()) <= 120


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(REPO)))
def test_every_link_leads_somewhere(page: Path):
    text = re.sub(r"(?ms)^```.*?^```", "", page.read_text())
    for target in _LINK.findall(text):
        if re.match(r"[a-z]+:", target):
            continue  # http(s), mailto: not checked offline
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        assert dest.exists(), f"{page.name}: {target} leads nowhere"
        if anchor:
            assert anchor in _anchors(dest), f"{page.name}: no heading #{anchor} in {dest.name}"
