"""``--format sarif``: SARIF 2.1.0 for GitHub code scanning and other SARIF viewers.

Paths are written relative to ``%SRCROOT%``, the top of the git repository that holds the files (the
folder fa-lint ran in, outside any repository), which is what code scanning resolves them against
wherever in the checkout fa-lint ran. Every rule carries what GitHub's ingestion asks of one (a short
and a full description, help as text and Markdown, a help URI); every result its source lines, as a
snippet of its region and of a context region around it.

Written as plain dicts and ``json.dumps``, not with a SARIF library: sarif-om (Microsoft's generated
classes, 1.0.4 on PyPI) is the same tree as classes to fill in, which another package (jschema-to-python)
then turns into this JSON; it checks nothing the schema does not. What is checked instead is the output,
where it counts: against the OASIS schema, and by Microsoft's SARIF multitool with GitHub's and Azure
DevOps' rules (tests/test_report.py).
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import quote, urlsplit

from fa_lint.model import Finding, Location, Severity
from fa_lint.report._common import (
    compact,
    details,
    encoded,
    escaped,
    fingerprints,
    in_repository,
    knowledge_base,
    printable,
    tool,
    unforgeable,
)
from fa_lint.report.frame import lines as split_lines
from fa_lint.rules import RULES, Rule, page, severity

if TYPE_CHECKING:
    from fa_lint.engine import Report

SCHEMA = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
ROOT = "%SRCROOT%"
HOME = "https://github.com/fa-lint/fa-lint"
LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFO: "note"}


CONTEXT = 2  # lines of context around a result's region, as the text output shows


class _Paths:
    """Each path's URI, and each file's lines for the snippets, worked out once per report."""

    def __init__(self, report: Report) -> None:
        self.shown = in_repository()
        self.texts = report.texts
        self._lines: dict[str, list[str]] = {}

    def artifact(self, path: str) -> dict[str, str]:
        rel = self.shown(path)
        if rel is None:  # outside the repository and the run's folder: only an absolute URI can name it
            return {"uri": Path(path).as_uri()}  # bytes-safe: it percent-encodes os.fsencode(path)
        # The file name's bytes, percent-encoded: undecodable ones included, so the URI still names the file.
        return {"uri": quote(encoded(rel)), "uriBaseId": ROOT}

    def lines(self, path: str) -> list[str] | None:
        if path not in self._lines and path in self.texts:
            self._lines[path] = split_lines(self.texts[path])
        return self._lines.get(path)

    def location(self, loc: Location, message: str | None = None) -> dict[str, Any]:
        lines = self.lines(loc.path)
        count = len(lines) - (lines[-1] == "") if lines is not None else 0  # a last "\n" ends a line
        point = (loc.end_line, loc.end_column) <= (loc.line, loc.column)
        if point and lines is not None and 1 <= loc.line <= count and lines[loc.line - 1]:
            # A point (where a parser stopped) has no text to show: a viewer shows no snippet and the
            # multitool asks for one (SARIF2010). The region becomes its line, which is what a viewer
            # marks anyway; the text output still points at the column.
            loc = loc._replace(column=1, end_line=loc.line, end_column=len(lines[loc.line - 1]) + 1)
        end_line = max(loc.end_line, loc.line)
        region: dict[str, Any] = {
            "startLine": loc.line,
            "startColumn": loc.column,
            "endLine": end_line,
            "endColumn": max(loc.end_column, 1),
        }
        physical: dict[str, Any] = {"artifactLocation": self.artifact(loc.path), "region": region}
        if lines is not None and 1 <= loc.line <= count:
            last = min(end_line, count)
            span = lines[loc.line - 1 : last]  # the region's own text: its first column to its last
            if last == end_line:
                span[-1] = span[-1][: max(loc.end_column, 1) - 1]
            span[0] = span[0][loc.column - 1 :]
            if any(span):
                region["snippet"] = {"text": _lines(span, ended=last < end_line)}
            first, after = max(loc.line - CONTEXT, 1), min(last + CONTEXT, count)
            physical["contextRegion"] = {
                "startLine": first,
                "endLine": after,
                "snippet": {"text": _lines(lines[first - 1 : after], ended=after < len(lines))},
            }
        out: dict[str, Any] = {"physicalLocation": physical}
        if message:
            out["message"] = {"text": message}
        return out


# Azure Pipelines' predefined variables that name a run, as GitHub Advanced Security for Azure DevOps
# wants them in run.automationDetails (the SARIF multitool's rules GHAzDO1014, 1019 and 1020, and its
# AdoPipelineContext, which builds the same id from the same variables).
_ADO = "azuredevops/pipeline/build/"
_GUID = re.compile(r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}")


def automation(env: Mapping[str, str], category: str | None) -> dict[str, Any] | None:
    """``run.automationDetails``: the id ``--sarif-category`` (or ``sarif-category``) gives on purpose,
    else the Azure pipeline's (``azure_pipeline``), else none.

    A category given is written as given: GitHub's upload-sarif takes an id in the file over its own
    ``category`` input, and fills one in only where a run has none (github/codeql-action
    src/upload-lib.ts ``populateRunAutomationDetails``, which also ends its own with a "/":
    ``getAutomationID``); GitHub Advanced Security for Azure DevOps refuses a run without one
    (microsoft/sarif-sdk GHAzDOProvideRequiredRunProperties, GHAzDO1014) and wants it to start with
    ``azuredevops/pipeline/build/`` (GHAzDOProvideAutomationDetailsIdFormat, GHAzDO1020). Inside a
    pipeline, the pipeline's properties stay beside the id given."""
    pipeline = azure_pipeline(env)
    if not category:
        return pipeline
    return {**(pipeline or {}), "id": category}


