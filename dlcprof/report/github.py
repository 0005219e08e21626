"""A check's verdict as GitHub Actions reads it: one ``::error`` workflow
command per violation (GitHub's syntax: ``::error file=F,line=N,title=T::M``,
the path relative to the repository, ``%``, CR and LF escaped everywhere and
``:`` and ``,`` in properties), and a Markdown summary for
``$GITHUB_STEP_SUMMARY``."""

from pathlib import Path

from dlcprof.figures.check.budgets import TITLES, Violation, run_tag
from dlcprof.figures.check.findings import split_where
from dlcprof.figures.check.places import relative
from dlcprof.figures.check.verdict import Verdict, said


def _data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _property(s: str) -> str:
    return _data(s).replace(":", "%3A").replace(",", "%2C")


def annotation(v: Violation, root: Path) -> str:
    file, line = split_where(v.where)
    props = []
    if file:
        props.append(f"file={_property(relative(file, root))}")
        if line is not None:
            props.append(f"line={line}")
    title = f"dlcprof check: {TITLES[v.check]}{run_tag(v.run)}"
    props.append(f"title={_property(title)}")
    return f"::error {','.join(props)}::{_data(v.what)}"


def annotations(verdict: Verdict, root: Path) -> list[str]:
    return [annotation(v, root) for v in verdict.violations]


def step_summary(verdict: Verdict, root: Path) -> str:
    """The verdict as Markdown, in its one order: the summary, each violation,
    each process's figures, the measure."""
    words = said(verdict)
    out = [f"### {words.summary}", ""]
    if words.violations:
        out += ["| where | check | what |", "|---|---|---|"]
        for v in words.violations:
            file, line = split_where(v.where)
            where = (
                f"`{relative(file, root)}:{line}`"
                if line is not None
                else (f"`{file}`" if file else "")
            )
            what = v.what.replace("|", "\\|")
            out.append(f"| {where} | {TITLES[v.check]} | {what} |")
        out.append("")
    out += [*[f"- {line}" for line in words.runs], "", f"_{words.measure}_", ""]
    return "\n".join(out)
