"""What the TOML lockfiles share: ``[[package]]`` tables with a name and an exact version."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from fa_lint.model import Kind, Parsed, ParseProblem, Requirement, normalize
from fa_lint.sources import _reqs, _toml
from fa_lint.sources._toml import TomlDoc


def entries(path: str, text: str, key: str) -> Iterator[tuple[TomlDoc, int, dict[str, Any]] | ParseProblem]:
    doc = _toml.load(path, text)
    if isinstance(doc, ParseProblem):
        yield doc
        return
    yield from packages(doc, key)


def packages(doc: TomlDoc, key: str) -> Iterator[tuple[TomlDoc, int, dict[str, Any]] | ParseProblem]:
    packages = doc.data.get(key, [])
    if not isinstance(packages, list):
        start, end = doc.key_location((key,))
        yield ParseProblem(doc.index.location(start, end), f"{key} must be an array of tables")
        return
    for i, pkg in enumerate(packages):
        if isinstance(pkg, dict) and isinstance(pkg.get("name"), str):
            yield doc, i, pkg


def entry(
    doc: TomlDoc,
    where: tuple[str | int, ...],
    pkg: dict[str, Any],
    source: str,
    tool: str,
    version: str | None = None,
    url: str | None = None,
    scope: str = "lock",
) -> Parsed:
    """One locked package, located at its ``name = ...`` line."""
    start, end = doc.key_location((*where, "name"))
    location = doc.index.location(start, end)
    name = pkg["name"]
    version = version if version is not None else pkg.get("version")
    if isinstance(version, str):
        return _reqs.exact(name, version, location, source, tool=tool, url=url, scope=scope)
    v = _reqs.version_from_url(url) if url else None
    return Requirement(
        normalize(name),
        f"{name} @ {url}" if url else name,
        location,
        source,
        version=v,
        url=url or "",
        kind=Kind.LOCK,
        tool=tool,
        scope=scope,
    )
