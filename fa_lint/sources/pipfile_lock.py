"""Pipfile.lock (JSON): ``default`` and ``develop`` entries with ``==`` versions."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from packaging.version import InvalidVersion, Version

from fa_lint.model import Kind, Location, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import Dropped
from fa_lint.syntax import jsondoc, pep508
from fa_lint.syntax.tables import WrongType, entry_text
from fa_lint.syntax.tables import text as field
from fa_lint.syntax.text import excerpt

NAME = "pipfile.lock"
SECTIONS = {"default": "packages", "develop": "dev-packages"}


def parse(path: str, text: str, dropped: Dropped = lambda name, step, scope: False) -> Iterator[Parsed]:
    doc = jsondoc.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    if not isinstance(doc.data, dict):
        yield ParseProblem(doc.index.location(0, 0), "Pipfile.lock must be a JSON object")
        return
    for section, scope in SECTIONS.items():
        table = doc.data.get(section)
        if not isinstance(table, dict):
            continue
        for name, entry in table.items():
            if isinstance(entry, dict) and dropped(normalize(name), 0, scope) and _unread(entry):
                continue
            where = doc.index.location(*jsondoc.key_span(doc, (section, name)))
            if not isinstance(entry, dict):
                yield ParseProblem(
                    where, f"entry for {excerpt(name)} must be an object", entry_text(name, entry)
                )
                continue
            try:
                yield from _entry(name, entry, where, scope)
            except WrongType as exc:
                bad = doc.index.location(*jsondoc.key_span(doc, (section, name, *exc.path)))
                yield ParseProblem(bad, f"entry for {excerpt(name)}: {exc}", entry_text(name, entry))


def _unread(entry: dict[str, Any]) -> bool:
    """Whether ``_entry`` reads the entry to a pinned requirement or to nothing, never to a problem:
    its fields checked as ``_entry`` checks them, no record built. (An entry with a URL and no pin is
    built: its version is read from the URL.)"""
    try:
        version = field(entry, "version")
        url = field(entry, "ref") if field(entry, "git") else field(entry, "file") or field(entry, "path")
        if version and version.startswith("=="):
            Version(version[2:])  # an invalid one is a problem; a number too long for int() raises here
            return True
    except (WrongType, InvalidVersion):
        return False
    return not url and not field(entry, "git")


def _entry(name: str, entry: dict[str, Any], where: Location, scope: str) -> Iterator[Parsed]:
    version = field(entry, "version")
    git = field(entry, "git")
    url = (
        f"git+{git}@{field(entry, 'ref') or ''}".rstrip("@")
        if git
        else field(entry, "file") or field(entry, "path")
    )
    if version and version.startswith("=="):
        yield pep508.exact(name, version[2:], where, NAME, tool="pipenv", scope=scope)
    elif url:
        yield Requirement(
            normalize(name),
            f"{name} @ {url}",
            where,
            NAME,
            url=url,
            version=pep508.version_from_url(url),
            kind=Kind.LOCK,
            tool="pipenv",
            scope=scope,
        )