def azure_pipeline(env: Mapping[str, str]) -> dict[str, Any] | None:
    """``run.automationDetails`` for a run inside an Azure DevOps pipeline (``TF_BUILD``), else None.

    Outside one the key is left out on purpose: GitHub's upload-sarif fills in its own category (the
    workflow and job, or its ``category`` input) only where a log has none, so a fixed id would make
    every fa-lint upload of a repository replace the others'.
    """

    def get(*names: str) -> str:
        return next((env[n].strip() for n in names if env.get(n, "").strip()), "")

    if get("TF_BUILD").lower() not in ("true", "1"):
        return None
    collection = urlsplit(get("SYSTEM_COLLECTIONURI"))
    host = collection.hostname or ""
    if host in ("dev.azure.com", "vsrm.dev.azure.com"):
        org = collection.path.strip("/").split("/")[0]
    else:
        org = host.removesuffix(".visualstudio.com").removesuffix(".vsrm") if "." in host else ""
    project, phase = get("SYSTEM_TEAMPROJECTID"), get("SYSTEM_PHASEID", "SYSTEM_JOBID")
    definition, build = get("BUILD_DEFINITIONID", "SYSTEM_DEFINITIONID"), get("BUILD_BUILDID")
    name, phase_name = get("BUILD_DEFINITIONNAME"), get("SYSTEM_PHASENAME", "SYSTEM_JOBNAME")
    branch = get("BUILD_SOURCEBRANCH")
    complete = org and name and phase_name and branch and definition.isdigit() and build.isdigit()
    if not complete or not _GUID.fullmatch(project) or not _GUID.fullmatch(phase):
        return None  # not the pipeline's own variables: no identity is better than a wrong one
    return {
        "id": f"{_ADO}{org}/{project.lower()}/{int(definition)}/{phase.lower()}/{branch}/{int(build)}",
        "properties": {
            f"{_ADO}buildDefinitionId": str(int(definition)),
            f"{_ADO}buildDefinitionName": name,
            f"{_ADO}phaseId": phase.lower(),
            f"{_ADO}phaseName": phase_name,
        },
    }


def _lines(lines: list[str], *, ended: bool) -> str:
    """Source lines for a snippet, each escaped as every output escapes a checked file's text; ``ended``:
    the last one's line break belongs to it too."""
    return "\n".join(printable(line) for line in lines) + ("\n" if ended else "")


def _plain(text: str) -> str:
    """SARIF reads ``[text](id)`` in a message as a link: brackets of the text itself are escaped."""
    return re.sub(r"([\[\]])", r"\\\1", text)


