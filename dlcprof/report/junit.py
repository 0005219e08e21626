"""A check's verdict as JUnit XML (GitLab's test report, Jenkins): one test
case per budget and process, one ``<failure>`` per violation, and the
verdict's lines in its one order as the suite's ``<system-out>``."""

from __future__ import annotations

import xml.etree.ElementTree as ET

from dlcprof.figures.check.budgets import TITLES
from dlcprof.figures.check.verdict import Verdict, said


def junit_xml(verdict: Verdict) -> str:
    words = said(verdict)
    cases = [(r.label, r.violations, check) for r in verdict.runs for check in verdict.checks]
    if verdict.unseen is not None:  # no process to judge: the program's own case
        cases.append(("", [verdict.unseen], verdict.unseen.check))
    failures = len(words.violations)
    suites = ET.Element(
        "testsuites", name="dlcprof check", tests=str(len(cases)), failures=str(failures)
    )
    suite = ET.SubElement(
        suites,
        "testsuite",
        name="dlcprof check",
        tests=str(len(cases)),
        failures=str(failures),
        errors="0",
    )
    ET.SubElement(
        ET.SubElement(suite, "properties"),
        "property",
        name="compile time",
        value=words.measure,
    )
    for label, violations, check in cases:
        case = ET.SubElement(
            suite,
            "testcase",
            classname=f"dlcprof.check.{label or 'program'}",
            name=TITLES[check],
        )
        for v in violations:
            if v.check == check:
                failure = ET.SubElement(case, "failure", message=v.line(), type=check)
                failure.text = v.line()
    ET.SubElement(suite, "system-out").text = "\n".join(words.lines())
    ET.indent(suites)
    return ET.tostring(suites, encoding="unicode", xml_declaration=True) + "\n"
