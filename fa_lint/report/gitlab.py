"""``--format gitlab``: a GitLab Code Quality report, shown in the merge request widget and diff.

GitLab keeps one issue per ``fingerprint``, so two findings alike in every field but their line get
their occurrence number mixed in; otherwise the fingerprint is the one SARIF carries.
"""

from __future__ import annotations

import hashlib
import json
from typing import TYPE_CHECKING, Any

from fa_lint.model import Finding, Severity
from fa_lint.report._common import escaped, fingerprint, relative, unforgeable

if TYPE_CHECKING:
    from fa_lint.engine import Report

# GitLab's scale is info, minor, major, critical, blocker; an error breaks an install, not the build.
SEVERITY = {Severity.ERROR: "major", Severity.WARNING: "minor", Severity.INFO: "info"}


def _issue(f: Finding, fp: str) -> dict[str, Any]:
    f = escaped(f)
    loc = f.location
    return {
        "description": f"{f.code} {f.message}",
        "check_name": f"{f.code} {f.name}",
        "fingerprint": fp,
        "severity": SEVERITY[f.severity],
        "location": {
            "path": relative(loc.path) or loc.path,
            "lines": {"begin": loc.line, "end": max(loc.end_line, loc.line)},
        },
    }


def render(report: Report, **_: object) -> str:
    seen: dict[str, int] = {}
    issues = []
    for f in report.findings:
        fp = fingerprint(f)
        seen[fp] = seen.get(fp, 0) + 1
        if seen[fp] > 1:
            fp = hashlib.sha256(f"{fp}\0{seen[fp]}".encode()).hexdigest()[:32]
        issues.append(_issue(f, fp))
    return unforgeable(json.dumps(issues, indent=2)) + "\n"
