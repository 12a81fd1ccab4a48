"""``--format gitlab``: a GitLab Code Quality report, shown in the merge request widget and diff.

GitLab keeps one issue per ``fingerprint``: it is the one SARIF carries, unique within the report
(``_common.fingerprints``).
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fa_lint.model import Finding, Severity
from fa_lint.report._common import details, escaped, fingerprints, relative, unforgeable

if TYPE_CHECKING:
    from fa_lint.engine import Report

# GitLab's scale is info, minor, major, critical, blocker; an error breaks an install, not the build.
SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _issue(f: Finding, fp: str) -> dict[str, Any]:
    f = escaped(f)
    loc = f.location
    more = details(f)
    return {
        "description": f"{f.code} {f.message}",
        **({"content": {"body": more}} if more else {}),
        "check_name": f"{f.code} {f.name}",
        "fingerprint": fp,
        "severity": SEVERITY[f.severity],
        "location": {
            "path": relative(loc.path) or loc.path,
            "lines": {"begin": loc.line, "end": max(loc.end_line, loc.line)},
        },
    }


def render(report: Report, **_: object) -> str:
    issues = [_issue(f, fp) for f, fp in zip(report.findings, fingerprints(report.findings), strict=True)]
    return unforgeable(json.dumps(issues, indent=2)) + "\n"
