"""``--format junit``: a JUnit XML report, which CI systems (GitLab's test reports, Jenkins, Azure
Pipelines' PublishTestResults, CircleCI) show beside a run's tests, as ruff's ``junit`` output does.

One ``testsuite`` a checked file with findings, one ``testcase`` a finding. A finding that fails the run
(an error; a warning too under ``strict``) is the test case's ``failure``; the others pass, their text
in ``system-out``, so the report fails exactly the tests the exit code fails for. A run with no
findings is one passing case. ElementTree writes the XML: every attribute and text is escaped by it,
and characters XML 1.0 cannot hold at all (most control characters) never reach it (``printable``).
"""

from __future__ import annotations

import os
import xml.etree.ElementTree as ET
from collections.abc import Callable
from typing import TYPE_CHECKING

from fa_lint.model import Finding, Severity
from fa_lint.report._common import escaped

if TYPE_CHECKING:
    from fa_lint.engine import Report


def _errors_fail(f: Finding) -> bool:
    return f.severity is Severity.ERROR


def _case(suite: ET.Element, f: Finding, fails: bool) -> None:
    f = escaped(f)
    loc = f.location
    case = ET.SubElement(
        suite,
        "testcase",
        name=f"fa-lint.{f.code}",
        classname=os.path.splitext(loc.path)[0],
        file=loc.path,
        line=str(loc.line),
        column=str(loc.column),
    )
    props = ET.SubElement(case, "properties")
    ET.SubElement(props, "property", name="severity", value=f.severity.value)
    ET.SubElement(props, "property", name="url", value=f.url)
    body = "\n".join([*f.notes, *([f"help: {f.help}"] if f.help else [])])
    text = f"line {loc.line}, col {loc.column}, {f.message}" + (f"\n{body}" if body else "")
    if fails:
        ET.SubElement(case, "failure", message=f.message, type=f.severity.value).text = text
    else:
        ET.SubElement(case, "system-out").text = text


def render(report: Report, *, fails: Callable[[Finding], bool] = _errors_fail, **_: object) -> str:
    root = ET.Element("testsuites", name="fa-lint")
    by_file: dict[str, list[Finding]] = {}
    for f in report.findings:
        by_file.setdefault(f.location.path, []).append(f)
    failed_total = 0
    for path, found in by_file.items() if by_file else [("fa-lint", [])]:
        failed = [fails(f) for f in found]
        failed_total += sum(failed)
        suite = ET.SubElement(
            root,
            "testsuite",
            name=escaped(found[0]).location.path if found else path,
            tests=str(len(found) or 1),
            failures=str(sum(failed)),
            errors="0",
            skipped="0",
            package="fa-lint",
        )
        for f, fail in zip(found, failed, strict=True):
            _case(suite, f, fail)
        if not found:
            ET.SubElement(suite, "testcase", name="No errors found", classname="fa-lint")
    root.set("tests", str(len(report.findings) or 1))
    root.set("failures", str(failed_total))
    root.set("errors", "0")
    ET.indent(root, space="    ")
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(root, encoding="unicode") + "\n"
