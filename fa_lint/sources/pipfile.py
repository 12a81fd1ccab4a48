"""Pipfile: ``[packages]`` and ``[dev-packages]``, as version strings or tables."""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from fa_lint.model import Parsed, ParseProblem, Requirement, normalize
from fa_lint.syntax import tomldoc
from fa_lint.syntax.tables import get, problem, source_table
from fa_lint.syntax.text import excerpt
from fa_lint.syntax.tomldoc import TomlDoc, TomlPath

NAME = "pipfile"
SECTIONS = {"packages": "packages", "dev-packages": "dev-packages"}


def specifier(text: str) -> SpecifierSet:
    """Pipfile versions are PEP 440 specifiers; "*" is any; a bare version means "=="."""
    text = text.strip()
    if text in ("", "*"):
        return SpecifierSet()
    if re.match(r"^\d", text):
        text = "==" + text
    return SpecifierSet(text)


def parse(path: str, text: str) -> Iterator[Parsed]:
    doc = tomldoc.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    for section, scope in SECTIONS.items():
        table = get(doc.data, (section,))
        if not isinstance(table, dict):
            continue
        for name, value in table.items():
            where = (section, name)
            if isinstance(value, dict) and ({"git", "path", "file", "url"} & value.keys()):
                yield from source_table(doc, where, name, value, scope, NAME)
                continue
            version = value.get("version", "*") if isinstance(value, dict) else value
            markers = value.get("markers") if isinstance(value, dict) else None
            marker = markers if isinstance(markers, str) else None
            yield versioned(doc, where, name, version, NAME, marker=marker, scope=scope)


def versioned(doc: TomlDoc, where: TomlPath, name: str, version: Any, source: str, **fields: Any) -> Parsed:
    """A ``name = "<Pipfile-style specifier>"`` entry (Pipfile, pixi's pypi-dependencies), located
    at its key; a problem with the entry when the version is not a string or not a specifier."""
    if not isinstance(version, str):
        return problem(doc, where, f"version of {excerpt(name)} must be a string", entry=True)
    try:
        spec = specifier(version)
    except InvalidSpecifier:
        message = f"invalid version specifier {excerpt(version)} for {excerpt(name)}"
        return problem(doc, where, message, entry=True)
    start, end = doc.key_location(where)
    location = doc.index.location(start, end)
    return Requirement(normalize(name), f'{name} = "{version}"', location, source, specifier=spec, **fields)
