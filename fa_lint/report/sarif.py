"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Paths are written relative to ``%SRCROOT%``, the folder fa-lint ran in, which is what
``github/codeql-action/upload-sarif`` expects when fa-lint runs from the repository root.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote

from fa_lint.model import Finding, Location, Severity
from fa_lint.report._common import (
    details,
    encoded,
    escaped,
    fingerprints,
    knowledge_base,
    printable,
    relative,
    tool,
    unforgeable,
)
from fa_lint.rules import RULES, page

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


def _plain(text: str) -> str:
    """SARIF reads ``[text](id)`` in a message as a link: brackets of the text itself are escaped."""
    return re.sub(r"([\[\]])", r"\\\1", text)


def _message(f: Finding) -> dict[str, str]:
    """The headline, linking each related location by its id (code scanning shows a related location
    only where the message links it); with the notes and help, as Markdown, for viewers that show more."""
    where = [printable(f"{relative(r.path) or r.path}:{r.line}") for r in f.related]
    links = [f"[{_plain(text)}]({i})" for i, text in enumerate(where, 1)]
    text = _plain(f.message) + (f" Related: {', '.join(links)}." if links else "")
    more = details(f)
    return {"text": text, "markdown": f"{text}\n\n{more}"} if more else {"text": text}


def _result(f: Finding, index: dict[str, int], fp: str) -> dict[str, Any]:
    shown = escaped(f)  # what is read; locations keep the real paths, for their URIs
    out: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVEL[f.severity],
        "message": _message(shown),
        "locations": [_location(f.location)],
        "partialFingerprints": {"faLint/v1": fp},
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
        "notes": list(shown.notes) or None,
        "help": shown.help or None,
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
            "help": {"text": f"{r.summary} See {r.url}", "markdown": page(r.code)},
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
        "results": [
            _result(f, index, fp)
            for f, fp in zip(report.findings, fingerprints(report.findings), strict=True)
        ],
        "properties": {
            "files": [printable(p) for p in report.files],
            "suppressed": report.suppressed,
            "knowledgeBase": knowledge_base(report),
        },
    }
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return unforgeable(json.dumps(doc, indent=2)) + "\n"
