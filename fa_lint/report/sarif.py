"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Paths are written relative to ``%SRCROOT%``, the folder fa-lint ran in, which is what
``github/codeql-action/upload-sarif`` expects when fa-lint runs from the repository root.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fa_lint.model import Finding, Location, Severity
from fa_lint.report._common import (
    encoded,
    escaped,
    fingerprint,
    knowledge_base,
    printable,
    relative,
    tool,
    unforgeable,
)
from fa_lint.rules import RULES

if TYPE_CHECKING:
    from fa_lint.engine import Report

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
ROOT = "%SRCROOT%"
HOME = "https://github.com/fa-lint/fa-lint"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


def _artifact(path: str) -> dict[str, str]:
    rel = relative(path)
    if rel is None:  # outside the run's folder: only an absolute URI can name it
        return {"uri": Path(path).as_uri()}  # bytes-safe: it percent-encodes os.fsencode(path)
    # The file name's bytes, percent-encoded: undecodable ones included, so the URI still names the file.
    return {"uri": quote(encoded(rel)), "uriBaseId": ROOT}


def _location(loc: Location, message: str | None = None) -> dict[str, Any]:
    out: dict[str, Any] = {
        "physicalLocation": {
            "artifactLocation": _artifact(loc.path),
            "region": {
                "startLine": loc.line,
                "startColumn": loc.column,
                "endLine": max(loc.end_line, loc.line),
                "endColumn": max(loc.end_column, 1),
            },
        }
    }
    if message:
        out["message"] = {"text": message}
    return out


def _result(f: Finding, index: dict[str, int]) -> dict[str, Any]:
    shown = escaped(f)  # what is read; locations keep the real paths, for their URIs
    out: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVEL[f.severity],
        "message": {"text": shown.message},
        "locations": [_location(f.location)],
        "partialFingerprints": {"faLint/v1": fingerprint(f)},
    }
    if f.related:
        out["relatedLocations"] = [
            {"id": i, **_location(r, "related flash-attn requirement")} for i, r in enumerate(f.related, 1)
        ]
    if f.fix is not None and shown.fix is not None:
        region = _location(f.fix.location)["physicalLocation"]
        out["fixes"] = [
            {
                "description": {
                    "text": shown.fix.title + ("" if f.fix.safe else " (unsafe: --unsafe-fixes)")
                },
                "artifactChanges": [
                    {
                        "artifactLocation": region["artifactLocation"],
                        "replacements": [
                            {"deletedRegion": region["region"], "insertedContent": {"text": shown.fix.new}}
                        ],
                    }
                ],
            }
        ]
    props = {
        "package": shown.package,
        "requirement": shown.requirement,
        "admitted": list(shown.admitted) if shown.admitted is not None else None,
        "environment": shown.environment,
    }
    kept = {k: v for k, v in props.items() if v is not None}
    if kept:
        out["properties"] = kept
    return out


def _rules() -> list[dict[str, Any]]:
    return [
        {
            "id": r.code,
            "name": r.name,
            "shortDescription": {"text": r.summary},
            "helpUri": r.url,
            "help": {"text": f"{r.summary} See {r.url}"},
            "defaultConfiguration": {"level": LEVEL[r.severity]},
            "properties": {"tags": ["dependencies", "flash-attn"]},
        }
        for r in RULES.values()
    ]


def render(report: Report, **_: object) -> str:
    index = {code: i for i, code in enumerate(RULES)}
    run = {
        "tool": {
            "driver": {
                **tool(),
                "semanticVersion": tool()["version"],
                "informationUri": HOME,
                "rules": _rules(),
            }
        },
        "invocations": [{"executionSuccessful": True}],
        "originalUriBaseIds": {ROOT: {"description": {"text": "The folder fa-lint ran in."}}},
        "columnKind": "unicodeCodePoints",
        "results": [_result(f, index) for f in report.findings],
        "properties": {
            "files": [printable(p) for p in report.files],
            "suppressed": report.suppressed,
            "knowledgeBase": knowledge_base(report),
        },
    }
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return unforgeable(json.dumps(doc, indent=2)) + "\n"