def _message(f: Finding, paths: _Paths) -> dict[str, str]:
    """The headline, linking each related location by its id (code scanning shows a related location
    only where the message links it); with the notes and help, as Markdown, for viewers that show more."""
    where = [printable(f"{paths.shown(r.path) or r.path}:{r.line}") for r in f.related]
    links = [f"[{_plain(text)}]({i})" for i, text in enumerate(where, 1)]
    text = _plain(f.message) + (f" Related: {', '.join(links)}." if links else "")
    more = details(f)
    return {"text": text, "markdown": f"{text}\n\n{more}"} if more else {"text": text}


def _result(f: Finding, index: dict[str, int], fp: str, paths: _Paths) -> dict[str, Any]:
    shown = escaped(f)  # what is read; locations keep the real paths, for their URIs
    out: dict[str, Any] = {
        "ruleId": f.code,
        "ruleIndex": index[f.code],
        "level": LEVEL[f.severity],
        "message": _message(shown, paths),
        "locations": [paths.location(f.location)],
        "partialFingerprints": {"faLint/v1": fp},
    }
    if f.related:
        out["relatedLocations"] = [
            {"id": i, **paths.location(r, "related flash-attn requirement")}
            for i, r in enumerate(f.related, 1)
        ]
    if f.fix is not None and shown.fix is not None:
        fixed = f.fix.location
        region = {
            "artifactLocation": paths.artifact(fixed.path),
            "region": {
                "startLine": fixed.line,
                "startColumn": fixed.column,
                "endLine": max(fixed.end_line, fixed.line),
                "endColumn": max(fixed.end_column, 1),
            },
        }
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
    return [_rule(r) for r in RULES.values()]


def _rule(r: Rule) -> dict[str, Any]:
    """A rule as GitHub's ingestion wants one: id, name, both descriptions, help text and Markdown
    (the rule's page, which code scanning shows with the alert), its help URI and default level."""
    text = page(r.code)
    full = _finds(text)
    plain = _unmarked(full)
    return {
        "id": r.code,
        "name": r.name,
        "shortDescription": {"text": r.summary},
        "fullDescription": {"text": plain, "markdown": full},
        "helpUri": r.url,
        "help": {
            "text": f"{plain} Severity: {severity(r)}. How to fix and suppress it: {r.url}",
            "markdown": text,
        },
        "defaultConfiguration": {"level": LEVEL[r.severity]},
        "properties": {"tags": ["dependencies", "flash-attn"], "precision": "very-high"},
    }


def _finds(text: str) -> str:
    """The first paragraph of a rule page's "What it finds", on one line; one that leads into an
    example (a last ':') ends as a sentence."""
    body = text.split("## What it finds\n", 1)[-1]
    first = " ".join(body.split("\n\n", 1)[0].split())
    return first[:-1] + "." if first.endswith(":") else first


def _unmarked(markdown: str) -> str:
    """Markdown as plain text: a link's text without its target, emphasis without its stars."""
    text = re.sub(r"\[([^\]]+)\]\([^)\s]+\)", r"\1", markdown)
    return re.sub(r"(\*{1,2})(?=\S)([^*]+?)(?<=\S)\1", r"\2", text)


def render(report: Report, *, automation: dict[str, Any] | None = None, **_: object) -> str:
    """The SARIF log; ``automation``: the run's ``automationDetails`` (``azure_pipeline``), or None."""
    index = {code: i for i, code in enumerate(RULES)}
    paths = _Paths(report)
    run = {
        "tool": {
            "driver": {
                **tool(),
                "fullName": f"fa-lint {tool()['version']}",  # GitHub Advanced Security for Azure DevOps
                "semanticVersion": tool()["version"],
                "informationUri": HOME,
                "rules": _rules(),
            }
        },
        **({"automationDetails": automation} if automation else {}),
        "invocations": [{"executionSuccessful": True}],
        "originalUriBaseIds": {
            ROOT: {
                "description": {
                    "text": "The top of the git repository (outside one, the folder fa-lint ran in)."
                }
            }
        },
        "columnKind": "unicodeCodePoints",
        "results": [
            _result(f, index, fp, paths)
            for f, fp in zip(report.findings, fingerprints(report.findings), strict=True)
        ],
        "properties": {
            "files": [printable(p) for p in report.files],
            "suppressed": report.suppressed,
            "knowledgeBase": knowledge_base(report),
        },
    }
    doc = {"$schema": SCHEMA, "version": "2.1.0", "runs": [run]}
    return unforgeable(compact(json.dumps(doc, indent=2))) + "\n"
