"""``--format rdjson``: the Reviewdog Diagnostic Format's ``DiagnosticResult`` (reviewdog
``proto/rdf/reviewdog.proto``), for ``reviewdog -f=rdjson``, which posts findings and their fixes as
pull-request review comments and suggestions on GitHub, GitLab, Gitea and Bitbucket.

A position's column counts UTF-8 bytes from 1 there, where fa-lint counts code points: each column is
converted through the line it stands on (the file's text, which the report keeps). The end is exclusive
in both. A finding's fix is a ``suggestion``; only a safe fix is offered, as ``--fix`` applies only those
unasked.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Any

from fa_lint.model import Finding, Location, Severity
from fa_lint.report._common import escaped, unforgeable
from fa_lint.report.frame import lines as split

if TYPE_CHECKING:
    from collections.abc import Callable

    from fa_lint.engine import Report

SEVERITY = {Severity.ERROR: "ERROR", Severity.WARNING: "WARNING", Severity.INFO: "INFO"}
SOURCE = {"name": "fa-lint", "url": "https://github.com/fa-lint/fa-lint"}


def _byte_column(line: str | None, column: int) -> int:
    """A 1-based code-point column as the 1-based UTF-8 byte column of the same place in ``line``."""
    if line is None or line.isascii():
        return column
    return len(line[: column - 1].encode("utf-8", "surrogatepass")) + 1


def _range(loc: Location, line_of: Callable[[int], str | None]) -> dict[str, Any]:
    return {
        "start": {"line": loc.line, "column": _byte_column(line_of(loc.line), loc.column)},
        "end": {"line": loc.end_line, "column": _byte_column(line_of(loc.end_line), loc.end_column)},
    }


def _lines(report: Report, path: str) -> Callable[[int], str | None]:
    text = report.texts.get(path)
    found = split(text) if text is not None else []
    return lambda n: found[n - 1] if 1 <= n <= len(found) else None


def diagnostic(f: Finding, line_of: Callable[[int], str | None]) -> dict[str, Any]:
    shown = escaped(f)
    details = [*shown.notes, *([f"help: {shown.help}"] if shown.help else [])]
    out: dict[str, Any] = {
        "message": "\n".join([shown.message, *details]),
        "location": {"path": shown.location.path, "range": _range(f.location, line_of)},
        "severity": SEVERITY[f.severity],
        "code": {"value": f.code, "url": f.url},
    }
    fix = shown.fix
    if fix is not None and f.fix is not None and fix.safe and f.fix.location.path == f.location.path:
        out["suggestions"] = [{"range": _range(f.fix.location, line_of), "text": fix.new}]
    return out


def render(report: Report, **_: object) -> str:
    cache: dict[str, Callable[[int], str | None]] = {}
    diagnostics = []
    for f in report.findings:
        path = f.location.path
        line_of = cache.get(path) or cache.setdefault(path, _lines(report, path))
        diagnostics.append(diagnostic(f, line_of))
    # reviewdog reads the document with protojson, which refuses a field the message does not define
    doc = {"source": SOURCE, "diagnostics": diagnostics}
    return unforgeable(json.dumps(doc, indent=2)) + "\n"
