"""``--format json``: the versioned contract in docs/output.md."""

from __future__ import annotations

import json
import textwrap
from typing import TYPE_CHECKING, Any

from fa_lint.model import Finding, Fix, Location
from fa_lint.report._common import counts, escaped, knowledge_base, printable, tool, unforgeable

if TYPE_CHECKING:
    from fa_lint.engine import Report

SCHEMA_VERSION = 1


def _location(loc: Location) -> dict[str, Any]:
    return {
        "path": loc.path,
        "line": loc.line,
        "column": loc.column,
        "end_line": loc.end_line,
        "end_column": loc.end_column,
    }


def _fix(fix: Fix | None) -> dict[str, Any] | None:
    if fix is None:
        return None
    return {
        "title": fix.title,
        "applicability": "safe" if fix.safe else "unsafe",
        "edits": [{**_location(fix.location), "content": fix.new}],
    }


def finding(f: Finding) -> dict[str, Any]:
    f = escaped(f)
    return {
        "code": f.code,
        "name": f.name,
        "severity": f.severity.value,
        **_location(f.location),
        "package": f.package,
        "requirement": f.requirement,
        "admitted": list(f.admitted) if f.admitted is not None else None,
        "message": f.message,
        "notes": list(f.notes),
        "help": f.help,
        "url": f.url,
        "environment": f.environment,
        "related_locations": [_location(r) for r in f.related],
        "fix": _fix(f.fix),
    }


def render(report: Report, **_: object) -> str:
    doc = {
        "version": SCHEMA_VERSION,
        "tool": tool(),
        "knowledge_base": knowledge_base(report),
        "files": [printable(p) for p in report.files],
        "findings": [],
        "summary": {"files": len(report.files), **counts(report), "suppressed": report.suppressed},
    }
    text = json.dumps(doc, indent=2) + "\n"
    if not report.findings:
        return unforgeable(text)
    # What json.dumps(indent=2) writes for the whole list, one finding at a time: it would otherwise
    # hold a small string for every token of every finding at once (~8 KB a finding).
    items = ",\n".join(textwrap.indent(json.dumps(finding(f), indent=2), "    ") for f in report.findings)
    head, tail = text.split('"findings": []', 1)
    return unforgeable(f'{head}"findings": [\n{items}\n  ]{tail}')
