"""``--format gitlab``: a GitLab Code Quality report, shown in the merge request widget and diff.

GitLab keeps one issue per ``fingerprint``: it is the one SARIF carries, unique within the report
(``_common.fingerprints``). Paths are relative to the repository's top, as GitLab reads them, wherever
in the checkout the job ran fa-lint.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from fa_lint.model import Finding, Severity
from fa_lint.report._common import details, escaped, fingerprints, in_repository, printable, unforgeable

if TYPE_CHECKING:
    from fa_lint.engine import Report

# GitLab's scale is info, minor, major, critical, blocker; an error breaks an install, not the build.
SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _issue(f: Finding, fp: str, shown: Callable[[str], str | None]) -> dict[str, Any]:
    path = printable(shown(f.location.path) or f.location.path)  # GitLab reads it from the repository's top
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
            "path": path,
            "lines": {"begin": loc.line, "end": max(loc.end_line, loc.line)},
        },
    }


def render(report: Report, **_: object) -> str:
    shown = in_repository()
    found = zip(report.findings, fingerprints(report.findings), strict=True)
    issues = [_issue(f, fp, shown) for f, fp in found]
    return unforgeable(json.dumps(issues, indent=2)) + "\n"
