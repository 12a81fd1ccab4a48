"""``--format json``: the versioned contract in docs/output.md."""

from __future__ import annotations

import io
import json
from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from fa_lint.model import Finding, Fix, Location
from fa_lint.report._common import compact, counts, escaped, knowledge_base, printable, tool, unforgeable

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


class _Findings(list):  # type: ignore[type-arg]
    """The findings array of the report, each finding's dict made as the encoder reaches it and
    dropped after: one ``iterencode`` writes the whole document (``json.dumps`` per finding would make
    a set of the encoder's self-referencing closures per finding, garbage only the cyclic collector
    frees), and no finding's tokens outlive their turn. ``iterencode`` is json's pure-Python encoder,
    which iterates the list as any iterable; tests/test_reliability.py holds the text to ``json.dumps``
    of the same document made up front."""

    def __init__(self, findings: tuple[Finding, ...]) -> None:
        super().__init__()
        self._findings = findings

    def __iter__(self) -> Iterator[dict[str, Any]]:
        return map(finding, self._findings)

    def __len__(self) -> int:
        return len(self._findings)


def document(report: Report, findings: list[Any]) -> dict[str, Any]:
    """The report as JSON data, with ``findings`` as its findings array."""
    return {
        "version": SCHEMA_VERSION,
        "tool": tool(),
        "knowledge_base": knowledge_base(report),
        "files": [printable(p) for p in report.files],
        "findings": findings,
        "summary": {"files": len(report.files), **counts(report), "suppressed": report.suppressed},
    }


def render(report: Report, **_: object) -> str:
    out = io.StringIO()
    for chunk in json.JSONEncoder(indent=2).iterencode(document(report, _Findings(report.findings))):
        out.write(chunk)
    out.write("\n")
    return unforgeable(compact(out.getvalue()))
